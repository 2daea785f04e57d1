package search

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"

	"github.com/google/uuid"

	"github.com/lectern-research/lectern/host/internal/papers"
	"github.com/lectern-research/lectern/sdk/paper"
	"github.com/lectern-research/lectern/sdk/protocol"
	"github.com/lectern-research/lectern/sdk/source"
)

// Ways a Lookup found a paper.
const (
	ByDOI   = "doi"
	ByArxiv = "arxiv_id"
	ByTitle = "title"
)

// titlePageSize is how many results a title lookup asks each source for: the
// exact match, when a source has it, is among its first few.
const titlePageSize = 5

// minTitleKey is the shortest title (letters and digits) a title lookup trusts:
// shorter ones ("Introduction", a garbled line) match too many records.
const minTitleKey = 12

// LookupParams name the paper a Lookup looks for. Any may be empty.
type LookupParams struct {
	DOI     string
	ArxivID string
	// Title and FirstAuthor (the first author's name as printed) find the paper
	// when no source knows its identifiers: only a record with exactly the same
	// title (compared without case, spaces or punctuation) is taken, and only
	// when its first author has the same surname, if both sides name authors.
	Title       string
	FirstAuthor string
}

// Found is the public record of a paper that Lookup put together.
type Found struct {
	// Paper is the record: the first source that knew the paper gave it, and the
	// sources after it filled what it lacked.
	Paper paper.Paper
	// From says which source gave each field (papers.Field... names).
	From map[string]string
	// Sources are the sources that knew the paper, in the order asked.
	Sources []string
	// By says how it was found: ByDOI, ByArxiv or ByTitle.
	By string
}

// Lookup asks the running sources for the public record of a paper, without
// writing anything to the corpus: first every source that looks papers up by
// DOI, then by arXiv id, then a title search in each. Each answer is recorded in
// the user's source health, and a source the user's backoff skips is not asked.
// No source running at all is ErrNoSources. Nobody knowing the paper is ErrUnresolved; a source that failed, timed out or
// was skipped adds ErrSourcesUnreachable (both when some answered and some did
// not), so the caller knows that asking later might find it.
func (s *Service) Lookup(ctx context.Context, userID uuid.UUID, p LookupParams) (Found, error) {
	ask, skipped, err := s.askable(ctx, userID)
	if err != nil {
		return Found{}, err
	}
	if len(ask) == 0 && !skipped {
		return Found{}, ErrNoSources
	}
	l := &lookup{s: s, user: userID, sources: ask, unreachable: skipped}
	doi := papers.NormalizeDOI(p.DOI)
	arxiv, _, _ := papers.NormalizeArxivID(p.ArxivID)
	if arxiv == "" {
		arxiv = papers.ArxivIDOfDOI(doi)
	}
	if doi != "" {
		if f, ok, err := l.get(ctx, paper.IDs{DOI: doi}, ByDOI); ok || err != nil {
			return f, err
		}
	}
	if arxiv != "" {
		if f, ok, err := l.get(ctx, paper.IDs{ArXivID: arxiv}, ByArxiv); ok || err != nil {
			return f, err
		}
	}
	if len(titleKey(p.Title)) >= minTitleKey {
		if f, ok, err := l.byTitle(ctx, p.Title, p.FirstAuthor); ok || err != nil {
			return f, err
		}
	}
	if l.unreachable {
		return Found{}, fmt.Errorf("%w, %w", ErrUnresolved, ErrSourcesUnreachable)
	}
	return Found{}, ErrUnresolved
}

// askable lists the running sources that the user's backoff does not skip, and
// whether it skipped any.
func (s *Service) askable(ctx context.Context, userID uuid.UUID) ([]Named, bool, error) {
	backoff, err := s.backoffs(ctx, userID)
	if err != nil {
		return nil, false, err
	}
	now := s.now()
	var ask []Named
	skipped := false
	for _, n := range s.sources() {
		if until, ok := backoff[n.Name]; ok && until.After(now) {
			skipped = true
			continue
		}
		ask = append(ask, n)
	}
	return ask, skipped, nil
}

// lookup is one Lookup under way.
type lookup struct {
	s           *Service
	user        uuid.UUID
	sources     []Named
	unreachable bool // a source failed, timed out or was skipped
}

// call runs one request to a source under the search deadline and records its
// health. It reports whether the source answered (found or not), and the answer.
func (l *lookup) call(ctx context.Context, name string, do func(ctx context.Context) error) (bool, error) {
	cctx, cancel := context.WithTimeout(ctx, l.s.timeout)
	start := time.Now()
	err := do(cctx)
	cancel()
	o := outcome{report: SourceReport{Name: name, Status: StatusOK, DurationMS: time.Since(start).Milliseconds()}}
	var perr *protocol.Error
	answered := true
	switch {
	case err == nil, errors.Is(err, protocol.ErrNotFound), errors.Is(err, protocol.ErrBadRequest):
		// The source answered, whether or not it knows the paper.
	case ctx.Err() != nil:
		return false, ctx.Err()
	case errors.Is(err, context.DeadlineExceeded):
		o.report.Status, o.report.Error, answered = StatusTimeout, fmt.Sprintf("no answer within %s", l.s.timeout), false
	case errors.As(err, &perr) && perr.Code == protocol.CodeRateLimited:
		o.report.Status, o.report.Error, o.retry, answered = StatusLimited, failureText(err), perr.RetryAfter, false
	default:
		o.report.Status, o.report.Error, answered = StatusFailed, failureText(err), false
	}
	if !answered {
		l.unreachable = true
	}
	// The health is written even when the lookup's own deadline has passed.
	hctx, hcancel := context.WithTimeout(context.WithoutCancel(ctx), healthTimeout)
	defer hcancel()
	if herr := l.s.recordHealth(hctx, l.user, []outcome{o}); herr != nil {
		return false, herr
	}
	return answered && err == nil, nil
}

// get asks every source that looks papers up by identifier for ids, and folds
// what the ones that know it say into one record.
func (l *lookup) get(ctx context.Context, ids paper.IDs, by string) (Found, bool, error) {
	f := Found{From: map[string]string{}, By: by}
	for _, n := range l.sources {
		g, ok := n.Searcher.(Getter)
		if !ok {
			continue
		}
		var resp *source.GetResponse
		found, err := l.call(ctx, n.Name, func(ctx context.Context) error {
			var err error
			resp, err = g.Get(ctx, &source.GetRequest{IDs: ids})
			return err
		})
		if err != nil {
			return Found{}, false, err
		}
		if found && resp != nil && strings.TrimSpace(resp.Paper.Title) != "" {
			f.add(resp.Paper, n.Name)
		}
	}
	return f, len(f.Sources) > 0, nil
}

// byTitle searches every source for title and folds the records that are
// exactly that paper (see LookupParams) into one.
func (l *lookup) byTitle(ctx context.Context, title, firstAuthor string) (Found, bool, error) {
	f := Found{From: map[string]string{}, By: ByTitle}
	want := titleKey(title)
	for _, n := range l.sources {
		var page *source.Page
		answered, err := l.call(ctx, n.Name, func(ctx context.Context) error {
			var err error
			page, err = n.Searcher.Search(ctx, &source.SearchRequest{Query: title, PageSize: titlePageSize})
			return err
		})
		if err != nil {
			return Found{}, false, err
		}
		if !answered || page == nil {
			continue
		}
		for _, p := range page.Papers {
			if titleKey(p.Title) == want && sameFirstAuthor(firstAuthor, p.Authors) {
				f.add(p, n.Name)
				break
			}
		}
	}
	return f, len(f.Sources) > 0, nil
}

// add folds one source's record into f: the first record is taken whole, later
// ones fill only what is still missing (a more precise date, a higher citation
// count), and From names the source of every field that was set.
func (f *Found) add(p paper.Paper, name string) {
	first := len(f.Sources) == 0
	f.Sources = append(f.Sources, name)
	if first {
		f.Paper = p
		f.Paper.IDs.DOI = papers.NormalizeDOI(p.IDs.DOI)
		for field, set := range fieldsOf(&f.Paper) {
			if set {
				f.From[field] = name
			}
		}
		return
	}
	before, count := fieldsOf(&f.Paper), cites(f.Paper)
	fill(&f.Paper, &p)
	if f.Paper.IDs.DOI == "" {
		f.Paper.IDs.DOI = papers.NormalizeDOI(p.IDs.DOI)
	}
	for field, set := range fieldsOf(&f.Paper) {
		if set && !before[field] {
			f.From[field] = name
		}
	}
	if before[papers.FieldCitationCount] && cites(f.Paper) > count {
		f.From[papers.FieldCitationCount] = name // this source counts more citations
	}
}

// fieldsOf says which provenance fields a record has.
func fieldsOf(p *paper.Paper) map[string]bool {
	return map[string]bool{
		papers.FieldTitle:         strings.TrimSpace(p.Title) != "",
		papers.FieldAuthors:       len(p.Authors) > 0,
		papers.FieldAbstract:      strings.TrimSpace(p.Abstract) != "",
		papers.FieldYear:          p.Published.Precision != paper.PrecisionUnknown,
		papers.FieldVenue:         strings.TrimSpace(p.Venue.Name) != "",
		papers.FieldDOI:           p.IDs.DOI != "",
		papers.FieldArxivID:       p.IDs.ArXivID != "",
		papers.FieldCitationCount: p.CitationCount != nil,
		papers.FieldPDFURL:        p.PDFURL != "",
	}
}

// sameFirstAuthor reports whether the record's first author has the surname of
// printed, the first author's name as the PDF prints it; true when either side
// names nobody.
func sameFirstAuthor(printed string, authors []paper.Author) bool {
	mine := Surname(printed)
	if mine == "" || len(authors) == 0 {
		return true
	}
	a := authors[0]
	theirs := Surname(a.FamilyName)
	if theirs == "" {
		theirs = Surname(a.Name)
	}
	return theirs == "" || theirs == mine
}

// Surname is the last word of a name, lowercased and reduced to its letters:
// "Andres M. Bran" and "M. Bran" are both "bran". A name written "Bran, Andres"
// gives the part before the comma.
func Surname(name string) string {
	if i := strings.Index(name, ","); i > 0 {
		name = name[:i]
	}
	words := strings.Fields(name)
	if len(words) == 0 {
		return ""
	}
	return strings.Map(func(r rune) rune {
		if unicode.IsLetter(r) {
			return unicode.ToLower(r)
		}
		return -1
	}, words[len(words)-1])
}
