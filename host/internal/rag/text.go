package rag

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/google/uuid"

	"github.com/lectern-research/lectern/host/internal/jobs"
	"github.com/lectern-research/lectern/host/internal/llmgw"
	"github.com/lectern-research/lectern/host/internal/papers"
	"github.com/lectern-research/lectern/host/internal/quote"
	"github.com/lectern-research/lectern/sdk/llm"
)

// Sources of a summary or an extraction.
const (
	SourceFullText = "full_text"
	SourceAbstract = "abstract"
)

// maxDocumentChars bounds the paper text one summary or extraction hands a model:
// about 12k tokens, which fits every current chat model's context with room for
// the answer. Longer papers are read from the start, references left out.
const maxDocumentChars = 48_000

// paperText is what a summary or an extraction reads: the documents for the
// model, and the text their quotes are checked against.
type paperText struct {
	title  string
	source string
	// text is the paper's extracted text (or its abstract); quotes are checked
	// against it and their offsets point into it.
	text       string
	pageStarts []int
	docs       []llm.Document
	verifier   *quote.Index
}

// ErrNoText fails a job for a paper with neither text nor abstract.
var errNoText = jobs.NewPublicError("no_text", "The paper has no text yet and no abstract: upload its PDF first.", nil)

// loadText reads the paper userID asks about, if they may see it.
func (s *Service) loadText(ctx context.Context, userID, paperID uuid.UUID) (*paperText, error) {
	store := papers.New(s.Pool)
	t, err := store.VisibleText(ctx, userID, paperID)
	if errors.Is(err, papers.ErrNotFound) {
		return nil, jobs.NewPublicError("not_found", "The paper was not found.", nil)
	}
	if err != nil {
		return nil, fmt.Errorf("rag: read paper: %w", err)
	}
	pt := paperText{title: t.Title, pageStarts: t.PageStarts}
	if t.Content != "" {
		pt.source, pt.text = SourceFullText, t.Content
		passages, err := store.BodyPassages(ctx, paperID, maxDocumentChars)
		if err != nil {
			return nil, fmt.Errorf("rag: read passages: %w", err)
		}
		for _, p := range passages {
			pt.docs = append(pt.docs, llm.Document{ID: "S" + strconv.Itoa(len(pt.docs)+1), PaperID: paperID.String(),
				Title: pt.title, Section: p.Section, Page: p.PageStart, Text: p.Text})
		}
	}
	if len(pt.docs) == 0 {
		if t.Abstract == "" {
			return nil, errNoText
		}
		pt.source, pt.text, pt.pageStarts = SourceAbstract, t.Abstract, nil
		pt.docs = []llm.Document{{ID: "S1", PaperID: paperID.String(), Title: pt.title, Section: "Abstract", Text: t.Abstract}}
	}
	pt.verifier = quote.NewIndex(pt.text)
	return &pt, nil
}

// Check is the outcome of checking one quote against the paper's text.
type Check struct {
	Verified   bool    `json:"verified"`
	Similarity float64 `json:"similarity"`
	CharStart  *int    `json:"char_start,omitempty"`
	CharEnd    *int    `json:"char_end,omitempty"`
	Page       *int    `json:"page,omitempty"`
}

// check verifies q against the paper's text.
func (pt *paperText) check(q string) Check {
	r := pt.verifier.Verify(q)
	c := Check{Verified: r.Verified, Similarity: r.Similarity}
	if r.Start >= 0 {
		start, end := r.Start, r.End
		c.CharStart, c.CharEnd = &start, &end
		if len(pt.pageStarts) > 0 {
			page := pageAt(pt.pageStarts, start)
			c.Page = &page
		}
	}
	return c
}

// errUnreadable is a JSON task's answer that is not the task's JSON.
var errUnreadable = errors.New("rag: the model's answer is not the task's JSON")

// jsonTask runs a JSON task (its system prompt, a question, the documents) with
// the binding's model and decodes the answer into out.
func jsonTask(ctx context.Context, b *llmgw.Binding, task, system, question string, docs []llm.Document, out any) (*llm.ChatResponse, error) {
	resp, err := b.Collect(ctx, &llm.ChatRequest{
		Messages: []llm.Message{
			{Role: llm.RoleSystem, Content: system},
			{Role: llm.RoleUser, Content: llm.FormatRequest(question, docs)},
		},
		ResponseSchema: llm.Schema(task),
	})
	if err != nil {
		return nil, fmt.Errorf("rag: %s: %w", task, err)
	}
	if err := json.Unmarshal(llm.JSONBody(resp.Text), out); err != nil {
		return nil, fmt.Errorf("%w: %w", errUnreadable, err)
	}
	return resp, nil
}
