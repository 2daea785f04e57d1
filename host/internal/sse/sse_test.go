package sse_test

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lectern-research/lectern/host/internal/sse"
)

func TestFormat(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		ev   sse.Event
		want string
	}{
		{"data only", sse.Event{Data: []byte(`{"a":1}`)}, "data: {\"a\":1}\n\n"},
		{"id and name", sse.Event{ID: "7", Name: "progress", Data: []byte("x")}, "id: 7\nevent: progress\ndata: x\n\n"},
		{"multi-line data", sse.Event{Data: []byte("one\ntwo\r\nthree\rfour")}, "data: one\ndata: two\ndata: three\ndata: four\n\n"},
		{"empty data", sse.Event{Name: "ping"}, "event: ping\ndata: \n\n"},
		{"retry", sse.Event{Retry: 1500 * time.Millisecond, Data: []byte("r")}, "retry: 1500\ndata: r\n\n"},
		{"done marker", sse.Event{Name: sse.DoneEvent, Data: []byte("{}")}, "event: done\ndata: {}\n\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := sse.Format(tc.ev)
			require.NoError(t, err)
			require.Equal(t, tc.want, string(got))
		})
	}
}

func TestFormatRefusesLineBreaksInFields(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		ev   sse.Event
	}{
		{"id with newline", sse.Event{ID: "1\nevent: evil"}},
		{"id with NUL", sse.Event{ID: "1\x00"}},
		{"name with carriage return", sse.Event{Name: "a\rb"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := sse.Format(tc.ev)
			require.Error(t, err)
		})
	}
}

func TestFormatComment(t *testing.T) {
	t.Parallel()
	require.Equal(t, ": keep alive\n\n", string(sse.FormatComment("keep\nalive")), "a line break cannot end the comment early")
	require.Equal(t, ": heartbeat\n\n", string(sse.FormatComment("heartbeat")))
}

func TestReaderRoundTrip(t *testing.T) {
	t.Parallel()
	events := []sse.Event{
		{ID: "1", Name: "progress", Data: []byte(`{"seq":1}`)},
		{Name: "state", Data: []byte("line one\nline two")},
		{ID: "2", Name: "progress", Data: []byte(`{"seq":2}`)},
		{Name: sse.DoneEvent, Data: []byte(`{"state":"succeeded"}`)},
	}
	var stream strings.Builder
	for i, ev := range events {
		b, err := sse.Format(ev)
		require.NoError(t, err)
		stream.Write(b)
		if i == 1 {
			stream.Write(sse.FormatComment("heartbeat"))
		}
	}

	r := sse.NewReader(strings.NewReader(stream.String()))
	wantIDs := []string{"1", "1", "2", "2"} // the id persists, as browsers report it
	for i, want := range events {
		got, err := r.Next()
		require.NoError(t, err)
		require.Equal(t, want.Name, got.Name)
		require.Equal(t, string(want.Data), string(got.Data))
		require.Equal(t, wantIDs[i], got.ID)
	}
	_, err := r.Next()
	require.ErrorIs(t, err, io.EOF)
	require.Equal(t, "2", r.LastEventID())
}

func TestReaderLineEndings(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		stream string
	}{
		{"lf", "id: 3\nevent: e\ndata: a\ndata: b\n\n"},
		{"crlf", "id: 3\r\nevent: e\r\ndata: a\r\ndata: b\r\n\r\n"},
		{"cr", "id: 3\revent: e\rdata: a\rdata: b\r\r"},
		{"no space after colon", "id:3\nevent:e\ndata:a\ndata:b\n\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ev, err := sse.NewReader(strings.NewReader(tc.stream)).Next()
			require.NoError(t, err)
			require.Equal(t, sse.Event{ID: "3", Name: "e", Data: []byte("a\nb")}, ev)
		})
	}
}

func TestReaderDropsUnterminatedEvent(t *testing.T) {
	t.Parallel()
	r := sse.NewReader(strings.NewReader("data: complete\n\ndata: cut off"))
	ev, err := r.Next()
	require.NoError(t, err)
	require.Equal(t, "complete", string(ev.Data))
	_, err = r.Next()
	require.ErrorIs(t, err, io.EOF)
}

func TestWriter(t *testing.T) {
	t.Parallel()
	rec := httptest.NewRecorder()
	w, err := sse.Open(rec)
	require.NoError(t, err)
	require.True(t, rec.Flushed, "the stream opens at once")
	require.Equal(t, http.StatusOK, rec.Code)
	require.Equal(t, "text/event-stream; charset=utf-8", rec.Header().Get("Content-Type"))
	require.Equal(t, "no-cache", rec.Header().Get("Cache-Control"))
	require.Equal(t, "no", rec.Header().Get("X-Accel-Buffering"))

	require.NoError(t, w.JSON("progress", "1", map[string]int{"current": 1}))
	require.NoError(t, w.Comment("heartbeat"))
	require.NoError(t, w.Done(nil))

	r := sse.NewReader(rec.Body)
	ev, err := r.Next()
	require.NoError(t, err)
	require.Equal(t, sse.Event{ID: "1", Name: "progress", Data: []byte(`{"current":1}`)}, ev)
	ev, err = r.Next()
	require.NoError(t, err)
	require.Equal(t, sse.DoneEvent, ev.Name)
	require.Equal(t, "{}", string(ev.Data))
}

// noFlush is a ResponseWriter that cannot flush.
type noFlush struct{ h http.Header }

func (n *noFlush) Header() http.Header         { return n.h }
func (n *noFlush) Write(b []byte) (int, error) { return len(b), nil }
func (n *noFlush) WriteHeader(int)             {}

func TestOpenNeedsFlusher(t *testing.T) {
	t.Parallel()
	_, err := sse.Open(&noFlush{h: http.Header{}})
	require.True(t, errors.Is(err, http.ErrNotSupported), "got %v", err)
}

func TestLastEventID(t *testing.T) {
	t.Parallel()
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	require.Equal(t, "", sse.LastEventID(r))
	r.Header.Set("Last-Event-ID", " 42 ")
	require.Equal(t, "42", sse.LastEventID(r))
}
