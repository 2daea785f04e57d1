package web

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"
)

// sessionCookie is the API's session cookie (SPEC "Authentication"); the dashboard
// forwards it and never keeps one of its own.
const sessionCookie = "service_session"

// apiError is an answer of the API that is not a success, or a failure to reach it.
type apiError struct {
	// Status is the HTTP status; 0 when the API could not be reached.
	Status int
	// Code is the API's error code (docs/api-errors.md), or "unreachable".
	Code string
	// Detail is the API's sentence for people. Never raw exception text: the
	// "exception" field of a development API is not read.
	Detail string
	// Fields names the rejected inputs.
	Fields []fieldError
	// RequestID is the API's request id, for the log.
	RequestID string
	// Cause is the transport error behind an unreachable API; logged only.
	Cause error
	// Location is where a redirect answer (3xx) points.
	Location string
}

type fieldError struct {
	Field   string `json:"field"`
	Message string `json:"message"`
}

func (e *apiError) Error() string {
	if e.Cause != nil {
		return fmt.Sprintf("api %d %s: %s: %v", e.Status, e.Code, e.Detail, e.Cause)
	}
	return fmt.Sprintf("api %d %s: %s", e.Status, e.Code, e.Detail)
}

func (e *apiError) Unwrap() error { return e.Cause }

// isStatus reports whether err is an API answer with status code.
func isStatus(err error, code int) bool {
	var ae *apiError
	return errors.As(err, &ae) && ae.Status == code
}

// mergedInto returns the id of the paper an API answer (a 308 paper_merged) says a
// paper was merged into.
func mergedInto(err error) (string, bool) {
	var ae *apiError
	if !errors.As(err, &ae) || ae.Code != "paper_merged" {
		return "", false
	}
	id, ok := strings.CutPrefix(ae.Location, "/api/papers/")
	return id, ok && id != "" && !strings.ContainsAny(id, "/?#")
}

// isCode reports whether err is an API answer with the error code.
func isCode(err error, code string) bool {
	var ae *apiError
	return errors.As(err, &ae) && ae.Code == code
}

// apiClient reaches the API: over the network, or in process through
// handlerTransport.
type apiClient struct {
	base   *url.URL
	client *http.Client
	// inProcess is set when rt is the API's own handler: the API then sees the
	// browser's peer address itself, and the forwarding headers go on unchanged.
	inProcess bool
}

func newAPIClient(base *url.URL, rt http.RoundTripper) *apiClient {
	_, inProcess := rt.(handlerTransport)
	return &apiClient{base: base, inProcess: inProcess, client: &http.Client{
		Transport: rt,
		// The API's redirects (a verified sign-in link) are the browser's to follow.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
}

// caller calls the API on behalf of one browser request: it forwards the session
// cookie and the browser's address, and hands any cookie the API sets on to the
// browser's response.
type caller struct {
	api *apiClient
	w   http.ResponseWriter
	r   *http.Request
	// session is the session cookie value in force: the browser's, or the one the
	// API has just set during this request (onboarding signs in mid-flow).
	session string
}

func (c *apiClient) caller(w http.ResponseWriter, r *http.Request) *caller {
	cl := &caller{api: c, w: w, r: r}
	if ck, err := r.Cookie(sessionCookie); err == nil {
		cl.session = ck.Value
	}
	return cl
}

// timeoutPlain bounds every call that is not a stream.
const timeoutPlain = 60 * time.Second

// request builds a request to the API at path (which may carry a query).
func (c *caller) request(ctx context.Context, method, path string, body io.Reader, contentType string) (*http.Request, error) {
	u, err := c.api.base.Parse(strings.TrimPrefix(path, "/"))
	if err != nil {
		return nil, fmt.Errorf("web: api path %q: %w", path, err)
	}
	req, err := http.NewRequestWithContext(ctx, method, u.String(), body)
	if err != nil {
		return nil, fmt.Errorf("web: api request: %w", err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	req.Header.Set("Accept", "application/json")
	if c.session != "" {
		req.AddCookie(&http.Cookie{Name: sessionCookie, Value: c.session})
	}
	if ua := c.r.UserAgent(); ua != "" {
		req.Header.Set("User-Agent", ua)
	}
	if id := c.r.Header.Get("X-Request-Id"); id != "" {
		req.Header.Set("X-Request-Id", id)
	}
	if c.api.inProcess {
		// In process, the API sees the browser's own address as its peer, and the
		// forwarding headers exactly as the browser's request brought them, so it
		// applies TRUSTED_PROXY_HOSTS as if the browser had called it.
		req.RemoteAddr = c.r.RemoteAddr
		if v := c.r.Header.Values("X-Forwarded-For"); len(v) > 0 {
			req.Header["X-Forwarded-For"] = slices.Clone(v)
		}
	} else {
		setForwarded(req, c.r)
	}
	return req, nil
}

// setForwarded names the browser in the X-Forwarded-* headers the way a reverse
// proxy does (httputil.ProxyRequest.SetXForwarded after copying the incoming
// header): the browser's peer address is appended to the X-Forwarded-For the
// request came with. The API reads the chain from the right and stops at the first
// hop it does not trust, so a forged left end changes nothing, while a proxy in
// front of the dashboard (whose address is the peer here) still passes on the real
// browser's address instead of every browser looking like that proxy.
func setForwarded(out *http.Request, in *http.Request) {
	prior := strings.Join(in.Header.Values("X-Forwarded-For"), ", ")
	host, _, err := net.SplitHostPort(in.RemoteAddr)
	switch {
	case err != nil && prior == "":
		out.Header.Del("X-Forwarded-For")
	case err != nil:
		// A peer without an address cannot be named; "unknown" is a hop the API
		// cannot parse, so it trusts nothing left of it.
		out.Header.Set("X-Forwarded-For", prior+", unknown")
	case prior == "":
		out.Header.Set("X-Forwarded-For", host)
	default:
		out.Header.Set("X-Forwarded-For", prior+", "+host)
	}
	out.Header.Set("X-Forwarded-Host", in.Host)
	if in.TLS != nil {
		out.Header.Set("X-Forwarded-Proto", "https")
	} else {
		out.Header.Set("X-Forwarded-Proto", "http")
	}
}

// send runs req and relays a session cookie the API set. The caller closes the
// body of a successful answer; an error answer is read and returned as *apiError.
func (c *caller) send(req *http.Request) (*http.Response, error) {
	resp, err := c.api.client.Do(req)
	if err != nil {
		if c.r.Context().Err() != nil {
			return nil, c.r.Context().Err()
		}
		return nil, &apiError{Code: "unreachable", Detail: "The Lectern API did not answer.", Cause: err}
	}
	c.relayCookies(resp)
	if resp.StatusCode >= 300 {
		// The API answers a redirect only where a resource moved (a merged
		// paper): the page decides where the browser goes.
		defer resp.Body.Close()
		return nil, readError(resp)
	}
	return resp, nil
}

// relayCookies passes the session cookie the API set on to the browser, and uses it
// for the rest of this request.
func (c *caller) relayCookies(resp *http.Response) {
	for _, ck := range resp.Cookies() {
		if ck.Name != sessionCookie {
			continue
		}
		c.w.Header().Add("Set-Cookie", ck.String())
		if ck.MaxAge < 0 || ck.Value == "" {
			c.session = ""
		} else {
			c.session = ck.Value
		}
	}
}

func readError(resp *http.Response) error {
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	var body struct {
		Code      string       `json:"code"`
		Detail    string       `json:"detail"`
		RequestID string       `json:"request_id"`
		Fields    []fieldError `json:"fields"`
	}
	ae := &apiError{Status: resp.StatusCode}
	if json.Unmarshal(raw, &body) == nil && body.Code != "" {
		ae.Code, ae.Detail, ae.RequestID, ae.Fields = body.Code, body.Detail, body.RequestID, body.Fields
	} else {
		ae.Code = "http_" + fmt.Sprint(resp.StatusCode)
	}
	if ae.RequestID == "" {
		ae.RequestID = resp.Header.Get("X-Request-Id")
	}
	ae.Location = resp.Header.Get("Location")
	return ae
}

// do calls the API with a JSON body (nil for none) and decodes a JSON answer into
// out (nil to drop it).
func (c *caller) do(method, path string, body, out any) error {
	return c.doHeaders(method, path, body, out, nil)
}

func (c *caller) doHeaders(method, path string, body, out any, headers http.Header) error {
	ctx, cancel := context.WithTimeout(c.r.Context(), timeoutPlain)
	defer cancel()
	var rd io.Reader
	ct := ""
	if body != nil {
		raw, err := json.Marshal(body)
		if err != nil {
			return fmt.Errorf("web: encode api body: %w", err)
		}
		rd, ct = bytes.NewReader(raw), "application/json"
	}
	req, err := c.request(ctx, method, path, rd, ct)
	if err != nil {
		return err
	}
	for k, vs := range headers {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	resp, err := c.send(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if out == nil || resp.StatusCode == http.StatusNoContent {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
		return nil
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return fmt.Errorf("web: decode api answer of %s %s: %w", method, path, err)
	}
	return nil
}

// get is do with GET.
func (c *caller) get(path string, out any) error { return c.do(http.MethodGet, path, nil, out) }

// stream opens a streaming call (server-sent events); the caller closes the body.
func (c *caller) stream(method, path string, body any) (*http.Response, error) {
	var rd io.Reader
	ct := ""
	if body != nil {
		raw, err := json.Marshal(body)
		if err != nil {
			return nil, fmt.Errorf("web: encode api body: %w", err)
		}
		rd, ct = bytes.NewReader(raw), "application/json"
	}
	req, err := c.request(c.r.Context(), method, path, rd, ct)
	if err != nil {
		return nil, err
	}
	// The page is written when the whole stream has been read, which may outlast
	// the server's WriteTimeout.
	_ = http.NewResponseController(c.w).SetWriteDeadline(time.Now().Add(longCall))
	req.Header.Set("Accept", "text/event-stream")
	return c.send(req)
}

// raw forwards a body as it is (a multipart upload) and decodes the JSON answer.
func (c *caller) raw(method, path string, body io.Reader, contentType string, out any) error {
	ctx, cancel := context.WithTimeout(c.r.Context(), longCall)
	defer cancel()
	// The browser's body is read while it is forwarded: give it the same time.
	rc := http.NewResponseController(c.w)
	_ = rc.SetReadDeadline(time.Now().Add(longCall))
	_ = rc.SetWriteDeadline(time.Now().Add(longCall + time.Minute))
	req, err := c.request(ctx, method, path, body, contentType)
	if err != nil {
		return err
	}
	resp, err := c.send(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if out == nil {
		return nil
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return fmt.Errorf("web: decode api answer of %s %s: %w", method, path, err)
	}
	return nil
}

// download opens a GET whose answer is a file to pass on to the browser (an
// export); the caller closes the body. An error answer is an *apiError.
func (c *caller) download(path string) (*http.Response, error) {
	req, err := c.request(c.r.Context(), http.MethodGet, path, nil, "")
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "*/*")
	_ = http.NewResponseController(c.w).SetWriteDeadline(time.Now().Add(longCall))
	return c.send(req)
}

// q builds a query string from pairs, skipping empty values.
func q(pairs ...string) string {
	v := url.Values{}
	for i := 0; i+1 < len(pairs); i += 2 {
		if pairs[i+1] != "" {
			v.Set(pairs[i], pairs[i+1])
		}
	}
	if len(v) == 0 {
		return ""
	}
	return "?" + v.Encode()
}
