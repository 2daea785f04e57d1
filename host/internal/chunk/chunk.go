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

// DefaultMaxChunks is Config.MaxChunks when zero: 5,000 passages, about 11 MB
// of prose, above what pdftext's 8 MiB text cap lets through for ordinary text.
// A 500-page thesis makes about 1,500.
const DefaultMaxChunks = 5000

// ErrTooManyChunks is returned, wrapped in a [*ChunkLimitError], when a
// document would make more than Config.MaxChunks chunks.
var ErrTooManyChunks = errors.New("chunk: too many passages")

// ChunkLimitError reports a document over the chunk limit. It matches
// ErrTooManyChunks with errors.Is.
type ChunkLimitError struct {
	// Limit is the limit the document exceeded.
	Limit int
}

// Error implements error.
func (e *ChunkLimitError) Error() string {
	return fmt.Sprintf("%s: more than %d", ErrTooManyChunks, e.Limit)
}

// Is makes errors.Is(err, ErrTooManyChunks) true.
func (e *ChunkLimitError) Is(target error) bool { return target == ErrTooManyChunks }

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
	// MaxChunks is the most chunks one document may make; Split stops at the
	// next one with ErrTooManyChunks. Default DefaultMaxChunks (5,000).
	MaxChunks int
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
	// RawStart and RawEnd are byte offsets into Document.Raw: the span from the
	// first printed byte of the passage to its last (Document.Map.Span), so a
	// citation can point at the words as printed. Document.RawPageAt gives
	// their pages.
	RawStart, RawEnd int
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

func (c *Config) maxChunks() int {
	if c == nil || c.MaxChunks <= 0 {
		return DefaultMaxChunks
	}
	return c.MaxChunks
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
// the chunk ids. Sections without words yield no chunk. It fails on an invalid
// cfg (nil means the defaults), and with a *ChunkLimitError as soon as doc would
// make more than cfg.MaxChunks chunks. Besides the chunks it holds only the word
// spans of one chunk.
func Split(paperID string, doc *pdftext.Document, cfg *Config) ([]Chunk, error) {
	maxWords, overlapWords, err := cfg.resolve()
	if err != nil {
		return nil, err
	}
	maxChunks := cfg.maxChunks()
	var out []Chunk
	win := make([][2]int, 0, maxWords) // the word spans of the next chunk
	for _, sec := range doc.Sections {
		next := words{text: doc.Text, at: sec.Start, end: sec.End}
		win = win[:0]
		for {
			for len(win) < maxWords {
				w, ok := next.next()
				if !ok {
					break
				}
				win = append(win, w)
			}
			if len(win) == 0 {
				break
			}
			if len(out) == maxChunks {
				return nil, &ChunkLimitError{Limit: maxChunks}
			}
			start, end := win[0][0], win[len(win)-1][1]
			text := doc.Text[start:end]
			idx := len(out)
			rawStart, rawEnd, _ := doc.Map.Span(start, end)
			out = append(out, Chunk{
				ID:          uuid.NewSHA1(namespace, []byte(paperID+"\x00"+strconv.Itoa(idx)+"\x00"+text)).String(),
				Index:       idx,
				Text:        text,
				Start:       start,
				End:         end,
				RawStart:    rawStart,
				RawEnd:      rawEnd,
				PageStart:   doc.PageAt(start),
				PageEnd:     doc.PageAt(end - 1),
				Section:     sec.Title,
				SectionKind: sec.Kind,
				Tokens:      wordsToTokens(len(win)),
			})
			if len(win) < maxWords || !next.more() {
				break // the section's last words are in this chunk
			}
			win = win[:copy(win, win[len(win)-overlapWords:])]
		}
	}
	return out, nil
}

// words yields the byte spans of the whitespace-separated words of
// text[at:end], one at a time.
type words struct {
	text    string
	at, end int
}

// next returns the next word's span, false when there is none.
func (w *words) next() ([2]int, bool) {
	start := -1
	for w.at < w.end {
		r, size := utf8.DecodeRuneInString(w.text[w.at:w.end])
		if unicode.IsSpace(r) {
			if start >= 0 {
				return [2]int{start, w.at}, true
			}
		} else if start < 0 {
			start = w.at
		}
		w.at += size
	}
	if start >= 0 {
		return [2]int{start, w.end}, true
	}
	return [2]int{}, false
}

// more reports whether another word follows, without consuming it.
func (w *words) more() bool {
	peek := *w
	_, ok := peek.next()
	return ok
}
