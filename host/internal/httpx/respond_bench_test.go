package httpx

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

// BenchmarkJSON writes a page the size of the due queue's (50 cards of text and
// times, about 50 kB), as GET /api/reviews/due answers 30 requests of 100 in the
// HTTP benchmark's mix.
func BenchmarkJSON(b *testing.B) {
	type card struct {
		ID, Front, Back string
		Tags            []string
		Due, Created    time.Time
		Next            []time.Time
	}
	t := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	page := make([]card, 50)
	for i := range page {
		page[i] = card{ID: "0b6f3c1e-5d2a-4c8e-9f10-2a3b4c5d6e7f", Front: strings.Repeat("What does the model predict? ", 12),
			Back: strings.Repeat("It predicts the next token. ", 12), Tags: []string{"paper", "method"},
			Due: t, Created: t, Next: []time.Time{t, t, t, t}}
	}
	v := map[string]any{"items": page, "now": t}
	checkEncoding = false
	defer func() { checkEncoding = true }()
	w := discard{http.Header{}}
	b.ReportAllocs()
	for b.Loop() {
		JSON(w, 200, v)
	}
}

// discard is a response writer that keeps nothing of the body.
type discard struct{ h http.Header }

func (d discard) Header() http.Header       { return d.h }
func (discard) Write(p []byte) (int, error) { return len(p), nil }
func (discard) WriteHeader(int)             {}
