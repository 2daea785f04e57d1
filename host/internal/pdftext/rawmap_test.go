package pdftext

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// capsLine is a line whose words sit as the boxes of a real PDF's small
// capitals would: each word touching the next where touch is "+", a space
// apart where it is " ", at the sizes given (1 for capitals, 0.8 for small
// capitals, 0.7 a size lower for a subscript).
func capsLine(words []string, sizes []float64, touch string) line {
	l := line{text: strings.Join(words, " ")}
	x := 0.0
	var prev box
	for i, w := range words {
		h := 10 * sizes[i]
		bottom := 100.0 + 0.24*h // on one baseline, a smaller size's descent ends higher
		if sizes[i] == 0.7 {
			bottom = 104 // a subscript sits lower
		}
		b := box{x0: x, y0: bottom - h, x1: x + 5*float64(len(w)), y1: bottom}
		if i > 0 {
			l.geom = append(l.geom, sitting(prev, b))
		}
		prev = b
		x = b.x1
		if i < len(touch) && touch[i] == ' ' {
			x += 4
		}
	}
	return l
}

func TestRejoinCapsFollowsTheBoxes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		words []string
		sizes []float64
		touch string
		want  string
	}{
		{"small capitals", []string{"using", "S", "CIENCE", "P", "ARSE", "v3"}, []float64{1, 1, 0.8, 1, 0.8, 1}, " +++ ", "using ScienceParse v3"},
		{"a logo ending in a capital", []string{"(L", "A", "T", "E", "X-parse)"}, []float64{1, 0.8, 1, 0.8, 1}, "++++", "(LaTeX-parse)"},
		{"capitals of full size end it", []string{"S", "CI", "BERT,", "a"}, []float64{1, 0.8, 1, 1}, "++ ", "SciBERT, a"},
		{"the rest of a word begun above", []string{"QUIRES", "S", "TACK", "."}, []float64{0.8, 1, 0.8, 1}, "+++", "quiresStack."},
		{"a subscript stays", []string{"T", "CMB", "is"}, []float64{1, 0.7, 1}, "+ ", "T CMB is"},
		{"apart stays", []string{"A", "BERT", "model"}, []float64{1, 0.8, 1}, "  ", "A BERT model"},
		{"one size stays", []string{"A", "BERT", "model"}, []float64{1, 1, 1}, "+ ", "A BERT model"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			l := capsLine(tt.words, tt.sizes, tt.touch)
			rejoinCaps(&l)
			require.Equal(t, tt.want, l.text)
			require.Nil(t, l.geom, "the boxes are done with")
		})
	}
}

func TestFixLigaturesSpellsThemOut(t *testing.T) {
	t.Parallel()
	l := line{text: "eﬀects of ﬁne ﬂow, eﬃcient ﬄuid and ﬅ ﬆ"}
	fixLigatures(&l)
	require.Equal(t, "effects of fine flow, efficient ffluid and ſt st", l.text)
}

// cleanDoc builds a document from pages of lines as pdftotext would report
// them, through the same steps Extract takes.
func cleanDoc(pages ...layoutPage) *Document {
	return analyse(pages, rawText(pages))
}

// TestTheMapLeadsBackToThePrintedWords: through a dropped running header and
// page number, a word hyphenated across a page break, ligatures and small
// capitals, every word of the clean text maps back to the raw bytes it was
// printed as, and a span maps to the raw text around it.
func TestTheMapLeadsBackToThePrintedWords(t *testing.T) {
	t.Parallel()
	p1 := page("Journal of Tests 2010", "The eﬀect of com-", "1")
	p2 := page("Journal of Tests 2010", "plement on the ﬁeld of", "2")
	p3 := page("Journal of Tests 2010", "S CIENCE P ARSE tools.", "3")
	p3.lines[1] = capsLine([]string{"S", "CIENCE", "P", "ARSE", "tools."}, []float64{1, 0.8, 1, 0.8, 1}, "+++ ")
	p3.lines[1].block = 1
	doc := cleanDoc(p1, p2, p3)
	require.Equal(t, "The effect of complement\fon the field of\fScienceParse tools.", strings.ReplaceAll(doc.Text, "\n", ""))
	require.Contains(t, doc.Raw, "Journal of Tests 2010")

	for word, raw := range map[string][]string{
		"effect":       {"eﬀect"},
		"complement":   {"com", "plement"},
		"field":        {"ﬁeld"},
		"ScienceParse": {"S", "CIENCE", "P", "ARSE"},
		"tools.":       {"tools."},
	} {
		at := strings.Index(doc.Text, word)
		var got []string
		for _, p := range doc.Map.Pieces(at, at+len(word)) {
			got = append(got, doc.Raw[p[0]:p[1]])
		}
		require.Equal(t, strings.Join(raw, ""), strings.ReplaceAll(strings.Join(got, ""), " ", ""), word)
	}
	at := strings.Index(doc.Text, "complement")
	rs, re, ok := doc.Map.Span(at, at+len("complement on"))
	require.True(t, ok)
	require.Equal(t, "com-\n\n1\fJournal of Tests 2010\n\nplement on", doc.Raw[rs:re], "the span holds what was dropped between")
	require.Equal(t, 1, doc.RawPageAt(rs))
	require.Equal(t, 2, doc.RawPageAt(re-1))

	back, err := OffsetMapFromInts(doc.Map.Ints())
	require.NoError(t, err)
	require.Equal(t, doc.Map, back, "the stored map reads back the same")
	_, err = OffsetMapFromInts([]int32{1, 2, 3})
	require.ErrorIs(t, err, ErrBadOffsetMap)
	_, err = OffsetMapFromInts([]int32{10, 5, 0, 5, 12, 1, 9, 1})
	require.ErrorIs(t, err, ErrBadOffsetMap, "segments that overlap")
}
