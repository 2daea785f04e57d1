package plugintest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/lectern-research/lectern/sdk/paper"
	"github.com/lectern-research/lectern/sdk/protocol"
	"github.com/lectern-research/lectern/sdk/source"
)

// missingDOI is a DOI no source has.
const missingDOI = "10.0000/lectern-conformance-missing"

func (r *runner) sourceChecks() []check {
	return []check{
		{"search_well_formed", r.searchWellFormed},
		{"pagination_ends", r.paginationEnds},
		{"get_round_trip", r.getRoundTrip},
		{"recent_and_author", r.recentAndAuthor},
		{"typed_errors", r.sourceTypedErrors},
		{"citations_capability", r.citationsCapability},
		{"cancellation_honoured", r.cancellation},
	}
}

func (r *runner) src() source.WithCitations {
	return r.conn.Plugin.(source.WithCitations)
}

func (r *runner) search(ctx context.Context, cursor string) (*source.Page, error) {
	return r.src().Search(ctx, &source.SearchRequest{
		Credentials: r.opts.Credentials, Query: r.opts.Query, Cursor: cursor, PageSize: r.opts.PageSize,
	})
}

func (r *runner) wellFormed(where string, papers []paper.Paper) error {
	for i := range papers {
		p := &papers[i]
		if err := p.Validate(); err != nil {
			return fmt.Errorf("%s: paper %d: %w", where, i+1, err)
		}
		if p.Source != r.conn.Info.Name {
			return fmt.Errorf("%s: paper %q has source %q, want the plugin's name %q", where, p.Title, p.Source, r.conn.Info.Name)
		}
	}
	return nil
}

func (r *runner) firstPaper(ctx context.Context) (paper.Paper, error) {
	page, err := r.search(ctx, "")
	if err != nil {
		return paper.Paper{}, fmt.Errorf("search %q: %w", r.opts.Query, err)
	}
	if len(page.Papers) == 0 {
		return paper.Paper{}, fmt.Errorf("search %q found nothing; set Options.Query to a search that finds papers", r.opts.Query)
	}
	return page.Papers[0], nil
}

func (r *runner) searchWellFormed(ctx context.Context) error {
	page, err := r.search(ctx, "")
	if err != nil {
		return fmt.Errorf("search %q: %w", r.opts.Query, err)
	}
	if len(page.Papers) == 0 {
		return fmt.Errorf("search %q found nothing; set Options.Query to a search that finds papers", r.opts.Query)
	}
	if len(page.Papers) > r.opts.PageSize {
		return fmt.Errorf("asked for %d papers a page, got %d", r.opts.PageSize, len(page.Papers))
	}
	return r.wellFormed("search", page.Papers)
}

func key(p *paper.Paper) string {
	return fmt.Sprintf("%+v", p.IDs)
}

func (r *runner) paginationEnds(ctx context.Context) error {
	seenCursor := map[string]bool{}
	seenPaper := map[string]int{}
	cursor := ""
	for n := 1; n <= r.opts.MaxPages; n++ {
		page, err := r.search(ctx, cursor)
		if err != nil {
			return fmt.Errorf("page %d: %w", n, err)
		}
		if len(page.Papers) > r.opts.PageSize {
			return fmt.Errorf("page %d holds %d papers, more than the %d asked for", n, len(page.Papers), r.opts.PageSize)
		}
		if err := r.wellFormed(fmt.Sprintf("page %d", n), page.Papers); err != nil {
			return err
		}
		for i := range page.Papers {
			k := key(&page.Papers[i])
			if first, dup := seenPaper[k]; dup {
				return fmt.Errorf("paper %q appears on page %d and again on page %d", page.Papers[i].Title, first, n)
			}
			seenPaper[k] = n
		}
		if page.NextCursor == "" {
			return nil
		}
		if seenCursor[page.NextCursor] {
			return fmt.Errorf("page %d returned cursor %q again: pagination loops", n, page.NextCursor)
		}
		if len(page.Papers) == 0 {
			return fmt.Errorf("page %d is empty but has a next cursor", n)
		}
		seenCursor[page.NextCursor] = true
		cursor = page.NextCursor
	}
	return fmt.Errorf("search %q did not end within %d pages of %d; choose a narrower Options.Query or raise MaxPages", r.opts.Query, r.opts.MaxPages, r.opts.PageSize)
}

func (r *runner) getRoundTrip(ctx context.Context) error {
	first, err := r.firstPaper(ctx)
	if err != nil {
		return err
	}
	got, err := r.src().Get(ctx, &source.GetRequest{Credentials: r.opts.Credentials, IDs: first.IDs})
	if err != nil {
		return fmt.Errorf("get %+v (from search): %w", first.IDs, err)
	}
	if err := r.wellFormed("get", []paper.Paper{got.Paper}); err != nil {
		return err
	}
	a, b := first.IDs, got.Paper.IDs
	if (a.DOI == "" || a.DOI != b.DOI) && (a.ArXivID == "" || a.ArXivID != b.ArXivID) &&
		(a.OpenAlexID == "" || a.OpenAlexID != b.OpenAlexID) && (a.SemanticScholarID == "" || a.SemanticScholarID != b.SemanticScholarID) &&
		(a.PubMedID == "" || a.PubMedID != b.PubMedID) && (a.SourceID == "" || a.SourceID != b.SourceID) {
		return fmt.Errorf("get %+v returned a paper with other identifiers %+v", a, b)
	}
	return nil
}

func (r *runner) recentAndAuthor(ctx context.Context) error {
	first, err := r.firstPaper(ctx)
	if err != nil {
		return err
	}
	since := time.Date(1900, 1, 1, 0, 0, 0, 0, time.UTC)
	recent, err := r.src().Recent(ctx, &source.RecentRequest{
		Credentials: r.opts.Credentials, Topics: []string{r.opts.Query}, Categories: first.Categories,
		Since: since, PageSize: r.opts.PageSize,
	})
	if err != nil {
		return fmt.Errorf("recent: %w", err)
	}
	if err := r.wellFormed("recent", recent.Papers); err != nil {
		return err
	}
	if len(first.Authors) == 0 {
		return nil
	}
	a := first.Authors[0]
	byAuthor, err := r.src().AuthorPapers(ctx, &source.AuthorPapersRequest{
		Credentials: r.opts.Credentials,
		Author:      source.AuthorRef{Name: a.Name, ORCID: a.ORCID, SourceAuthorID: a.SourceAuthorID},
		Since:       since, PageSize: r.opts.PageSize,
	})
	if err != nil {
		return fmt.Errorf("author papers of %q: %w", a.Name, err)
	}
	return r.wellFormed("author papers", byAuthor.Papers)
}

func wantCode(what string, err error, want *protocol.Error) error {
	if err == nil {
		return fmt.Errorf("%s succeeded, want a %s error", what, want.Code)
	}
	if !errors.Is(err, want) {
		return fmt.Errorf("%s failed with %v (code %q), want a typed %s error", what, err, protocol.CodeOf(err), want.Code)
	}
	return nil
}

func (r *runner) sourceTypedErrors(ctx context.Context) error {
	s, creds := r.src(), r.opts.Credentials
	_, err := s.Search(ctx, &source.SearchRequest{Credentials: creds})
	if err := wantCode("search with no query and no filter", err, protocol.ErrBadRequest); err != nil {
		return err
	}
	_, err = s.Get(ctx, &source.GetRequest{Credentials: creds})
	if err := wantCode("get with no identifier", err, protocol.ErrBadRequest); err != nil {
		return err
	}
	_, err = s.Get(ctx, &source.GetRequest{Credentials: creds, IDs: paper.IDs{DOI: missingDOI}})
	if err := wantCode("get of doi "+missingDOI, err, protocol.ErrNotFound); err != nil {
		return err
	}
	_, err = s.Search(ctx, &source.SearchRequest{Credentials: creds, Query: r.opts.Query, Cursor: "lectern-conformance-bogus-cursor"})
	return wantCode("search with a cursor the source never issued", err, protocol.ErrBadRequest)
}

func (r *runner) citationsCapability(ctx context.Context) error {
	first, err := r.firstPaper(ctx)
	if err != nil {
		return err
	}
	req := &source.CitationsRequest{Credentials: r.opts.Credentials, IDs: first.IDs, PageSize: r.opts.PageSize}
	cites, cerr := r.src().Citations(ctx, req)
	refs, rerr := r.src().References(ctx, req)
	if !r.conn.Info.HasCapability(protocol.CapabilityCitations) {
		if err := wantCode("citations without the citations capability", cerr, protocol.ErrUnsupported); err != nil {
			return err
		}
		return wantCode("references without the citations capability", rerr, protocol.ErrUnsupported)
	}
	if cerr != nil {
		return fmt.Errorf("citations of %+v: %w", first.IDs, cerr)
	}
	if rerr != nil {
		return fmt.Errorf("references of %+v: %w", first.IDs, rerr)
	}
	if err := r.wellFormed("citations", cites.Papers); err != nil {
		return err
	}
	return r.wellFormed("references", refs.Papers)
}

// cancellation cancels a burst of searches mid-flight: each must end with the
// caller's context error (or a result, when it was faster than the cancel), and the
// plugin must answer a normal search right after.
func (r *runner) cancellation(ctx context.Context) error {
	already, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := r.search(already, ""); !errors.Is(err, context.Canceled) {
		return fmt.Errorf("search with a cancelled context returned %v, want context.Canceled", err)
	}
	const burst = 16
	errs := make([]error, burst)
	var wg sync.WaitGroup
	for i := range burst {
		wg.Go(func() {
			cctx, cancel := context.WithTimeout(ctx, time.Duration(i%4)*time.Millisecond+time.Millisecond)
			defer cancel()
			_, err := r.search(cctx, "")
			if err != nil && !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, context.Canceled) {
				errs[i] = fmt.Errorf("cancelled search %d failed with %v, want the context's error", i+1, err)
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	if _, err := r.search(ctx, ""); err != nil {
		return fmt.Errorf("search after cancelled ones: %w", err)
	}
	return nil
}
