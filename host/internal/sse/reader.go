package sse

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"
)

// maxLine bounds one line of a stream a Reader accepts, and maxEvent the data of
// one event, however many lines carry it (without it, data lines that never
// reached a blank line grew the event without end).
const (
	maxLine  = 1 << 20
	maxEvent = 8 << 20
)

// Reader parses a text/event-stream body into events, following the WHATWG
// event-stream interpretation rules: comments are skipped, several data lines join
// with newlines, and the id persists from one event to the next until another id
// line changes it.
type Reader struct {
	sc          *bufio.Scanner
	lastEventID string
}

// NewReader returns a Reader on r.
func NewReader(r io.Reader) *Reader {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), maxLine)
	sc.Split(scanLines)
	return &Reader{sc: sc}
}

// Next returns the next dispatched event. Its ID is the last event id seen on the
// stream so far, as a browser reports it. At the end of the stream it returns
// io.EOF; an event not ended by a blank line is dropped, as the format requires.
func (r *Reader) Next() (Event, error) {
	var (
		ev      Event
		data    bytes.Buffer
		hasData bool
	)
	for r.sc.Scan() {
		line := r.sc.Text()
		if line == "" {
			if !hasData {
				ev = Event{}
				continue
			}
			ev.ID = r.lastEventID
			ev.Data = bytes.TrimSuffix(data.Bytes(), []byte("\n"))
			return ev, nil
		}
		if strings.HasPrefix(line, ":") {
			continue
		}
		field, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		switch field {
		case "event":
			ev.Name = value
		case "data":
			if data.Len()+len(value)+1 > maxEvent {
				return Event{}, fmt.Errorf("sse: an event is larger than %d MB", maxEvent>>20)
			}
			hasData = true
			data.WriteString(value)
			data.WriteByte('\n')
		case "id":
			if !strings.Contains(value, "\x00") {
				r.lastEventID = value
			}
		case "retry":
			// A retry past what a time.Duration holds (292 years) is ignored: it
			// once overflowed into a negative wait.
			if ms, err := strconv.ParseInt(value, 10, 64); err == nil && ms >= 0 && ms <= math.MaxInt64/int64(time.Millisecond) {
				ev.Retry = time.Duration(ms) * time.Millisecond
			}
		}
	}
	if err := r.sc.Err(); err != nil {
		return Event{}, fmt.Errorf("sse: read stream: %w", err)
	}
	return Event{}, io.EOF
}

// LastEventID is the id a client would send as Last-Event-ID if it reconnected now.
func (r *Reader) LastEventID() string { return r.lastEventID }

// scanLines splits on \n, \r\n or a lone \r, the three line ends the format allows.
func scanLines(data []byte, atEOF bool) (advance int, token []byte, err error) {
	if atEOF && len(data) == 0 {
		return 0, nil, nil
	}
	if i := bytes.IndexAny(data, "\r\n"); i >= 0 {
		if data[i] == '\n' {
			return i + 1, data[:i], nil
		}
		// A \r: it may be the first half of \r\n, which needs one more byte to tell.
		if i+1 < len(data) {
			if data[i+1] == '\n' {
				return i + 2, data[:i], nil
			}
			return i + 1, data[:i], nil
		}
		if atEOF {
			return i + 1, data[:i], nil
		}
		return 0, nil, nil
	}
	if atEOF {
		return len(data), data, nil
	}
	return 0, nil, nil
}
