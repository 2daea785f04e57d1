package chunk

import (
	"errors"
	"fmt"
	"strconv"
	"unicode"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/lectern-research/lectern/host/internal/pdftext"
)

// DefaultMaxTokens is Config.MaxTokens when zero (the reference implementation's
// chunk size).
const DefaultMaxTokens = 512

// DefaultOverlapTokens is Config.OverlapTokens when zero (the reference
// implementation's overlap).
const DefaultOverlapTokens = 50

// ErrInvalidConfig is returned for a Config whose overlap does not leave room
// for new text in each chunk.
var ErrInvalidConfig = errors.New("chunk: invalid config")

// namespace is the UUID namespace of chunk ids. Changing it changes every id.
var namespace = uuid.MustParse("6f1b5a52-3c1e-4d0b-9a51-2f4f3c9e7d10")

// Config sets the chunk size and overlap; the zero value means the defaults.
type Config struct {
	// MaxTokens bounds each chunk's EstimateTokens. Default DefaultMaxTokens (512).
	MaxTokens int
	// OverlapTokens is how much of the end of a chunk the next chunk of the same
	// section repeats: the most words whose estimate is at most OverlapTokens.
	// Default DefaultOverlapTokens (50). Use a negative value for no overlap.
	OverlapTokens int
}

// Chunk is a passage of a paper's text.
type Chunk struct {
	// ID is stable for the same paper id, index and text (see the package doc).
	ID string
	// Index is the chunk's position among the paper's chunks, from 0.
	Index int
	// Text is the passage as extracted, equal to Document.Text[Start:End].
	Text string
	// Start and End are byte offsets into Document.Text.
	Start, End int
	// PageStart and PageEnd are the 1-based pages holding the first and the last
	// character of the chunk.
	PageStart, PageEnd int
	// Section is the title of the section the chunk belongs to, "" for the
	// front matter.
	Section string
	// SectionKind is the kind of that section (front, abstract, body, references).
	SectionKind pdftext.SectionKind
	// Tokens is EstimateTokens(Text).
	Tokens int
}

// EstimateTokens estimates the tokens of s: 1.3 per whitespace-separated word,
// rounded up.
func EstimateTokens(s string) int {
	n := 0
	in := false
	for _, r := range s {
		sp := unicode.IsSpace(r)
		if !sp && !in {
			n++
		}
		in = !sp
	}
	return wordsToTokens(n)
}

func wordsToTokens(words int) int { return (words*13 + 9) / 10 }

// wordsFor returns the most words whose token estimate is at most tokens.
func wordsFor(tokens int) int {
	w := tokens * 10 / 13
	for wordsToTokens(w+1) <= tokens {
		w++
	}
	for w > 0 && wordsToTokens(w) > tokens {
		w--
	}
	return w
}

func (c *Config) resolve() (maxWords, overlapWords int, err error) {
	var r Config
	if c != nil {
		r = *c
	}
	if r.MaxTokens == 0 {
		r.MaxTokens = DefaultMaxTokens
	}
	if r.OverlapTokens == 0 {
		r.OverlapTokens = DefaultOverlapTokens
	}
	maxWords = wordsFor(r.MaxTokens)
	if r.OverlapTokens > 0 {
		overlapWords = wordsFor(r.OverlapTokens)
	}
	if maxWords < 1 || overlapWords >= maxWords {
		return 0, 0, fmt.Errorf("%w: max %d tokens (%d words), overlap %d tokens (%d words)", ErrInvalidConfig, r.MaxTokens, maxWords, r.OverlapTokens, overlapWords)
	}
	return maxWords, overlapWords, nil
}

// Split cuts doc into chunks section by section, in order. paperID goes into
// the chunk ids. Sections without words yield no chunk. It fails only on an
// invalid cfg (nil means the defaults).
func Split(paperID string, doc *pdftext.Document, cfg *Config) ([]Chunk, error) {
	maxWords, overlapWords, err := cfg.resolve()
	if err != nil {
		return nil, err
	}
	var out []Chunk
	for _, sec := range doc.Sections {
		words := wordSpans(doc.Text, sec.Start, sec.End)
		for i := 0; i < len(words); {
			j := min(i+maxWords, len(words))
			start, end := words[i][0], words[j-1][1]
			text := doc.Text[start:end]
			idx := len(out)
			out = append(out, Chunk{
				ID:          uuid.NewSHA1(namespace, []byte(paperID+"\x00"+strconv.Itoa(idx)+"\x00"+text)).String(),
				Index:       idx,
				Text:        text,
				Start:       start,
				End:         end,
				PageStart:   doc.PageAt(start),
				PageEnd:     doc.PageAt(end - 1),
				Section:     sec.Title,
				SectionKind: sec.Kind,
				Tokens:      wordsToTokens(j - i),
			})
			if j == len(words) {
				break
			}
			i = j - overlapWords
		}
	}
	return out, nil
}

// wordSpans returns the byte spans of the whitespace-separated words of
// text[from:to].
func wordSpans(text string, from, to int) [][2]int {
	var spans [][2]int
	start := -1
	for i := from; i < to; {
		r, size := utf8.DecodeRuneInString(text[i:to])
		if unicode.IsSpace(r) {
			if start >= 0 {
				spans = append(spans, [2]int{start, i})
				start = -1
			}
		} else if start < 0 {
			start = i
		}
		i += size
	}
	if start >= 0 {
		spans = append(spans, [2]int{start, to})
	}
	return spans
}
