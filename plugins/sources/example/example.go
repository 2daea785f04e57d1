package main

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/lectern-research/lectern/sdk/paper"
	"github.com/lectern-research/lectern/sdk/protocol"
	"github.com/lectern-research/lectern/sdk/source"
)

// version is the example plugin's own version.
const version = "0.1.0"

// defaultCorpusSize is how many papers the corpus holds unless configured.
const defaultCorpusSize = 200

// Example is a paper source over a generated, deterministic corpus. Its settings:
//
//	delay        duration added to every call, honouring cancellation ("250ms"; default 0)
//	corpus_size  number of papers, 1..10000 (default 200)
type Example struct {
	log *slog.Logger

	mu     sync.RWMutex
	delay  time.Duration
	corpus []paper.Paper
	// texts are the corpus's titles and abstracts, lowercased once for Search.
	texts []string
}

var _ source.WithCitations = (*Example)(nil)

// New returns the example source with its default settings.
func New(log *slog.Logger) *Example {
	corpus := generate(defaultCorpusSize)
	return &Example{log: log, corpus: corpus, texts: searchTexts(corpus)}
}

// Describe names the plugin.
func (e *Example) Describe(context.Context, *protocol.DescribeRequest) (*protocol.DescribeResponse, error) {
	return &protocol.DescribeResponse{
		Name:        "example",
		Version:     version,
		Description: "A generated corpus of papers for trying the plugin platform out.",
	}, nil
}

// Configure applies delay and corpus_size; anything else is refused.
func (e *Example) Configure(_ context.Context, req *protocol.ConfigureRequest) (*protocol.ConfigureResponse, error) {
	delay, size := time.Duration(0), defaultCorpusSize
	for k, v := range req.Settings {
		switch k {
		case "delay":
			s, ok := v.(string)
			d, err := time.ParseDuration(s)
			if !ok || err != nil || d < 0 {
				return nil, protocol.BadRequest("setting delay must be a duration such as \"250ms\", got %v", v)
			}
			delay = d
		case "corpus_size":
			f, ok := v.(float64)
			if !ok || f != float64(int(f)) || f < 1 || f > 10000 {
				return nil, protocol.BadRequest("setting corpus_size must be a whole number from 1 to 10000, got %v", v)
			}
			size = int(f)
		default:
			return nil, protocol.BadRequest("unknown setting %q (known: delay, corpus_size)", k)
		}
	}
	e.mu.Lock()
	e.delay = delay
	if size != len(e.corpus) {
		e.corpus = generate(size)
		e.texts = searchTexts(e.corpus)
	}
	e.mu.Unlock()
	e.log.Info("configured", "delay", delay.String(), "corpus_size", size)
	return &protocol.ConfigureResponse{}, nil
}

// searchTexts is what Search matches query terms against, per paper.
func searchTexts(corpus []paper.Paper) []string {
	out := make([]string, len(corpus))
	for i, p := range corpus {
		out[i] = strings.ToLower(p.Title + " " + p.Abstract)
	}
	return out
}

// snapshot waits out the configured delay (or ctx) and returns the corpus and its
// search texts.
func (e *Example) snapshot(ctx context.Context) ([]paper.Paper, []string, error) {
	e.mu.RLock()
	delay, corpus, texts := e.delay, e.corpus, e.texts
	e.mu.RUnlock()
	if delay > 0 {
		t := time.NewTimer(delay)
		defer t.Stop()
		select {
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		case <-t.C:
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	return corpus, texts, nil
}

// Search matches every query term against title and abstract.
func (e *Example) Search(ctx context.Context, req *source.SearchRequest) (*source.Page, error) {
	terms := strings.Fields(strings.ToLower(req.Query))
	if len(terms) == 0 && req.Filters.IsZero() {
		return nil, protocol.BadRequest("a search needs a query or a filter")
	}
	corpus, texts, err := e.snapshot(ctx)
	if err != nil {
		return nil, err
	}
	// Hits point into the corpus: a search copies only the page it returns.
	var hits []*paper.Paper
	for i := range corpus {
		if allIn(terms, texts[i]) && matches(&corpus[i], &req.Filters) {
			hits = append(hits, &corpus[i])
		}
	}
	switch req.Sort {
	case source.SortNewest:
		slices.SortStableFunc(hits, func(a, b *paper.Paper) int { return b.Published.Time().Compare(a.Published.Time()) })
	case source.SortMostCited:
		slices.SortStableFunc(hits, func(a, b *paper.Paper) int { return int(*b.CitationCount - *a.CitationCount) })
	}
	offset, end, err := pageWindow(len(hits), req.Cursor, req.PageSize)
	if err != nil {
		return nil, err
	}
	page := &source.Page{Papers: make([]paper.Paper, 0, end-offset), TotalEstimate: int64(len(hits)), NextCursor: nextCursor(end, len(hits))}
	for _, p := range hits[offset:end] {
		page.Papers = append(page.Papers, *p)
	}
	return page, nil
}

// Get finds a paper by any identifier.
func (e *Example) Get(ctx context.Context, req *source.GetRequest) (*source.GetResponse, error) {
	if req.IDs.Empty() {
		return nil, protocol.BadRequest("no identifier given")
	}
	corpus, _, err := e.snapshot(ctx)
	if err != nil {
		return nil, err
	}
	if p, ok := find(corpus, req.IDs); ok {
		return &source.GetResponse{Paper: p}, nil
	}
	return nil, protocol.NotFound("no paper matches %+v", req.IDs)
}

// Recent lists papers on the topics or in the categories published since req.Since.
func (e *Example) Recent(ctx context.Context, req *source.RecentRequest) (*source.Page, error) {
	if len(req.Topics) == 0 && len(req.Categories) == 0 {
		return nil, protocol.BadRequest("recent needs topics or categories")
	}
	corpus, _, err := e.snapshot(ctx)
	if err != nil {
		return nil, err
	}
	var hits []paper.Paper
	for _, p := range corpus {
		if p.Published.Time().Before(req.Since) {
			continue
		}
		text := strings.ToLower(p.Title + " " + p.Abstract)
		topical := slices.ContainsFunc(req.Topics, func(t string) bool { return strings.Contains(text, strings.ToLower(t)) })
		inCategory := slices.ContainsFunc(req.Categories, func(c string) bool { return slices.Contains(p.Categories, c) })
		if topical || inCategory {
			hits = append(hits, p)
		}
	}
	slices.SortStableFunc(hits, func(a, b paper.Paper) int { return b.Published.Time().Compare(a.Published.Time()) })
	return pageOf(hits, req.Cursor, req.PageSize)
}

// AuthorPapers lists an author's papers since req.Since, newest first.
func (e *Example) AuthorPapers(ctx context.Context, req *source.AuthorPapersRequest) (*source.Page, error) {
	a := req.Author
	if a.Name == "" && a.ORCID == "" && a.SourceAuthorID == "" {
		return nil, protocol.BadRequest("no author given")
	}
	corpus, _, err := e.snapshot(ctx)
	if err != nil {
		return nil, err
	}
	var hits []paper.Paper
	for _, p := range corpus {
		if p.Published.Time().Before(req.Since) {
			continue
		}
		if slices.ContainsFunc(p.Authors, func(pa paper.Author) bool {
			return (a.ORCID != "" && pa.ORCID == a.ORCID) || (a.SourceAuthorID != "" && pa.SourceAuthorID == a.SourceAuthorID) ||
				(a.Name != "" && strings.EqualFold(pa.Name, a.Name))
		}) {
			hits = append(hits, p)
		}
	}
	slices.SortStableFunc(hits, func(a, b paper.Paper) int { return b.Published.Time().Compare(a.Published.Time()) })
	return pageOf(hits, req.Cursor, req.PageSize)
}

// Citations lists the papers whose references include the given paper.
func (e *Example) Citations(ctx context.Context, req *source.CitationsRequest) (*source.Page, error) {
	corpus, target, err := e.resolve(ctx, req.IDs)
	if err != nil {
		return nil, err
	}
	var hits []paper.Paper
	for _, p := range corpus {
		if slices.ContainsFunc(p.References, func(r paper.IDs) bool { return r.DOI == target.IDs.DOI }) {
			hits = append(hits, p)
		}
	}
	return pageOf(hits, req.Cursor, req.PageSize)
}

// References lists the papers the given paper cites.
func (e *Example) References(ctx context.Context, req *source.CitationsRequest) (*source.Page, error) {
	corpus, target, err := e.resolve(ctx, req.IDs)
	if err != nil {
		return nil, err
	}
	var hits []paper.Paper
	for _, r := range target.References {
		if p, ok := find(corpus, r); ok {
			hits = append(hits, p)
		}
	}
	return pageOf(hits, req.Cursor, req.PageSize)
}

func (e *Example) resolve(ctx context.Context, ids paper.IDs) ([]paper.Paper, paper.Paper, error) {
	if ids.Empty() {
		return nil, paper.Paper{}, protocol.BadRequest("no identifier given")
	}
	corpus, _, err := e.snapshot(ctx)
	if err != nil {
		return nil, paper.Paper{}, err
	}
	p, ok := find(corpus, ids)
	if !ok {
		return nil, paper.Paper{}, protocol.NotFound("no paper matches %+v", ids)
	}
	return corpus, p, nil
}

func find(corpus []paper.Paper, ids paper.IDs) (paper.Paper, bool) {
	for _, p := range corpus {
		if (ids.DOI != "" && p.IDs.DOI == strings.ToLower(ids.DOI)) ||
			(ids.ArXivID != "" && p.IDs.ArXivID == ids.ArXivID) ||
			(ids.OpenAlexID != "" && p.IDs.OpenAlexID == ids.OpenAlexID) ||
			(ids.SemanticScholarID != "" && p.IDs.SemanticScholarID == ids.SemanticScholarID) ||
			(ids.PubMedID != "" && p.IDs.PubMedID == ids.PubMedID) {
			return p, true
		}
	}
	return paper.Paper{}, false
}

func allIn(terms []string, text string) bool {
	for _, t := range terms {
		if !strings.Contains(text, t) {
			return false
		}
	}
	return true
}

func matches(p *paper.Paper, f *source.Filters) bool {
	if !f.From.IsZero() && p.Published.Time().Before(f.From.Time()) {
		return false
	}
	if !f.To.IsZero() && p.Published.Time().After(f.To.Time()) {
		return false
	}
	if len(f.Categories) > 0 && !slices.ContainsFunc(f.Categories, func(c string) bool { return slices.Contains(p.Categories, c) }) {
		return false
	}
	if len(f.Authors) > 0 && !slices.ContainsFunc(p.Authors, func(a paper.Author) bool {
		return slices.ContainsFunc(f.Authors, func(n string) bool { return strings.EqualFold(n, a.Name) })
	}) {
		return false
	}
	if f.Venue != "" && !strings.EqualFold(f.Venue, p.Venue.Name) {
		return false
	}
	if f.OpenAccessOnly && !p.OpenAccess {
		return false
	}
	if len(f.WorkTypes) > 0 && !slices.Contains(f.WorkTypes, p.WorkType) {
		return false
	}
	return true
}

// pageOf cuts one page out of hits. The cursor is the offset of the page's first
// paper, in decimal.
func pageOf(hits []paper.Paper, cursor string, size int) (*source.Page, error) {
	offset, end, err := pageWindow(len(hits), cursor, size)
	if err != nil {
		return nil, err
	}
	return &source.Page{Papers: hits[offset:end], TotalEstimate: int64(len(hits)), NextCursor: nextCursor(end, len(hits))}, nil
}

// pageWindow is where the page of a cursor starts and ends among n hits.
func pageWindow(n int, cursor string, size int) (offset, end int, err error) {
	if cursor != "" {
		offset, err = strconv.Atoi(cursor)
		if err != nil || offset < 0 || offset > n {
			return 0, 0, protocol.BadRequest("cursor %q is not one this source issued", cursor)
		}
	}
	return offset, min(offset+size, n), nil
}

// nextCursor is the cursor of the page after one ending at end, "" on the last.
func nextCursor(end, n int) string {
	if end < n {
		return strconv.Itoa(end)
	}
	return ""
}

var (
	topics = []struct{ title, category, venue string }{
		{"Graph Neural Networks for Molecule Property Prediction", "cs.LG", "NeurIPS"},
		{"Retrieval-Augmented Generation with Citation Grounding", "cs.CL", "ACL"},
		{"Quantum Error Correction with Surface Codes", "quant-ph", "Physical Review X"},
		{"Protein Structure Prediction from Sequence", "q-bio.BM", "Nature Methods"},
		{"Spaced Repetition Scheduling with Memory Models", "cs.HC", "CHI"},
		{"Sparse Attention for Long Document Summarization", "cs.CL", "EMNLP"},
	}
	givenNames  = []string{"Ada", "Alan", "Grace", "Edsger", "Barbara", "Donald", "Frances", "John", "Radia", "Tim"}
	familyNames = []string{"Lovelace", "Turing", "Hopper", "Dijkstra", "Liskov", "Knuth", "Allen", "Backus", "Perlman", "Berners-Lee"}
	institutes  = []paper.Affiliation{
		{Name: "University of Example", ROR: "https://ror.org/00example1", Country: "GB"},
		{Name: "Institute for Sample Studies", ROR: "https://ror.org/00example2", Country: "DE"},
		{Name: "Placeholder Polytechnic", Country: "US"},
	}
)

// generate builds n deterministic papers, cycling through the topics. Paper i cites
// up to three earlier papers.
func generate(n int) []paper.Paper {
	base := time.Date(2023, 1, 1, 0, 0, 0, 0, time.UTC)
	out := make([]paper.Paper, 0, n)
	for i := range n {
		t := topics[i%len(topics)]
		sum := sha1.Sum([]byte(fmt.Sprintf("lectern-example-%d", i)))
		published := paper.DayDate(base.AddDate(0, 0, i*5))
		if i%7 == 0 {
			published = paper.Date{Year: published.Year, Month: published.Month, Precision: paper.PrecisionMonth}
		}
		cites := int64((i * 37) % 500)
		p := paper.Paper{
			IDs: paper.IDs{
				DOI:               fmt.Sprintf("10.5555/lectern.example.%04d", i),
				ArXivID:           fmt.Sprintf("%02d%02d.%05d", published.Year%100, published.Month, 10000+i),
				ArXivVersion:      1 + i%3,
				OpenAlexID:        fmt.Sprintf("W9%09d", i),
				SemanticScholarID: hex.EncodeToString(sum[:]),
				PubMedID:          strconv.Itoa(30000000 + i),
			},
			Title:         fmt.Sprintf("%s, part %d", t.title, i/len(topics)+1),
			Abstract:      fmt.Sprintf("We study %s. This is example paper %d of the Lectern example source; its text is generated.", strings.ToLower(t.title), i),
			Published:     published,
			Venue:         paper.Venue{Name: t.venue, Type: "conference", Volume: strconv.Itoa(published.Year - 1990), Pages: fmt.Sprintf("%d-%d", 100+i, 112+i), Publisher: "Example Press"},
			LandingURL:    fmt.Sprintf("https://example.org/papers/%d", i),
			Source:        "example",
			CitationCount: &cites,
			Categories:    []string{t.category},
			OpenAccess:    i%2 == 0,
			WorkType:      "article",
			Language:      "en",
			UpdatedAt:     published.Time().Add(24 * time.Hour),
		}
		if p.OpenAccess {
			p.PDFURL = fmt.Sprintf("https://example.org/papers/%d.pdf", i)
			p.License = "CC-BY-4.0"
		}
		for a := range 3 {
			k := (i + a*3) % len(givenNames)
			p.Authors = append(p.Authors, paper.Author{
				Name:           givenNames[k] + " " + familyNames[k],
				GivenName:      givenNames[k],
				FamilyName:     familyNames[k],
				ORCID:          fmt.Sprintf("0000-0002-%04d-%04d", 1000+k, 1000+k),
				Affiliations:   []paper.Affiliation{institutes[(i+a)%len(institutes)]},
				SourceAuthorID: fmt.Sprintf("A%d", k),
			})
		}
		for r := 1; r <= 3 && i-r*4 >= 0; r++ {
			p.References = append(p.References, paper.IDs{DOI: fmt.Sprintf("10.5555/lectern.example.%04d", i-r*4)})
		}
		out = append(out, p)
	}
	return out
}
