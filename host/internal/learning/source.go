package learning

import (
	"context"
	"strings"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/lectern-research/lectern/host/internal/papers"
	"github.com/lectern-research/lectern/host/internal/quote"
	"github.com/lectern-research/lectern/sdk/llm/extractive"
)

// Source is where a card's sentence stands in its paper, for the card's back: the
// sentence itself, shown apart from the answer, and what the reader page needs to
// open at it (/papers/{paper_id}/read?page=&passage=&start=&end=).
type Source struct {
	// Sentence is the sentence the card asks about: for a cloze, its front with
	// each blank filled with the answer; empty for other cards.
	Sentence string    `json:"sentence,omitempty"`
	PaperID  uuid.UUID `json:"paper_id"`
	// Page is the page the sentence (else the passage) starts on.
	Page *int `json:"page,omitempty"`
	// ChunkID is the passage; Start and End are the sentence's rune offsets
	// [Start, End) in the passage's stored content, when it was found there.
	ChunkID *uuid.UUID `json:"chunk_id,omitempty"`
	Start   *int       `json:"start,omitempty"`
	End     *int       `json:"end,omitempty"`
}

// Answer is what a card asks for: its back, or for a cloze drafted before the
// back held the answer alone ("answer\n\nsentence"), the back's first paragraph.
func (c Card) Answer() string {
	if c.CardType == "cloze" {
		a, _, _ := strings.Cut(c.Back, "\n\n")
		return strings.TrimSpace(a)
	}
	return c.Back
}

// sentence is a cloze card's sentence: its front with the blanks filled.
func (c Card) sentence() string {
	a := c.Answer()
	if c.CardType != "cloze" || a == "" || !strings.Contains(c.Front, extractive.Blank) {
		return ""
	}
	return strings.ReplaceAll(c.Front, extractive.Blank, a)
}

// source fills c.Source for a card made from a paper: the sentence, and where
// it is in the card's passage when the user may still see that passage.
func (s *Store) source(ctx context.Context, userID uuid.UUID, c *Card) error {
	if c.PaperID == nil {
		return nil
	}
	src := &Source{Sentence: c.sentence(), PaperID: *c.PaperID, Page: c.PageNumber}
	c.Source = src
	if c.ChunkID == nil {
		return nil
	}
	passages, err := papers.New(s.pool).VisiblePassageTexts(ctx, userID, []uuid.UUID{*c.ChunkID})
	if err != nil || len(passages) == 0 {
		return err
	}
	p := passages[0]
	src.ChunkID = c.ChunkID
	if src.Sentence == "" {
		return nil
	}
	r := quote.Verify(p.Text, src.Sentence)
	if !r.Verified {
		return nil
	}
	start := utf8.RuneCountInString(p.Text[:r.Start])
	end := start + utf8.RuneCountInString(p.Text[r.Start:r.End])
	src.Start, src.End = &start, &end
	if len(p.PageStarts) > 0 {
		page := pageAt(p.PageStarts, p.CharStart+r.Start)
		page = min(max(page, p.PageStart), p.PageEnd)
		src.Page = &page
	}
	return nil
}

// pageAt is the page (from 1) holding byte offset off of a paper's text.
func pageAt(starts []int, off int) int {
	page := 1
	for i, s := range starts {
		if s <= off {
			page = i + 1
		}
	}
	return page
}
