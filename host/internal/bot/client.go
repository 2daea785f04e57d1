package bot

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
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

func (c *Client) send(ctx context.Context, user uuid.UUID, method, path string, in any) (*http.Response, error) {
	ref, err := url.Parse(path)
	if err != nil {
		return nil, fmt.Errorf("bot: path %q: %w", path, err)
	}
	var body io.Reader
	if in != nil {
		raw, err := json.Marshal(in)
		if err != nil {
			return nil, fmt.Errorf("bot: encode %s %s: %w", method, path, err)
		}
		body = bytes.NewReader(raw)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base.ResolveReference(ref).String(), body)
	if err != nil {
		return nil, fmt.Errorf("bot: %s %s: %w", method, path, err)
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("X-API-Key", c.key)
	req.Header.Set("X-Owner-User-Id", user.String())
	resp, err := c.http.Do(req)
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
