package main

import (
	"bufio"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestSSEReader(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		input string
		want  []string
	}{
		{"one event", "data: {\"a\":1}\n\n", []string{`{"a":1}`}},
		{"no space after the colon", "data:x\n\n", []string{"x"}},
		{"only one leading space is dropped", "data:  x\n\n", []string{" x"}},
		{"CRLF", "data: a\r\n\r\ndata: b\r\n\r\n", []string{"a", "b"}},
		{"several data lines join with newlines", "data: a\ndata: b\n\n", []string{"a\nb"}},
		{"comments and other fields are skipped", ": ping\n\nevent: delta\nid: 7\nretry: 100\ndata: a\n\n", []string{"a"}},
		{"blank lines between events", "\n\n\ndata: a\n\n\n\ndata: b\n\n", []string{"a", "b"}},
		{"last event without a blank line", "data: a\n\ndata: b\n", []string{"a", "b"}},
		{"last line without a newline", "data: a\n\ndata: b", []string{"a", "b"}},
		{"empty stream", "", nil},
		{"data field without a value", "data\n\ndata:\n\n", []string{"", ""}},
		{"a field that only starts with data", "dataset: x\ndata: a\n\n", []string{"a"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			lines := 0
			r := &sseReader{r: bufio.NewReaderSize(strings.NewReader(tc.input), 16), progress: func() { lines++ }}
			var got []string
			for {
				data, err := r.next()
				if errors.Is(err, io.EOF) {
					break
				}
				require.NoError(t, err)
				got = append(got, string(data))
			}
			require.Equal(t, tc.want, got)
			if tc.input != "" {
				require.Positive(t, lines, "progress is reported")
			}
		})
	}
	t.Run("long lines span buffer fills", func(t *testing.T) {
		t.Parallel()
		long := strings.Repeat("x", 100_000)
		r := &sseReader{r: bufio.NewReaderSize(strings.NewReader("data: "+long+"\n\n"), 16)}
		data, err := r.next()
		require.NoError(t, err)
		require.Equal(t, long, string(data))
	})
	t.Run("oversized event", func(t *testing.T) {
		t.Parallel()
		r := &sseReader{r: bufio.NewReader(strings.NewReader("data: " + strings.Repeat("x", maxEvent+1) + "\n\n"))}
		_, err := r.next()
		require.ErrorIs(t, err, errEventTooLarge)
	})
}
