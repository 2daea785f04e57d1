package main

import (
	"bufio"
	"bytes"
	"errors"
	"io"
)

// maxEvent bounds one server-sent event.
const maxEvent = 8 << 20

// errEventTooLarge is returned for an event longer than maxEvent.
var errEventTooLarge = errors.New("server-sent event too large")

// sseReader reads the data of server-sent events: "data:" lines (the space after
// the colon optional) up to a blank line make one event, several data lines are
// joined with newlines, comment lines (":") and other fields are skipped. An event
// cut off by the end of the stream is still returned.
type sseReader struct {
	r *bufio.Reader
	// progress is called after every line read.
	progress func()
}

// next returns the data of the next event, or io.EOF after the last one.
func (s *sseReader) next() ([]byte, error) {
	var data []byte
	seen := false
	for {
		line, err := s.line()
		if err != nil && (!errors.Is(err, io.EOF) || len(line) == 0) {
			if errors.Is(err, io.EOF) && seen {
				return data, nil
			}
			return nil, err
		}
		if s.progress != nil {
			s.progress()
		}
		switch {
		case len(line) == 0:
			if seen {
				return data, nil
			}
		case line[0] == ':':
		case string(line) == "data" || bytes.HasPrefix(line, []byte("data:")):
			value := bytes.TrimPrefix(bytes.TrimPrefix(line, []byte("data")), []byte(":"))
			value = bytes.TrimPrefix(value, []byte(" "))
			if seen {
				data = append(data, '\n')
			}
			if len(data)+len(value) > maxEvent {
				return nil, errEventTooLarge
			}
			data = append(data, value...)
			seen = true
		}
		if err != nil { // io.EOF after a last line without a newline
			if seen {
				return data, nil
			}
			return nil, err
		}
	}
}

// line reads one line without its line ending, \n or \r\n (a lone \r, which the
// SSE format allows too, is not split on: OpenAI-compatible servers do not send
// it).
func (s *sseReader) line() ([]byte, error) {
	var line []byte
	for {
		chunk, err := s.r.ReadSlice('\n')
		if len(line)+len(chunk) > maxEvent {
			return nil, errEventTooLarge
		}
		line = append(line, chunk...)
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		line = bytes.TrimSuffix(line, []byte("\n"))
		line = bytes.TrimSuffix(line, []byte("\r"))
		return line, err
	}
}
