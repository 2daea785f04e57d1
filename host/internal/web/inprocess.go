package web

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"

	"github.com/go-chi/chi/v5"
)

// handlerTransport is an http.RoundTripper that answers requests with a handler in
// this process instead of a network connection: the in-process dashboard reaches the
// API this way. The request's RemoteAddr is passed on as the handler's peer address,
// so the API sees the browser's own address and no proxy has to be trusted. The
// response streams: the body is a pipe the handler writes into, and a Flush by the
// handler (an event stream) reaches the reader at once.
type handlerTransport struct {
	handler http.Handler
}

var _ http.RoundTripper = handlerTransport{}

// RoundTrip serves req with the handler. It returns as soon as the handler has
// written its status line; the body follows as the handler writes it.
func (t handlerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	// The dashboard's own router state must not leak into the API's router, which
	// would otherwise resume routing from it.
	in := req.Clone(context.WithValue(req.Context(), chi.RouteCtxKey, (*chi.Context)(nil)))
	in.RequestURI = req.URL.RequestURI()
	in.Host = req.Host
	if in.Host == "" {
		in.Host = req.URL.Host
	}
	if in.Body == nil {
		in.Body = http.NoBody
	}
	if in.RemoteAddr == "" {
		in.RemoteAddr = "127.0.0.1:0"
	}
	in.Proto, in.ProtoMajor, in.ProtoMinor = "HTTP/1.1", 1, 1

	pr, pw := io.Pipe()
	w := &pipeWriter{header: http.Header{}, body: pw, started: make(chan struct{})}
	go func() {
		defer func() {
			if p := recover(); p != nil {
				w.start(http.StatusInternalServerError)
				_ = pw.CloseWithError(fmt.Errorf("web: in-process handler panicked: %v", p))
				return
			}
			w.start(http.StatusOK)
			_ = pw.Close()
		}()
		t.handler.ServeHTTP(w, in)
	}()
	select {
	case <-w.started:
	case <-req.Context().Done():
		_ = pr.CloseWithError(req.Context().Err())
		return nil, req.Context().Err()
	}
	resp := &http.Response{
		Status:        strconv.Itoa(w.status) + " " + http.StatusText(w.status),
		StatusCode:    w.status,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        w.sent,
		Body:          pr,
		ContentLength: -1,
		Request:       req,
	}
	if cl := w.sent.Get("Content-Length"); cl != "" {
		if n, err := strconv.ParseInt(cl, 10, 64); err == nil {
			resp.ContentLength = n
		}
	}
	return resp, nil
}

// pipeWriter is the handler's side of handlerTransport.
type pipeWriter struct {
	header  http.Header
	body    *io.PipeWriter
	once    sync.Once
	started chan struct{}
	status  int
	sent    http.Header
}

func (w *pipeWriter) Header() http.Header { return w.header }

// start fixes the status and the headers the first time it is called.
func (w *pipeWriter) start(status int) {
	w.once.Do(func() {
		w.status = status
		w.sent = w.header.Clone()
		close(w.started)
	})
}

func (w *pipeWriter) WriteHeader(status int) {
	if status >= 100 && status < 200 {
		return // informational answers are not passed on
	}
	w.start(status)
}

func (w *pipeWriter) Write(p []byte) (int, error) {
	w.start(http.StatusOK)
	return w.body.Write(p)
}

// Flush sends the status line; written bytes already reach the reader, since the
// pipe has no buffer.
func (w *pipeWriter) Flush() { w.start(http.StatusOK) }
