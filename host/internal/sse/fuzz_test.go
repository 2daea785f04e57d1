package sse

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
)

// FuzzReader reads arbitrary bytes as an event stream, seeded with the shapes the
// host writes and the line ends the format allows: no panic, it ends, no event is
// larger than maxEvent, a retry is never negative, and every event read back
// through Format reads the same.
func FuzzReader(f *testing.F) {
	for _, s := range []string{
		"id: 7\nevent: delta\nretry: 1500\ndata: {\"a\":1}\n\n",
		": ping\r\n\r\ndata: a\rdata: b\r\n\n", "data\n\nid: x\x00y\ndata:\n\n",
		"event: done\ndata: {}\n\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		r := NewReader(bytes.NewReader(b))
		lines := bytes.Count(b, []byte("\n")) + bytes.Count(b, []byte("\r")) + 1
		for n := 0; ; n++ {
			ev, err := r.Next()
			if err != nil {
				if !errors.Is(err, io.EOF) && !strings.HasPrefix(err.Error(), "sse: ") {
					t.Fatalf("an error without the package's prefix: %v", err)
				}
				return
			}
			if n > lines {
				t.Fatalf("%d events from %d lines", n, lines)
			}
			if len(ev.Data) > maxEvent {
				t.Fatalf("an event of %d bytes", len(ev.Data))
			}
			if ev.Retry < 0 {
				t.Fatalf("a negative retry %s", ev.Retry)
			}
			wire, err := Format(ev)
			if err != nil {
				continue // a name with a line break cannot be read, so this is unreachable; Format says why
			}
			again, err := NewReader(bytes.NewReader(wire)).Next()
			if err != nil {
				t.Fatalf("Format(%+v) = %q does not read back: %v", ev, wire, err)
			}
			if again.ID != ev.ID || again.Name != ev.Name || !bytes.Equal(again.Data, ev.Data) || again.Retry != ev.Retry {
				t.Fatalf("read %+v, formatted %q, read back %+v", ev, wire, again)
			}
		}
	})
}

// TestReaderBoundsAnEvent: data lines that never reach the blank line ending
// their event stop at maxEvent with an error, instead of growing without end.
func TestReaderBoundsAnEvent(t *testing.T) {
	line := "data: " + strings.Repeat("x", 1<<19) + "\n"
	r := NewReader(strings.NewReader(strings.Repeat(line, 2*maxEvent/len(line))))
	_, err := r.Next()
	if err == nil || !strings.Contains(err.Error(), "larger than 8 MB") {
		t.Fatalf("got %v, want the event-size error", err)
	}
}
