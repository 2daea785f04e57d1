// Package sse is the one server-sent events helper of the host: every stream the
// host serves (job progress, later RAG answers) formats its events here and ends
// with the same done marker, an event named "done" (SPEC "Endpoints" rule 2).
//
// A stream is opened with Open, which sets the headers and sends the status line;
// events go out with Send, JSON and Comment, and the stream ends with Done. Reader
// parses a stream on the client side, for Go clients and tests.
//
// This package is internal to the host; its API may change with it.
package sse

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// DoneEvent is the name of the event that ends every stream of the host. Its data
// is a JSON object saying how the stream ended (for a job, the final envelope).
const DoneEvent = "done"

// writeTimeout bounds each write, so a client that stops reading cannot hold a
// handler forever; it also lifts a server-wide WriteTimeout for long streams.
const writeTimeout = 30 * time.Second

// Event is one server-sent event.
type Event struct {
	// ID is the event id a client sends back as Last-Event-ID when it reconnects.
	// Empty means the event carries no id line.
	ID string
	// Name is the event type; empty means the default type, "message".
	Name string
	// Data is the payload. It may span several lines; each becomes a data line.
	Data []byte
	// Retry, when positive, tells the client how long to wait before reconnecting.
	Retry time.Duration
}

// Format returns ev in the text/event-stream wire format, ending with the blank
// line that dispatches it. ID and Name must not contain line breaks, and ID must
// not contain NUL (the format cannot carry them).
func Format(ev Event) ([]byte, error) {
	if strings.ContainsAny(ev.ID, "\r\n\x00") {
		return nil, fmt.Errorf("sse: event id %q contains a line break or NUL", ev.ID)
	}
	if strings.ContainsAny(ev.Name, "\r\n") {
		return nil, fmt.Errorf("sse: event name %q contains a line break", ev.Name)
	}
	var b bytes.Buffer
	if ev.ID != "" {
		b.WriteString("id: ")
		b.WriteString(ev.ID)
		b.WriteByte('\n')
	}
	if ev.Name != "" {
		b.WriteString("event: ")
		b.WriteString(ev.Name)
		b.WriteByte('\n')
	}
	if ev.Retry > 0 {
		b.WriteString("retry: ")
		b.WriteString(strconv.FormatInt(ev.Retry.Milliseconds(), 10))
		b.WriteByte('\n')
	}
	// Every line of the payload is its own data line; \r\n and \r count as breaks
	// too, because the client splits on them.
	data := strings.ReplaceAll(strings.ReplaceAll(string(ev.Data), "\r\n", "\n"), "\r", "\n")
	for line := range strings.SplitSeq(data, "\n") {
		b.WriteString("data: ")
		b.WriteString(line)
		b.WriteByte('\n')
	}
	b.WriteByte('\n')
	return b.Bytes(), nil
}

// FormatComment returns a comment line, which clients ignore; streams send one as
// a heartbeat so proxies keep the connection open.
func FormatComment(text string) []byte {
	text = strings.NewReplacer("\r", " ", "\n", " ").Replace(text)
	return []byte(": " + text + "\n\n")
}

// Writer sends events on one HTTP response.
type Writer struct {
	w  http.ResponseWriter
	rc *http.ResponseController
}

// Open starts an event stream on w: it sets the event-stream headers, sends the 200
// status and flushes, so the client sees the stream open at once. It fails when w
// cannot flush, which would hold every event back until the handler returns.
func Open(w http.ResponseWriter) (*Writer, error) {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream; charset=utf-8")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no") // tell nginx-style proxies not to buffer
	h.Set("X-Content-Type-Options", "nosniff")
	sw := &Writer{w: w, rc: http.NewResponseController(w)}
	sw.extendDeadline()
	w.WriteHeader(http.StatusOK)
	if err := sw.rc.Flush(); err != nil {
		return nil, fmt.Errorf("sse: open stream: %w", err)
	}
	return sw, nil
}

// Send writes one event and flushes it to the client.
func (s *Writer) Send(ev Event) error {
	b, err := Format(ev)
	if err != nil {
		return err
	}
	return s.write(b)
}

// JSON sends an event whose data is v encoded as JSON.
func (s *Writer) JSON(name, id string, v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("sse: encode %s event: %w", name, err)
	}
	return s.Send(Event{ID: id, Name: name, Data: data})
}

// Comment sends a comment line; use it as a heartbeat.
func (s *Writer) Comment(text string) error {
	return s.write(FormatComment(text))
}

// Done sends the done marker with v as its JSON data (an empty object when v is
// nil). The handler returns after it; nothing may follow it on the stream.
func (s *Writer) Done(v any) error {
	if v == nil {
		v = struct{}{}
	}
	return s.JSON(DoneEvent, "", v)
}

func (s *Writer) write(b []byte) error {
	s.extendDeadline()
	if _, err := s.w.Write(b); err != nil {
		return fmt.Errorf("sse: write: %w", err)
	}
	if err := s.rc.Flush(); err != nil {
		return fmt.Errorf("sse: flush: %w", err)
	}
	return nil
}

func (s *Writer) extendDeadline() {
	// Not every ResponseWriter supports deadlines (httptest.ResponseRecorder does
	// not); the stream works without one, so the error is not a failure.
	_ = s.rc.SetWriteDeadline(time.Now().Add(writeTimeout))
}

// LastEventID returns the id a reconnecting client sent in the Last-Event-ID
// header, or "" on a first connection. Browsers' EventSource sets it by itself.
func LastEventID(r *http.Request) string {
	return strings.TrimSpace(r.Header.Get("Last-Event-ID"))
}
