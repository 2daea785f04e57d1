package bot

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/google/uuid"
)

// ErrUnreachable means the API could not be reached, or answered with a server
// error: the command is not acted on, and the chat is told "Lectern is not
// reachable".
var ErrUnreachable = errors.New("bot: the API is not reachable")

// APIError is an answer of the API that refused a call (4xx): Detail is the
// API's sentence for people, Code its stable code (docs/api-errors.md).
type APIError struct {
	Status int
	Code   string
	Detail string
}

func (e *APIError) Error() string {
	return fmt.Sprintf("bot: API answered %d %s: %s", e.Status, e.Code, e.Detail)
}

// IsStatus reports whether err is an APIError with the given status.
func IsStatus(err error, status int) bool {
	var ae *APIError
	return errors.As(err, &ae) && ae.Status == status
}

// Client calls the API for paired users. It is safe for concurrent use.
type Client struct {
	base *url.URL
	key  string
	http *http.Client
}

// NewClient returns a client of the API at base (an absolute http or https URL)
// that sends key as X-API-Key. hc may be nil: then a client with a 60 s timeout.
func NewClient(base *url.URL, key string, hc *http.Client) *Client {
	if hc == nil {
		hc = &http.Client{Timeout: 60 * time.Second}
	}
	return &Client{base: base, key: key, http: hc}
}

// Do calls method path (with its query) as user: in is sent as JSON when not nil,
// a 2xx answer is decoded into out when out is not nil. A 4xx answer is an
// *APIError; a network failure or a 5xx is ErrUnreachable (wrapped).
func (c *Client) Do(ctx context.Context, user uuid.UUID, method, path string, in, out any) error {
	resp, err := c.send(ctx, user, method, path, in)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if out == nil {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
		return nil
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 8<<20)).Decode(out); err != nil {
		return fmt.Errorf("%w: read %s %s: %w", ErrUnreachable, method, path, err)
	}
	return nil
}

// Stream calls method path as user and returns the open body of a 2xx answer
// (server-sent events); the caller closes it. Errors as Do.
func (c *Client) Stream(ctx context.Context, user uuid.UUID, method, path string, in any) (io.ReadCloser, error) {
	resp, err := c.send(ctx, user, method, path, in)
	if err != nil {
		return nil, err
	}
	return resp.Body, nil
}

// uploadTimeout bounds an upload: a PDF of 50 MB read from a messenger at
// 200 kB/s.
const uploadTimeout = 5 * time.Minute

// SourceError is an upload whose bytes could not be had: Err is what the
// upload's writer returned. The API keeps nothing of an upload cut short.
type SourceError struct{ Err error }

func (e *SourceError) Error() string { return "bot: the upload's source failed: " + e.Err.Error() }

func (e *SourceError) Unwrap() error { return e.Err }

// Upload sends a PDF as user's upload (POST /api/papers/upload, multipart field
// "file" named filename) and decodes the answer into out. write writes the PDF's
// bytes as they come: they are streamed to the API, never held whole. When write
// fails, the upload is cut short and the error is a *SourceError; otherwise
// errors are as Do's.
func (c *Client) Upload(ctx context.Context, user uuid.UUID, filename string, write func(io.Writer) error, out any) error {
	const method, path = http.MethodPost, "/api/papers/upload"
	pr, pw := io.Pipe()
	mw := multipart.NewWriter(pw)
	var writeErr error
	written := make(chan struct{})
	go func() {
		defer close(written)
		fw, err := mw.CreateFormFile("file", filename)
		if err == nil {
			if err = write(fw); err != nil {
				writeErr = err
			}
		}
		if err == nil {
			err = mw.Close()
		}
		pw.CloseWithError(err)
	}()
	// The PDF arrives as the messenger sends it, so the upload may take longer
	// than an ordinary call: it gets uploadTimeout instead of the client's own.
	hc := *c.http
	hc.Timeout = max(hc.Timeout, uploadTimeout)
	resp, err := c.sendBody(ctx, &hc, user, method, path, pr, mw.FormDataContentType())
	// The API may answer before it has read everything (a refusal): the writer
	// then fails on the closed pipe, which is not the source's fault.
	_ = pr.Close()
	<-written
	if writeErr != nil && !errors.Is(writeErr, io.ErrClosedPipe) {
		if resp != nil {
			_ = resp.Body.Close()
		}
		return &SourceError{Err: writeErr}
	}
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(out); err != nil {
		return fmt.Errorf("%w: read %s %s: %w", ErrUnreachable, method, path, err)
	}
	return nil
}

func (c *Client) send(ctx context.Context, user uuid.UUID, method, path string, in any) (*http.Response, error) {
	if in == nil {
		return c.sendBody(ctx, c.http, user, method, path, nil, "")
	}
	raw, err := json.Marshal(in)
	if err != nil {
		return nil, fmt.Errorf("bot: encode %s %s: %w", method, path, err)
	}
	return c.sendBody(ctx, c.http, user, method, path, bytes.NewReader(raw), "application/json")
}

// sendBody calls method path as user through hc with body of contentType (none
// when body is nil) and returns a 2xx or 3xx answer open; other answers are
// errors as Do's.
func (c *Client) sendBody(ctx context.Context, hc *http.Client, user uuid.UUID, method, path string, body io.Reader, contentType string) (*http.Response, error) {
	ref, err := url.Parse(path)
	if err != nil {
		return nil, fmt.Errorf("bot: path %q: %w", path, err)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base.ResolveReference(ref).String(), body)
	if err != nil {
		return nil, fmt.Errorf("bot: %s %s: %w", method, path, err)
	}
	if body != nil {
		req.Header.Set("Content-Type", contentType)
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("X-API-Key", c.key)
	req.Header.Set("X-Owner-User-Id", user.String())
	resp, err := hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%w: %s %s: %w", ErrUnreachable, method, path, err)
	}
	if resp.StatusCode < 400 {
		return resp, nil
	}
	defer resp.Body.Close()
	var e struct {
		Code   string `json:"code"`
		Detail string `json:"detail"`
	}
	_ = json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&e)
	if resp.StatusCode >= 500 && (e.Detail == "" || resp.StatusCode == http.StatusInternalServerError) {
		// Not an answer of the API (a proxy's), or its failure: nothing to tell.
		return nil, fmt.Errorf("%w: %s %s answered %d", ErrUnreachable, method, path, resp.StatusCode)
	}
	return nil, &APIError{Status: resp.StatusCode, Code: e.Code, Detail: strings.TrimSpace(e.Detail)}
}
