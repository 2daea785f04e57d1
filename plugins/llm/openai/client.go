package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/lectern-research/lectern/sdk/protocol"
	"github.com/lectern-research/lectern/sdk/sourcehttp"
)

// Bounds of what the plugin reads from one answer.
const (
	// maxBody bounds a whole JSON answer (256 embeddings of 3072 floats are
	// about 16 MB of JSON).
	maxBody = 64 << 20
	// maxErrorBody bounds the body of a refused request.
	maxErrorBody = 64 << 10
	// maxMessage bounds the upstream message quoted in an error.
	maxMessage = 300
)

// request is one upstream call.
type request struct {
	// method is the HTTP method.
	method string
	// path is appended to the base URL: "/chat/completions".
	path string
	// label names the call in errors and logs: "chat completions". Never a URL.
	label string
	// body is sent with every attempt; nil for none.
	body []byte
	// stream asks for a server-sent event stream.
	stream bool
}

// errAttemptTimeout is the cause with which an attempt's context ends when the
// timeout setting passes without progress.
var errAttemptTimeout = errors.New("attempt timed out")

// attempt is one try of a request. Its context ends when the caller's does, when
// end is called, or when timeout passes without a call to touch.
type attempt struct {
	ctx     context.Context
	cancel  context.CancelCauseFunc
	timer   *time.Timer
	timeout time.Duration
}

func newAttempt(parent context.Context, timeout time.Duration) *attempt {
	ctx, cancel := context.WithCancelCause(parent)
	a := &attempt{ctx: ctx, cancel: cancel, timeout: timeout}
	a.timer = time.AfterFunc(timeout, func() { cancel(errAttemptTimeout) })
	return a
}

// touch restarts the timeout: a streamed answer made progress.
func (a *attempt) touch() { a.timer.Reset(a.timeout) }

// end releases the attempt; the answer's body can no longer be read.
func (a *attempt) end() {
	a.timer.Stop()
	a.cancel(nil)
}

// timedOut reports whether the attempt ended because of its timeout.
func (a *attempt) timedOut() bool { return errors.Is(context.Cause(a.ctx), errAttemptTimeout) }

// readError maps an error met while reading an accepted answer: the caller's
// context error when the caller left, Unavailable otherwise.
func (a *attempt) readError(ctx context.Context, label string, err error) error {
	if ctxErr := ctx.Err(); ctxErr != nil {
		return ctxErr
	}
	if a.timedOut() {
		return protocol.Unavailable(err, "%s: no data for %s", label, a.timeout)
	}
	return protocol.Unavailable(err, "%s: reading the answer failed: %v", label, stripURL(err))
}

// do sends r and returns the first accepted (2xx) answer, retrying 408, 409, 429
// and 5xx answers and network failures up to max_retries times. A wait comes from
// the answer's retry-after-ms or Retry-After header, else from an exponential
// backoff with jitter; a Retry-After longer than max_backoff ends the call at once.
// The caller reads the answer's body and then calls attempt.end. do fails with
// ctx.Err() when ctx ends, and otherwise with a protocol error.
func (o *OpenAI) do(ctx context.Context, c *call, r *request) (*http.Response, *attempt, error) {
	for n := 0; ; n++ {
		if err := ctx.Err(); err != nil {
			return nil, nil, err
		}
		a := newAttempt(ctx, c.s.timeout)
		res, err := o.send(a.ctx, c, r)
		var (
			fail  error
			retry = true
			wait  time.Duration
		)
		switch {
		case errors.Is(err, errBuild):
			a.end()
			return nil, nil, protocol.BadRequest("%s: %v", r.label, err)
		case err != nil && egressRefusal(err) != "":
			a.end()
			return nil, nil, &protocol.Error{Code: protocol.CodeBadRequest, Cause: err,
				Message: fmt.Sprintf("%s: %s", r.label, egressRefusal(err))}
		case err != nil:
			timedOut := a.timedOut()
			a.end()
			if ctxErr := ctx.Err(); ctxErr != nil {
				return nil, nil, ctxErr
			}
			if timedOut {
				fail = protocol.Unavailable(err, "%s: no answer within %s", r.label, c.s.timeout)
			} else {
				fail = protocol.Unavailable(err, "%s: request failed: %v", r.label, err)
			}
		case res.StatusCode >= 200 && res.StatusCode < 300:
			return res, a, nil
		default:
			body, _ := io.ReadAll(io.LimitReader(res.Body, maxErrorBody))
			_ = res.Body.Close()
			a.end()
			if ctxErr := ctx.Err(); ctxErr != nil {
				return nil, nil, ctxErr
			}
			wait = retryAfter(res.Header, time.Now())
			fail, retry = statusError(r.label, res.StatusCode, parseAPIError(body), c.apiKey)
			if pe, ok := fail.(*protocol.Error); ok && pe.Code == protocol.CodeRateLimited {
				pe.RetryAfter = wait
			}
		}
		if !retry || n >= c.s.maxRetries || wait > c.s.maxBackoff {
			return nil, nil, fail
		}
		if wait <= 0 {
			wait = sourcehttp.Backoff(c.s.backoff, c.s.maxBackoff, n)
		}
		o.log.DebugContext(ctx, "retrying", "call", r.label, "retry", n+1, "wait", wait.String(), "error", fail.Error())
		if err := sourcehttp.Sleep(ctx, wait); err != nil {
			return nil, nil, err
		}
	}
}

// errBuild marks a request that cannot be built; it is never retried.
var errBuild = errors.New("cannot build the request")

// send runs one attempt up to the answer's headers. Errors never hold the URL.
func (o *OpenAI) send(ctx context.Context, c *call, r *request) (*http.Response, error) {
	var body io.Reader
	if r.body != nil {
		body = bytes.NewReader(r.body)
	}
	req, err := http.NewRequestWithContext(withDialPolicy(ctx, c.dialPolicy()), r.method, c.baseURL+r.path, body)
	if err != nil {
		return nil, errBuild
	}
	req.Header.Set("User-Agent", "lectern-openai/"+version)
	if r.body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if r.stream {
		req.Header.Set("Accept", "text/event-stream")
	} else {
		req.Header.Set("Accept", "application/json")
	}
	if c.apiKey != "" {
		req.Header.Set("Authorization", "Bearer "+c.apiKey)
	}
	res, err := o.http.Do(req)
	if err != nil {
		return nil, stripURL(err)
	}
	return res, nil
}

// getJSON runs r and decodes its whole answer into into. An answer that is an
// error object despite its 2xx status becomes that error.
func (o *OpenAI) getJSON(ctx context.Context, c *call, r *request, into any) error {
	res, a, err := o.do(ctx, c, r)
	if err != nil {
		return err
	}
	defer a.end()
	defer res.Body.Close()
	body, err := io.ReadAll(io.LimitReader(res.Body, maxBody))
	if err != nil {
		return a.readError(ctx, r.label, err)
	}
	if e := parseAPIError(body); e.present {
		fail, _ := statusError(r.label, e.status(), e, c.apiKey)
		return fail
	}
	if err := json.Unmarshal(body, into); err != nil {
		return protocol.Unavailable(err, "%s: unreadable answer: %v", r.label, err)
	}
	return nil
}

// apiError is an upstream error object. OpenAI, Ollama, llama.cpp and LiteLLM
// answer {"error": {"message", "type", "param", "code"}} (code a string or a
// number); vLLM answers {"object": "error", "message", "type", "code"}; Google
// wraps the object in a one-element array; some servers send {"error": "text"}.
type apiError struct {
	// present is true when the body was an error object at all.
	present bool
	message string
	typ     string
	code    string
}

// status is the HTTP status an error object names in its code (llama.cpp,
// LiteLLM and vLLM put one there), else 0.
func (e apiError) status() int {
	n, err := strconv.Atoi(e.code)
	if err != nil || n < 100 || n > 599 {
		return 0
	}
	return n
}

type errorFields struct {
	Message string          `json:"message"`
	Type    string          `json:"type"`
	Code    json.RawMessage `json:"code"`
}

// parseAPIError reads an error object; apiError.present is false when body is
// none, and message then holds a snippet of body for the error message.
func parseAPIError(body []byte) apiError {
	body = bytes.TrimSpace(body)
	if len(body) > 0 && body[0] == '[' {
		var arr []json.RawMessage
		if json.Unmarshal(body, &arr) == nil && len(arr) > 0 {
			body = bytes.TrimSpace(arr[0])
		}
	}
	var env struct {
		Error json.RawMessage `json:"error"`
		errorFields
		Object string `json:"object"`
	}
	if json.Unmarshal(body, &env) == nil {
		var f errorFields
		var text string
		switch {
		case len(env.Error) > 0 && json.Unmarshal(env.Error, &f) == nil && f.Message != "":
			return apiError{present: true, message: f.Message, typ: f.Type, code: rawCode(f.Code)}
		case len(env.Error) > 0 && json.Unmarshal(env.Error, &text) == nil && text != "":
			return apiError{present: true, message: text}
		case env.Object == "error":
			return apiError{present: true, message: env.Message, typ: env.Type, code: rawCode(env.Code)}
		}
	}
	return apiError{message: string(body)}
}

// rawCode renders a code given as a string or a number.
func rawCode(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var n json.Number
	if json.Unmarshal(raw, &n) == nil {
		return n.String()
	}
	return ""
}

// statusError maps a refused request to a protocol error, and says whether it is
// worth retrying. status 0 (an error object inside a stream) is classified by the
// object's type and code instead. The upstream message is quoted without the key.
func statusError(label string, status int, e apiError, apiKey string) (error, bool) {
	if status == 0 {
		status = e.status()
	}
	if status == 0 {
		status = statusOfType(e)
	}
	msg := sanitize(e.message, apiKey)
	if msg == "" {
		msg = http.StatusText(status)
	}
	quota := e.code == "insufficient_quota" || e.typ == "insufficient_quota"
	switch {
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return protocol.Unauthorized("%s: upstream refused the credentials (HTTP %d): %s", label, status, msg), false
	case status == http.StatusTooManyRequests && quota:
		return protocol.RateLimited(0, "%s: upstream quota exhausted (HTTP 429): %s", label, msg), false
	case status == http.StatusTooManyRequests:
		return protocol.RateLimited(0, "%s: rate limited (HTTP 429): %s", label, msg), true
	case status == http.StatusRequestTimeout || status == http.StatusConflict || status >= 500:
		return protocol.Unavailable(nil, "%s: upstream failed (HTTP %d): %s", label, status, msg), true
	case status >= 400:
		return &protocol.Error{Code: protocol.CodeBadRequest, Cause: statusCause(status),
			Message: fmt.Sprintf("%s: upstream refused the request (HTTP %d): %s", label, status, msg)}, false
	}
	return protocol.Unavailable(nil, "%s: unexpected HTTP %d: %s", label, status, msg), false
}

// statusOfType guesses the status of an error object that names none, from its
// OpenAI error type or code.
func statusOfType(e apiError) int {
	switch {
	case e.typ == "invalid_request_error" || e.typ == "not_found_error":
		return http.StatusBadRequest
	case e.typ == "authentication_error" || e.code == "invalid_api_key":
		return http.StatusUnauthorized
	case e.typ == "permission_error" || e.typ == "permission_denied":
		return http.StatusForbidden
	case e.typ == "rate_limit_error" || e.code == "rate_limit_exceeded" ||
		e.typ == "insufficient_quota" || e.code == "insufficient_quota":
		return http.StatusTooManyRequests
	}
	return http.StatusBadGateway
}

// statusCause records the upstream status of a BadRequest, so that Models can
// tell an endpoint without /models (404) from other refusals.
type statusCause int

func (s statusCause) Error() string { return "HTTP " + strconv.Itoa(int(s)) }

// upstreamStatus returns the HTTP status recorded in err, else 0.
func upstreamStatus(err error) int {
	var s statusCause
	if errors.As(err, &s) {
		return int(s)
	}
	return 0
}

// keyLike matches API keys that upstream messages quote (OpenAI and Anthropic
// "sk-…", masked or not; Google "AIza…").
var keyLike = regexp.MustCompile(`sk-[A-Za-z0-9_\-*]{3,}|AIza[A-Za-z0-9_\-]{8,}`)

var spaces = regexp.MustCompile(`\s+`)

// sanitize prepares an upstream message for an error: the key and anything that
// looks like a key are replaced, whitespace collapsed, length bounded.
func sanitize(msg, apiKey string) string {
	if apiKey != "" {
		msg = strings.ReplaceAll(msg, apiKey, "[redacted]")
	}
	msg = keyLike.ReplaceAllString(msg, "[redacted]")
	msg = strings.TrimSpace(spaces.ReplaceAllString(msg, " "))
	if r := []rune(msg); len(r) > maxMessage {
		msg = string(r[:maxMessage]) + "…"
	}
	return msg
}

// retryAfter reads the wait an answer asks for: OpenAI's retry-after-ms
// (milliseconds), else Retry-After (seconds or an HTTP date); 0 when neither.
func retryAfter(h http.Header, now time.Time) time.Duration {
	if v := strings.TrimSpace(h.Get("retry-after-ms")); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms > 0 {
			return time.Duration(ms * float64(time.Millisecond))
		}
	}
	return sourcehttp.RetryAfter(h, now)
}

// stripURL drops the *url.Error wrapper, whose message holds the request URL.
func stripURL(err error) error {
	var uerr *url.Error
	if errors.As(err, &uerr) {
		return uerr.Err
	}
	return err
}
