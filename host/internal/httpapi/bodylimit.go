package httpapi

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/lectern-research/lectern/host/internal/httpx"
)

// MaxRouteBody bounds a request body on every route that declares no larger
// limit in the route table: enough for any JSON request of the API.
const MaxRouteBody = 1 << 20

// Server timeouts (lectern serve and lectern dashboard use them; docs/configuration.md).
const (
	// ReadHeaderTimeout bounds reading a request's headers.
	ReadHeaderTimeout = 10 * time.Second
	// ReadTimeout bounds reading a whole request, body included: 1 MB in a minute
	// is 17 KB/s. Routes that take larger bodies lift it (slowBodyRate).
	ReadTimeout = time.Minute
	// WriteTimeout bounds a response from the end of its request's headers.
	// Event streams extend it on every write (package sse), so a stream lives as
	// long as it keeps sending; a client that stops reading is cut after 30 s.
	WriteTimeout = 2 * time.Minute
	// IdleTimeout bounds a kept-alive connection between requests.
	IdleTimeout = 2 * time.Minute
	// MaxHeaderBytes bounds a request's header block.
	MaxHeaderBytes = 64 << 10
)

// Limits are the bounds of an HTTP server of the host. Production runs with
// DefaultLimits; tests shorten them to watch each bound act on a real connection.
type Limits struct {
	// ReadHeaderTimeout bounds reading a request's headers. Default ReadHeaderTimeout.
	ReadHeaderTimeout time.Duration
	// ReadTimeout bounds reading a whole request, body included. Default ReadTimeout.
	ReadTimeout time.Duration
	// WriteTimeout bounds a response from the end of its request's headers.
	// Default WriteTimeout.
	WriteTimeout time.Duration
	// IdleTimeout bounds a kept-alive connection between requests. Default
	// IdleTimeout.
	IdleTimeout time.Duration
	// MaxHeaderBytes bounds a request's header block. Default MaxHeaderBytes.
	MaxHeaderBytes int
}

// DefaultLimits returns the limits lectern serve and lectern dashboard run with
// (docs/configuration.md, "Server limits").
func DefaultLimits() Limits {
	return Limits{
		ReadHeaderTimeout: ReadHeaderTimeout,
		ReadTimeout:       ReadTimeout,
		WriteTimeout:      WriteTimeout,
		IdleTimeout:       IdleTimeout,
		MaxHeaderBytes:    MaxHeaderBytes,
	}
}

// slowBodyRate is the slowest upload the server waits for on a route with a body
// limit above MaxRouteBody: its read and write deadlines are lifted to the time
// its largest body takes at this rate, plus the usual bounds.
const slowBodyRate = 64 << 10 // bytes per second

// limitBody bounds the request body of one route to max bytes. A body declared
// larger is refused before it is read; a body that turns out larger (chunked) stops
// at the limit, and the handler's answer to the failed read is replaced by the same
// 413. Either way the answer is one sentence: detail, or one naming the limit when
// detail is empty.
func limitBody(max int64, detail string) func(http.Handler) http.Handler {
	if detail == "" {
		detail = fmt.Sprintf("The request body is larger than the %s this route accepts.", byteSize(max))
	}
	tooLarge := &httpx.Error{Status: http.StatusRequestEntityTooLarge, Code: "too_large", Detail: detail}
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.ContentLength > max {
				w.Header().Set("Connection", "close")
				httpx.Err(w, r, tooLarge)
				return
			}
			if max > MaxRouteBody {
				extra := time.Duration(max/slowBodyRate) * time.Second
				rc := http.NewResponseController(w)
				// Not every writer has deadlines (in process, in tests); the route
				// then works under whatever bounds its connection has.
				_ = rc.SetReadDeadline(time.Now().Add(ReadTimeout + extra))
				_ = rc.SetWriteDeadline(time.Now().Add(WriteTimeout + extra))
			}
			if r.Body == nil || r.Body == http.NoBody {
				next.ServeHTTP(w, r)
				return
			}
			body := &limitedBody{ReadCloser: http.MaxBytesReader(w, r.Body, max)}
			r.Body = body
			next.ServeHTTP(&tooLargeWriter{ResponseWriter: w, r: r, body: body, answer: tooLarge}, r)
		})
	}
}

// limitedBody records whether reading went past the limit.
type limitedBody struct {
	io.ReadCloser
	over bool
}

func (b *limitedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		b.over = true
	}
	return n, err
}

// tooLargeWriter answers 413 in place of the handler's error answer once the body
// went past its limit, whatever the handler made of the failed read.
type tooLargeWriter struct {
	http.ResponseWriter
	r        *http.Request
	body     *limitedBody
	answer   *httpx.Error
	wrote    bool
	replaced bool
}

func (w *tooLargeWriter) WriteHeader(status int) {
	if w.wrote {
		return
	}
	w.wrote = true
	if w.body.over && status >= 400 && status != http.StatusRequestEntityTooLarge {
		w.replaced = true
		h := w.ResponseWriter.Header()
		h.Del("Content-Length")
		h.Del("Content-Encoding")
		httpx.Err(w.ResponseWriter, w.r, w.answer)
		return
	}
	w.ResponseWriter.WriteHeader(status)
}

func (w *tooLargeWriter) Write(p []byte) (int, error) {
	if !w.wrote {
		w.WriteHeader(http.StatusOK)
	}
	if w.replaced {
		return len(p), nil
	}
	return w.ResponseWriter.Write(p)
}

// Unwrap lets http.ResponseController reach the connection (flush, deadlines).
func (w *tooLargeWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// Flush passes a flush on, for handlers that assert http.Flusher.
func (w *tooLargeWriter) Flush() {
	if !w.wrote {
		w.WriteHeader(http.StatusOK)
	}
	if f, ok := w.ResponseWriter.(http.Flusher); ok && !w.replaced {
		f.Flush()
	}
}

// byteSize writes n bytes for people: "1 MB", "51 MB", "64 KB".
func byteSize(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MB", n>>20)
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%d KB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}
