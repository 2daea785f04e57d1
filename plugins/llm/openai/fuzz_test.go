package main

import (
	"bufio"
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/lectern-research/lectern/sdk/plugintest"
	"github.com/lectern-research/lectern/sdk/protocol"
)

// addStreamSeeds adds the recorded answers of testdata/ and a few stream shapes.
func addStreamSeeds(f *testing.F) {
	names, _ := filepath.Glob(filepath.Join("testdata", "*"))
	for _, name := range names {
		if b, err := os.ReadFile(name); err == nil {
			f.Add(b)
		}
	}
	for _, s := range []string{
		"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"}}]}\n\ndata: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n",
		": ping\r\n\r\ndata:x\r\ndata\r\n\r\n", "data: {\"error\":{\"message\":\"m\",\"type\":\"server_error\"}}\n\n",
	} {
		f.Add([]byte(s))
	}
}

// FuzzSSEReader reads arbitrary bytes as an event stream: no panic, it ends, no
// event is larger than maxEvent, and there are no more events than lines.
func FuzzSSEReader(f *testing.F) {
	addStreamSeeds(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) > plugintest.MaxFuzzInput {
			return
		}
		r := &sseReader{r: bufio.NewReaderSize(strings.NewReader(string(b)), 16)}
		lines := strings.Count(string(b), "\n") + 1
		for n := 0; ; n++ {
			data, err := r.next()
			if err != nil {
				if !errors.Is(err, io.EOF) && !errors.Is(err, errEventTooLarge) {
					t.Fatalf("an error that is neither the end nor too large: %v", err)
				}
				return
			}
			if len(data) > maxEvent {
				t.Fatalf("an event of %d bytes", len(data))
			}
			if n > lines {
				t.Fatalf("%d events from %d lines", n, lines)
			}
		}
	})
}

// FuzzChatStream serves arbitrary bytes as a chat completion's event stream (and,
// when they look like JSON, as a whole completion) to the provider's Chat: no
// panic or hang, the answer is chunks ending in exactly one final chunk or a
// typed protocol error, the text passed on is what the stream held (valid
// UTF-8 when the stream was), and no error quotes the API key.
func FuzzChatStream(f *testing.F) {
	addStreamSeeds(f)
	var body atomic.Pointer[[]byte]
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = w.Write(*body.Load())
	}))
	defer srv.Close()
	p := New(slog.New(slog.DiscardHandler))
	if _, err := p.Configure(context.Background(), &protocol.ConfigureRequest{Settings: fastSettings(srv.URL, map[string]any{"max_retries": float64(0)})}); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) > plugintest.MaxFuzzInput {
			return
		}
		body.Store(&b)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		chunks, err := collect(ctx, p, chatRequest())
		if ctx.Err() != nil {
			t.Fatal("Chat was still reading at the deadline")
		}
		if err != nil {
			if code := protocol.CodeOf(err); code == "" || code == protocol.CodeInternal {
				t.Fatalf("an untyped error: %v", err)
			}
			if strings.Contains(err.Error(), testKey) {
				t.Fatalf("the error quotes the API key: %v", err)
			}
			return
		}
		if len(chunks) == 0 || chunks[len(chunks)-1].FinishReason == "" {
			t.Fatalf("%d chunks without a final one", len(chunks))
		}
		text := 0
		for i, c := range chunks {
			if c.FinishReason != "" && i != len(chunks)-1 {
				t.Fatalf("a final chunk at %d of %d", i+1, len(chunks))
			}
			text += len(c.Delta)
			if utf8.Valid(b) && !utf8.ValidString(c.Delta) {
				t.Fatalf("invalid UTF-8 passed on: %q", c.Delta)
			}
		}
		if text > len(b) {
			t.Fatalf("%d bytes of text from a %d-byte stream", text, len(b))
		}
	})
}
