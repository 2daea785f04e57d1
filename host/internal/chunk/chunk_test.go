package chunk

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode"

	"github.com/stretchr/testify/require"

	"github.com/lectern-research/lectern/host/internal/pdftext"
)

func TestEstimateTokens(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   string
		want int
	}{
		{"empty", "", 0},
		{"spaces only", " \n\t\f ", 0},
		{"one word", "word", 2},
		{"ten words", "a b c d e f g h i j", 13},
		{"four words across newlines", "experi-\nment  was\frun", 6},
		{"unicode spaces", "a\u00A0b\u2003c", 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tt.want, EstimateTokens(tt.in))
		})
	}
}

func TestWordsFor(t *testing.T) {
	t.Parallel()
	tests := []struct{ tokens, words int }{
		{512, 393}, {50, 38}, {13, 10}, {2, 1}, {1, 0}, {0, 0},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.tokens), func(t *testing.T) {
			t.Parallel()
			w := wordsFor(tt.tokens)
			require.Equal(t, tt.words, w)
			require.LessOrEqual(t, wordsToTokens(w), tt.tokens)
			require.Greater(t, wordsToTokens(w+1), tt.tokens)
		})
	}
}

func TestConfig(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name              string
		cfg               *Config
		maxWords, overlap int
		wantErr           bool
	}{
		{"nil is the defaults", nil, 393, 38, false},
		{"zero is the defaults", &Config{}, 393, 38, false},
		{"no overlap", &Config{MaxTokens: 100, OverlapTokens: -1}, 76, 0, false},
		{"small", &Config{MaxTokens: 13, OverlapTokens: 4}, 10, 3, false},
		{"overlap as large as the chunk", &Config{MaxTokens: 50, OverlapTokens: 50}, 0, 0, true},
		{"too small for a word", &Config{MaxTokens: 1, OverlapTokens: -1}, 0, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			mw, ow, err := tt.cfg.resolve()
			if tt.wantErr {
				require.ErrorIs(t, err, ErrInvalidConfig)
				_, err = Split("p", &pdftext.Document{}, tt.cfg)
				require.ErrorIs(t, err, ErrInvalidConfig)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.maxWords, mw)
			require.Equal(t, tt.overlap, ow)
		})
	}
}

// randomDoc builds a Document of random words over random sections and pages,
// shaped like pdftext's: pages joined by "\f", sections tiling the text.
func randomDoc(r *rand.Rand) *pdftext.Document {
	var sb strings.Builder
	doc := &pdftext.Document{}
	nsec := 1 + r.IntN(6)
	var starts []int
	page := 0
	for s := 0; s < nsec; s++ {
		if s > 0 {
			sb.WriteString("\n\n")
		}
		starts = append(starts, sb.Len())
		nwords := r.IntN(1200)
		if r.IntN(5) == 0 {
			nwords = r.IntN(4) // tiny or empty sections too
		}
		for w := 0; w < nwords; w++ {
			if sb.Len() == 0 || r.IntN(300) == 0 {
				if sb.Len() > 0 {
					sb.WriteByte('\f')
				}
				page++
				doc.Pages = append(doc.Pages, pdftext.Page{Number: page, Offset: sb.Len()})
			} else if w > 0 {
				sb.WriteString([]string{" ", " ", " ", "\n", "  "}[r.IntN(5)])
			}
			sb.WriteString([]string{"alpha", "β-decay", "x", "experiment", "(Smith,", "2020).", "ﬁne"}[r.IntN(7)])
		}
	}
	if len(doc.Pages) == 0 {
		doc.Pages = append(doc.Pages, pdftext.Page{Number: 1})
	}
	doc.Text = sb.String()
	for i := range doc.Pages {
		end := len(doc.Text)
		if i+1 < len(doc.Pages) {
			end = doc.Pages[i+1].Offset - 1
		}
		doc.Pages[i].Text = doc.Text[doc.Pages[i].Offset:end]
	}
	for i, st := range starts {
		end := len(doc.Text)
		if i+1 < len(starts) {
			end = starts[i+1]
		}
		kind := pdftext.KindBody
		if i == 0 {
			kind = pdftext.KindFront
		}
		doc.Sections = append(doc.Sections, pdftext.Section{Kind: kind, Title: fmt.Sprintf("S%d", i), Start: st, End: end, Page: doc.PageAt(st)})
	}
	return doc
}

// requireChunkProperties checks what Split promises for any document.
func requireChunkProperties(t *testing.T, doc *pdftext.Document, chunks []Chunk, cfg *Config) {
	t.Helper()
	maxWords, overlapWords, err := cfg.resolve()
	require.NoError(t, err)
	maxTokens := wordsToTokens(maxWords)
	ids := map[string]bool{}
	ci := 0
	for _, sec := range doc.Sections {
		words := wordSpans(doc.Text, sec.Start, sec.End)
		covered := 0 // words of the section covered so far, in order
		var prev *Chunk
		for ; ci < len(chunks) && chunks[ci].Start < sec.End; ci++ {
			c := chunks[ci]
			require.Equal(t, ci, c.Index)
			require.False(t, ids[c.ID], "ids are unique")
			ids[c.ID] = true
			require.Equal(t, doc.Text[c.Start:c.End], c.Text)
			require.GreaterOrEqual(t, c.Start, sec.Start, "chunk %d starts before its section", ci)
			require.LessOrEqual(t, c.End, sec.End, "chunk %d crosses a section boundary", ci)
			require.Equal(t, sec.Title, c.Section)
			require.Equal(t, sec.Kind, c.SectionKind)
			require.Equal(t, EstimateTokens(c.Text), c.Tokens)
			require.LessOrEqual(t, c.Tokens, maxTokens)
			require.Equal(t, doc.PageAt(c.Start), c.PageStart)
			require.Equal(t, doc.PageAt(c.End-1), c.PageEnd)
			require.LessOrEqual(t, c.PageStart, c.PageEnd)
			cw := wordSpans(doc.Text, c.Start, c.End)
			if prev == nil {
				require.Equal(t, words[0][0], c.Start, "the first chunk starts at the section's first word")
			} else {
				pw := wordSpans(doc.Text, prev.Start, prev.End)
				require.Equal(t, pw[len(pw)-overlapWords:], cw[:overlapWords], "chunks %d and %d overlap by %d words", ci-1, ci, overlapWords)
				require.Greater(t, c.Start, prev.Start)
				require.Len(t, pw, maxWords, "only the last chunk of a section is short")
			}
			covered = indexOfSpan(words, cw[len(cw)-1]) + 1
			prev = &chunks[ci]
		}
		require.Equal(t, len(words), covered, "section %q is covered to its last word", sec.Title)
	}
	require.Equal(t, len(chunks), ci, "every chunk belongs to a section")
}

func indexOfSpan(spans [][2]int, s [2]int) int {
	for i, x := range spans {
		if x == s {
			return i
		}
	}
	return -1
}

func TestSplitProperties(t *testing.T) {
	t.Parallel()
	configs := []*Config{nil, {MaxTokens: 13, OverlapTokens: 4}, {MaxTokens: 100, OverlapTokens: -1}, {MaxTokens: 64, OverlapTokens: 20}}
	for seed := uint64(1); seed <= 40; seed++ {
		for k, cfg := range configs {
			t.Run(fmt.Sprintf("seed%d/cfg%d", seed, k), func(t *testing.T) {
				t.Parallel()
				doc := randomDoc(rand.New(rand.NewPCG(seed, 7)))
				chunks, err := Split("paper-1", doc, cfg)
				require.NoError(t, err)
				requireChunkProperties(t, doc, chunks, cfg)
			})
		}
	}
}

func TestSplitStableIDs(t *testing.T) {
	t.Parallel()
	doc := randomDoc(rand.New(rand.NewPCG(3, 7)))
	a, err := Split("paper-1", doc, nil)
	require.NoError(t, err)
	b, err := Split("paper-1", doc, nil)
	require.NoError(t, err)
	require.Equal(t, a, b)
	other, err := Split("paper-2", doc, nil)
	require.NoError(t, err)
	require.Len(t, other, len(a))
	for i := range a {
		require.NotEqual(t, a[i].ID, other[i].ID, "the paper id is part of the chunk id")
		require.Regexp(t, `^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`, a[i].ID)
	}
}

func TestSplitSmall(t *testing.T) {
	t.Parallel()
	// Two sections on two pages; 13 tokens is 10 words, 4 tokens of overlap is 3.
	text := "one two three four five six seven eight nine ten eleven twelve\f" +
		"thirteen fourteen\n\nHeading alpha beta"
	doc := &pdftext.Document{
		Text:  text,
		Pages: []pdftext.Page{{Number: 1, Offset: 0}, {Number: 2, Offset: strings.Index(text, "thirteen")}},
		Sections: []pdftext.Section{
			{Kind: pdftext.KindFront, Start: 0, End: strings.Index(text, "Heading")},
			{Kind: pdftext.KindBody, Title: "Heading", Start: strings.Index(text, "Heading"), End: len(text), Page: 2},
		},
	}
	chunks, err := Split("p", doc, &Config{MaxTokens: 13, OverlapTokens: 4})
	require.NoError(t, err)
	type got struct {
		text               string
		pageStart, pageEnd int
		section            string
	}
	var g []got
	for _, c := range chunks {
		g = append(g, got{c.Text, c.PageStart, c.PageEnd, c.Section})
	}
	require.Equal(t, []got{
		{"one two three four five six seven eight nine ten", 1, 1, ""},
		{"eight nine ten eleven twelve\fthirteen fourteen", 1, 2, ""},
		{"Heading alpha beta", 2, 2, "Heading"},
	}, g)
}

func TestSplitEmpty(t *testing.T) {
	t.Parallel()
	chunks, err := Split("p", &pdftext.Document{Text: " \n", Pages: []pdftext.Page{{Number: 1}}, Sections: []pdftext.Section{{Start: 0, End: 2}}}, nil)
	require.NoError(t, err)
	require.Empty(t, chunks)
}

// wordSpans returns the byte spans of the whitespace-separated words of
// text[from:to], all at once: the test's own reading of what a word is.
func wordSpans(text string, from, to int) [][2]int {
	var spans [][2]int
	start := -1
	for i, r := range text[from:to] {
		if unicode.IsSpace(r) {
			if start >= 0 {
				spans = append(spans, [2]int{from + start, from + i})
				start = -1
			}
		} else if start < 0 {
			start = i
		}
	}
	if start >= 0 {
		spans = append(spans, [2]int{from + start, to})
	}
	return spans
}

// wordsDoc is one section of n one-letter words on one page.
func wordsDoc(n int) *pdftext.Document {
	text := strings.TrimSpace(strings.Repeat("w ", n))
	return &pdftext.Document{
		Text:     text,
		Pages:    []pdftext.Page{{Number: 1, Text: text}},
		Sections: []pdftext.Section{{Kind: pdftext.KindBody, Start: 0, End: len(text), Page: 1}},
	}
}

func TestSplitStopsAtTheChunkLimit(t *testing.T) {
	t.Parallel()
	oneWord := func(limit int) *Config { return &Config{MaxTokens: 2, OverlapTokens: -1, MaxChunks: limit} }
	tests := []struct {
		name    string
		words   int
		cfg     *Config
		chunks  int
		limitAt int // 0: no error
	}{
		{"at the limit", 7, oneWord(7), 7, 0},
		{"one over the limit", 8, oneWord(7), 0, 7},
		{"default limit reached", DefaultMaxChunks, oneWord(0), DefaultMaxChunks, 0},
		{"default limit passed", DefaultMaxChunks + 1, oneWord(0), 0, DefaultMaxChunks},
		{"overlapping chunks count", 40, &Config{MaxTokens: 13, OverlapTokens: 4, MaxChunks: 5}, 0, 5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			chunks, err := Split("p", wordsDoc(tt.words), tt.cfg)
			if tt.limitAt == 0 {
				require.NoError(t, err)
				require.Len(t, chunks, tt.chunks)
				return
			}
			require.ErrorIs(t, err, ErrTooManyChunks)
			require.Equal(t, &ChunkLimitError{Limit: tt.limitAt}, err)
			require.Nil(t, chunks, "nothing half-made")
		})
	}
}
