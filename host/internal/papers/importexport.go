package papers

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/lectern-research/lectern/host/internal/bibio"
)

// MaxImportBytes bounds an imported file.
const MaxImportBytes = 10 << 20

// ImportResult says what an import did.
type ImportResult struct {
	Format   string            `json:"format"`
	Imported int               `json:"imported"`
	Existing int               `json:"already_in_library"`
	Failed   int               `json:"failed"`
	Errors   []bibio.LineError `json:"errors"`
	PaperIDs []uuid.UUID       `json:"paper_ids"`

	// failures are the causes of entries that failed for a reason other than their
	// own (the database's text), for the handler to log with the request id.
	failures []entryFailure
}

// entryFailure is the cause of one entry that was not saved.
type entryFailure struct {
	line int
	err  error
}

// entryInput turns a parsed record into a corpus input.
func entryInput(e bibio.Entry, format string) Input {
	in := Input{Title: e.Title, DOI: e.DOI, ArxivID: e.ArxivID, PubMedID: e.PubMedID, Abstract: e.Abstract,
		Venue: e.Venue, URL: e.URL, PDFURL: e.PDFURL, Source: "import",
		Metadata: map[string]any{"import_format": format}}
	if e.Key != "" {
		in.Metadata["citation_key"] = e.Key
	}
	if e.Type != "" {
		in.Metadata["entry_type"] = e.Type
	}
	for k, v := range map[string]string{"volume": e.Volume, "issue": e.Issue, "pages": e.Pages, "publisher": e.Publisher} {
		if v != "" {
			in.Metadata[k] = v
		}
	}
	for _, a := range e.Authors {
		in.Authors = append(in.Authors, Author{Name: displayName(a)})
	}
	if e.Year > 0 && e.Year < 10000 {
		month, day, prec := 1, 1, "year"
		if e.Month >= 1 && e.Month <= 12 {
			month, prec = e.Month, "month"
			if e.Day >= 1 && e.Day <= 31 {
				day, prec = e.Day, "day"
			}
		}
		d := time.Date(e.Year, time.Month(month), day, 0, 0, 0, 0, time.UTC)
		in.PublicationDate, in.DatePrecision = &d, prec
	}
	return in
}

// displayName turns "Family, Given" into "Given Family".
func displayName(a string) string {
	if family, given, ok := strings.Cut(a, ","); ok && strings.TrimSpace(given) != "" {
		return strings.TrimSpace(given) + " " + strings.TrimSpace(family)
	}
	return strings.TrimSpace(a)
}

// ImportEntries adds parsed entries to the user's library in one transaction, each
// entry under its own savepoint: an entry that fails is reported by its line (in
// Errors) and undoes nothing else. format is recorded in each new paper's metadata.
func (st *Store) ImportEntries(ctx context.Context, userID uuid.UUID, format string, entries []bibio.Entry) (ImportResult, error) {
	res := ImportResult{Format: format, PaperIDs: []uuid.UUID{}}
	err := pgx.BeginFunc(ctx, st.pool, func(tx pgx.Tx) error {
		for _, e := range entries {
			id, already, err := importOne(ctx, tx, e, format, userID)
			if err != nil {
				msg := "The entry has no title."
				if !errors.Is(err, errNoTitle) {
					msg = "This entry could not be saved; check its fields."
					res.failures = append(res.failures, entryFailure{line: e.Line, err: err})
				}
				res.Errors = append(res.Errors, bibio.LineError{Line: e.Line, Message: msg})
				continue
			}
			res.PaperIDs = append(res.PaperIDs, id)
			if already {
				res.Existing++
			} else {
				res.Imported++
			}
		}
		return nil
	})
	if err != nil {
		return ImportResult{}, fmt.Errorf("papers: import: %w", err)
	}
	res.Failed = len(res.Errors)
	return res, nil
}

// importOne imports one entry under a savepoint, so a failure undoes only it.
func importOne(ctx context.Context, tx pgx.Tx, e bibio.Entry, format string, user uuid.UUID) (uuid.UUID, bool, error) {
	var id uuid.UUID
	var already bool
	err := pgx.BeginFunc(ctx, tx, func(sp pgx.Tx) error {
		var err error
		id, already, err = UpsertForUserTx(ctx, sp, entryInput(e, format), user, "import")
		return err
	})
	if errors.Is(err, ErrNoIdentity) {
		return uuid.Nil, false, errNoTitle
	}
	return id, already, err
}

var errNoTitle = errors.New("entry has no title")

type exportFormat struct {
	write       func(io.Writer, []bibio.Entry) error
	contentType string
	ext         string
}

var exportFormats = map[string]exportFormat{
	"bibtex":  {bibio.WriteBibTeX, "application/x-bibtex; charset=utf-8", "bib"},
	"ris":     {bibio.WriteRIS, "application/x-research-info-systems; charset=utf-8", "ris"},
	"csljson": {bibio.WriteCSLJSON, "application/vnd.citationstyles.csl+json; charset=utf-8", "json"},
}

// MaxExportIDs is the most papers one export may name by id: a selection from
// the dashboard is one page of rows, and 500 ids keep the request line well under
// the API's header limit.
const MaxExportIDs = 500

// MaxExportCorpus bounds an export of everything matching a filter across the
// corpus ("All discovered"); an export of the caller's own library has no bound.
const MaxExportCorpus = 5000

// ExportParams select the papers of an export. With IDs, those papers the caller
// may see, in that order; an id of a paper they may not see, or of none, is left
// out exactly as if it had not been named. Without IDs, every paper Filter's view,
// scope and text select (its Cursor and Limit are ignored), in its sort's order:
// the zero value is the whole library, trash left out, newest first.
type ExportParams struct {
	IDs    []uuid.UUID
	Filter FeedParams
}

// ExportEntries lists the papers p selects for userID as neutral entries, for
// bibio to write. It fails with a *ViewError for an unknown view, scope or sort.
func (st *Store) ExportEntries(ctx context.Context, userID uuid.UUID, p ExportParams) ([]bibio.Entry, error) {
	var rows pgx.Rows
	var err error
	if len(p.IDs) > 0 {
		rows, err = st.pool.Query(ctx, `SELECT `+itemColumns+`
			FROM unnest($2::uuid[]) WITH ORDINALITY AS sel (id, n) JOIN papers p ON p.id = sel.id`+itemJoins+`
			WHERE `+visiblePredicate+` ORDER BY sel.n`, userID, p.IDs)
	} else {
		rows, err = st.exportMatching(ctx, userID, p.Filter)
	}
	if err != nil {
		return nil, err
	}
	items, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Item, error) { return scanItem(r) })
	if err != nil {
		return nil, fmt.Errorf("papers: export: %w", err)
	}
	out := make([]bibio.Entry, 0, len(items))
	for _, it := range items {
		out = append(out, exportEntry(it))
	}
	return out, nil
}

// exportMatching queries every paper f selects, in f's sort order; at most
// MaxExportCorpus in corpus scope.
func (st *Store) exportMatching(ctx context.Context, userID uuid.UUID, f FeedParams) (pgx.Rows, error) {
	if f.View == "" {
		f.View = DefaultView
	}
	if f.Scope == "" {
		f.Scope = ScopeLibrary
	}
	if f.Sort == "" {
		f.Sort = SortAdded
	}
	order, err := feedOrderOf(f.Sort, f.Scope)
	if err != nil {
		return nil, err
	}
	from, where, args, err := feedFilter(userID, f)
	if err != nil {
		return nil, err
	}
	limit := ""
	if f.Scope == ScopeCorpus {
		limit = fmt.Sprintf(" LIMIT %d", MaxExportCorpus)
	}
	rows, err := st.pool.Query(ctx, `SELECT `+itemColumns+` `+from+where+
		` ORDER BY `+order.key+` `+order.dir+`, `+order.id+` `+order.dir+limit, args...)
	if err != nil {
		return nil, fmt.Errorf("papers: export: %w", err)
	}
	return rows, nil
}

// exportEntry turns a paper into a neutral entry.
func exportEntry(it Item) bibio.Entry {
	e := bibio.Entry{Title: it.Title, Venue: it.Venue, DOI: it.DOI, ArxivID: it.ArxivID, PubMedID: it.PubMedID,
		URL: it.URL, PDFURL: it.PDFURL, Abstract: it.Abstract, Type: "article"}
	if t, ok := it.Metadata["entry_type"].(string); ok {
		e.Type = t
	} else if it.ArxivID != "" && it.Venue == "" {
		e.Type = "misc"
	}
	for k, dst := range map[string]*string{"volume": &e.Volume, "issue": &e.Issue, "pages": &e.Pages, "publisher": &e.Publisher} {
		if v, ok := it.Metadata[k].(string); ok {
			*dst = v
		}
	}
	for _, au := range it.Authors {
		e.Authors = append(e.Authors, bibName(au.Name))
	}
	if it.PublicationDate != nil {
		e.Year = it.PublicationDate.Year()
		if it.DatePrecision == "month" || it.DatePrecision == "day" {
			e.Month = int(it.PublicationDate.Month())
		}
		if it.DatePrecision == "day" {
			e.Day = it.PublicationDate.Day()
		}
	}
	return e
}

// bibName turns "Given Family" into "Family, Given" for reference formats.
func bibName(name string) string {
	if strings.Contains(name, ",") {
		return name
	}
	f := strings.Fields(name)
	if len(f) < 2 {
		return name
	}
	return f[len(f)-1] + ", " + strings.Join(f[:len(f)-1], " ")
}
