package papers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// Input is a paper as a source or an import describes it, before it joins the corpus.
type Input struct {
	DOI               string
	ArxivID           string
	ArxivVersion      int
	OpenAlexID        string
	SemanticScholarID string
	PubMedID          string
	Title             string
	Authors           []Author
	Abstract          string
	PublicationDate   *time.Time
	DatePrecision     string // year, month or day; required with PublicationDate
	Venue             string
	URL               string
	PDFURL            string
	Source            string
	CitationCount     *int
	Metadata          map[string]any
	// Visibility is public for metadata from a public source, private for a user's
	// own upload or import. Default private.
	Visibility string
}

// ErrNoIdentity means an input has neither a title nor an identifier.
var ErrNoIdentity = errors.New("papers: a paper needs a title")

// normalize cleans identifiers and bounds fields to what the schema accepts.
func (in *Input) normalize() error {
	in.Title = strings.Join(strings.Fields(in.Title), " ")
	if in.Title == "" {
		return ErrNoIdentity
	}
	if len(in.Title) > 1000 {
		in.Title = in.Title[:1000]
	}
	in.DOI = NormalizeDOI(in.DOI)
	if in.ArxivID != "" {
		id, v, ok := NormalizeArxivID(in.ArxivID)
		if !ok {
			in.ArxivID = ""
		} else {
			in.ArxivID = id
			if in.ArxivVersion == 0 {
				in.ArxivVersion = v
			}
		}
	}
	if in.ArxivID == "" {
		in.ArxivVersion = 0
	}
	if len(in.Abstract) > 50000 {
		in.Abstract = in.Abstract[:50000]
	}
	if len(in.URL) > 2000 {
		in.URL = ""
	}
	if len(in.PDFURL) > 2000 {
		in.PDFURL = ""
	}
	if in.PublicationDate == nil {
		in.DatePrecision = ""
	} else if in.DatePrecision == "" {
		in.DatePrecision = "day"
	}
	if in.Visibility != "public" {
		in.Visibility = "private"
	}
	if in.Source == "" {
		in.Source = "manual"
	}
	if in.Authors == nil {
		in.Authors = []Author{}
	}
	if in.Metadata == nil {
		in.Metadata = map[string]any{}
	}
	return nil
}

func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// UpsertTx merges in into the corpus and returns the paper's id and whether it is
// new. A paper is the same paper when any identifier matches (DOI, arXiv id, OpenAlex,
// Semantic Scholar or PubMed id). An existing row keeps what it has and gains what it
// lacks: identifiers, abstract, authors, a more precise date, URLs, the higher
// citation count. Only shared rows and discoveredBy's own private rows are
// candidates: a public record never merges into, or publishes, another user's
// private paper, and never makes a private row public (the shared row it needs is
// its own; see migration 0015). discoveredBy is the user who brought the paper in;
// nil for instance-level discovery.
func UpsertTx(ctx context.Context, tx pgx.Tx, in Input, discoveredBy *uuid.UUID) (uuid.UUID, bool, error) {
	if err := in.normalize(); err != nil {
		return uuid.Nil, false, err
	}
	for attempt := 0; attempt < 3; attempt++ {
		id, found, err := match(ctx, tx, &in, discoveredBy)
		if err != nil {
			return uuid.Nil, false, err
		}
		if found {
			return id, false, merge(ctx, tx, id, &in)
		}
		id, inserted, err := insert(ctx, tx, &in, discoveredBy)
		if err != nil {
			return uuid.Nil, false, err
		}
		if inserted {
			return id, true, nil
		}
		// Someone inserted the same work meanwhile: match again.
	}
	return uuid.Nil, false, fmt.Errorf("papers: upsert %q: kept conflicting with concurrent writers", in.Title)
}

// candidate is an existing row that shares an identifier with a record. shared
// is a public row or one the instance brought in; otherwise it is the caller's own
// private row.
type candidate struct {
	id                     uuid.UUID
	doi, arxiv, oa, s2, pm string
	shared                 bool
}

// candidatesSQL finds the rows that may take a record: shared rows, and private
// rows of $6 (NULL: none) — never another user's private paper.
const candidatesSQL = `
	SELECT id, coalesce(doi, ''), coalesce(arxiv_id, ''), coalesce(openalex_id, ''),
	       coalesce(semantic_scholar_id, ''), coalesce(pubmed_id, ''),
	       visibility = 'public' OR discovered_by IS NULL
	  FROM papers
	 WHERE (%s) AND (visibility = 'public' OR discovered_by IS NULL OR discovered_by = $6)`

func scanCandidate(r pgx.CollectableRow) (candidate, error) {
	var c candidate
	err := r.Scan(&c.id, &c.doi, &c.arxiv, &c.oa, &c.s2, &c.pm, &c.shared)
	return c, err
}

func (c candidate) matches(in *Input) bool {
	return (in.DOI != "" && c.doi == in.DOI) || (in.ArxivID != "" && c.arxiv == in.ArxivID) ||
		(in.OpenAlexID != "" && c.oa == in.OpenAlexID) || (in.SemanticScholarID != "" && c.s2 == in.SemanticScholarID) ||
		(in.PubMedID != "" && c.pm == in.PubMedID)
}

// pick chooses in's row among the candidates, preferring a DOI match, then arXiv,
// then the other identifiers, then a shared row over the caller's own private
// copy, and drops from in the identifiers another candidate holds, so the merge
// cannot collide with that row.
func pick(in *Input, cands []candidate) (uuid.UUID, bool) {
	if len(cands) == 0 {
		return uuid.Nil, false
	}
	score := func(c candidate) int {
		switch {
		case in.DOI != "" && c.doi == in.DOI:
			return 5
		case in.ArxivID != "" && c.arxiv == in.ArxivID:
			return 4
		case in.OpenAlexID != "" && c.oa == in.OpenAlexID:
			return 3
		case in.SemanticScholarID != "" && c.s2 == in.SemanticScholarID:
			return 2
		}
		return 1
	}
	rank := func(c candidate) int {
		r := 2 * score(c)
		if c.shared {
			r++
		}
		return r
	}
	best := slices.MaxFunc(cands, func(a, b candidate) int { return rank(a) - rank(b) })
	for _, c := range cands {
		if c.id == best.id {
			continue
		}
		if in.DOI == c.doi {
			in.DOI = ""
		}
		if in.ArxivID == c.arxiv {
			in.ArxivID, in.ArxivVersion = "", 0
		}
		if in.OpenAlexID == c.oa {
			in.OpenAlexID = ""
		}
		if in.SemanticScholarID == c.s2 {
			in.SemanticScholarID = ""
		}
		if in.PubMedID == c.pm {
			in.PubMedID = ""
		}
	}
	return best.id, true
}

// match finds the existing row for in (see pick) among those owner may merge into
// (see candidatesSQL).
func match(ctx context.Context, tx pgx.Tx, in *Input, owner *uuid.UUID) (uuid.UUID, bool, error) {
	rows, err := tx.Query(ctx, fmt.Sprintf(candidatesSQL, `($1 <> '' AND doi = $1) OR ($2 <> '' AND arxiv_id = $2)
	    OR ($3 <> '' AND openalex_id = $3) OR ($4 <> '' AND semantic_scholar_id = $4) OR ($5 <> '' AND pubmed_id = $5)`),
		in.DOI, in.ArxivID, in.OpenAlexID, in.SemanticScholarID, in.PubMedID, owner)
	if err != nil {
		return uuid.Nil, false, fmt.Errorf("papers: match: %w", err)
	}
	cands, err := pgx.CollectRows(rows, scanCandidate)
	if err != nil {
		return uuid.Nil, false, fmt.Errorf("papers: match: %w", err)
	}
	id, found := pick(in, cands)
	return id, found, nil
}

func insert(ctx context.Context, tx pgx.Tx, in *Input, discoveredBy *uuid.UUID) (uuid.UUID, bool, error) {
	var id uuid.UUID
	err := tx.QueryRow(ctx, insertSQL, insertArgs(in, discoveredBy)...).Scan(&id)
	if errors.Is(err, pgx.ErrNoRows) {
		return uuid.Nil, false, nil
	}
	if err != nil {
		return uuid.Nil, false, fmt.Errorf("papers: insert: %w", err)
	}
	return id, true, nil
}

// mergeSQL fills what row $1 lacks from a record (see UpsertTx). A date replaces
// the stored one only when it is more precise.
const mergeSQL = `
	UPDATE papers SET
	  doi = coalesce(doi, $2), arxiv_id = coalesce(arxiv_id, $3),
	  arxiv_version = CASE WHEN $4::int IS NOT NULL AND coalesce(arxiv_id, $3) IS NOT NULL
	                       THEN greatest(coalesce(arxiv_version, 0), $4::int) ELSE arxiv_version END,
	  openalex_id = coalesce(openalex_id, $5), semantic_scholar_id = coalesce(semantic_scholar_id, $6),
	  pubmed_id = coalesce(pubmed_id, $7),
	  authors = CASE WHEN jsonb_array_length(authors) = 0 THEN $8::jsonb ELSE authors END,
	  abstract = coalesce(abstract, $9),
	  publication_date = CASE WHEN $10::date IS NOT NULL AND coalesce(array_position(ARRAY['year', 'month', 'day'], $11::text), 0)
	                              > coalesce(array_position(ARRAY['year', 'month', 'day'], publication_date_precision), 0)
	                         THEN $10::date ELSE publication_date END,
	  publication_date_precision = CASE WHEN $10::date IS NOT NULL AND coalesce(array_position(ARRAY['year', 'month', 'day'], $11::text), 0)
	                              > coalesce(array_position(ARRAY['year', 'month', 'day'], publication_date_precision), 0)
	                         THEN $11::text ELSE publication_date_precision END,
	  venue = coalesce(venue, $12), url = coalesce(url, $13), pdf_url = coalesce(pdf_url, $14),
	  citation_count = CASE WHEN $15::int IS NULL THEN citation_count ELSE greatest(coalesce(citation_count, 0), $15::int) END,
	  metadata = $16::jsonb || metadata,
	  updated_at = now()
	WHERE id = $1`

func mergeArgs(id uuid.UUID, in *Input) []any {
	authors, _ := json.Marshal(in.Authors)
	meta, _ := json.Marshal(in.Metadata)
	var arxivVersion any
	if in.ArxivVersion > 0 {
		arxivVersion = in.ArxivVersion
	}
	return []any{id, nullable(in.DOI), nullable(in.ArxivID), arxivVersion, nullable(in.OpenAlexID), nullable(in.SemanticScholarID),
		nullable(in.PubMedID), authors, nullable(in.Abstract), in.PublicationDate, nullable(in.DatePrecision), nullable(in.Venue),
		nullable(in.URL), nullable(in.PDFURL), in.CitationCount, meta}
}

func merge(ctx context.Context, tx pgx.Tx, id uuid.UUID, in *Input) error {
	if _, err := tx.Exec(ctx, mergeSQL, mergeArgs(id, in)...); err != nil {
		return fmt.Errorf("papers: merge: %w", err)
	}
	return nil
}

const insertSQL = `
	INSERT INTO papers (doi, arxiv_id, arxiv_version, openalex_id, semantic_scholar_id, pubmed_id, title, authors,
	                    abstract, publication_date, publication_date_precision, venue, url, pdf_url, source,
	                    citation_count, metadata, discovered_by, visibility)
	VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19)
	ON CONFLICT DO NOTHING
	RETURNING id`

func insertArgs(in *Input, discoveredBy *uuid.UUID) []any {
	authors, _ := json.Marshal(in.Authors)
	meta, _ := json.Marshal(in.Metadata)
	var arxivVersion any
	if in.ArxivVersion > 0 {
		arxivVersion = in.ArxivVersion
	}
	return []any{nullable(in.DOI), nullable(in.ArxivID), arxivVersion, nullable(in.OpenAlexID), nullable(in.SemanticScholarID),
		nullable(in.PubMedID), in.Title, authors, nullable(in.Abstract), in.PublicationDate, nullable(in.DatePrecision),
		nullable(in.Venue), nullable(in.URL), nullable(in.PDFURL), in.Source, in.CitationCount, meta, discoveredBy,
		in.Visibility}
}

// UpsertManyTx is UpsertTx for a batch (a page of search results): one query finds
// every existing row, one pipelined round trip merges and inserts, and only records
// that collide with a concurrent writer (or with each other) fall back to UpsertTx.
// ids[i] is the row of ins[i].
func UpsertManyTx(ctx context.Context, tx pgx.Tx, ins []Input, discoveredBy *uuid.UUID) ([]uuid.UUID, error) {
	var dois, arxivs, oas, s2s, pms []string
	for i := range ins {
		if err := ins[i].normalize(); err != nil {
			return nil, err
		}
		in := &ins[i]
		dois, arxivs, oas, s2s, pms = append(dois, in.DOI), append(arxivs, in.ArxivID), append(oas, in.OpenAlexID),
			append(s2s, in.SemanticScholarID), append(pms, in.PubMedID)
	}
	rows, err := tx.Query(ctx, fmt.Sprintf(candidatesSQL, `doi = ANY($1) OR arxiv_id = ANY($2) OR openalex_id = ANY($3)
	    OR semantic_scholar_id = ANY($4) OR pubmed_id = ANY($5)`), dois, arxivs, oas, s2s, pms, discoveredBy)
	if err != nil {
		return nil, fmt.Errorf("papers: upsert many: %w", err)
	}
	all, err := pgx.CollectRows(rows, scanCandidate)
	if err != nil {
		return nil, fmt.Errorf("papers: upsert many: %w", err)
	}
	ids := make([]uuid.UUID, len(ins))
	batch := &pgx.Batch{}
	type pending struct {
		i      int
		insert bool
	}
	var queued []pending
	for i := range ins {
		in := &ins[i]
		var cands []candidate
		for _, c := range all {
			if c.matches(in) {
				cands = append(cands, c)
			}
		}
		if id, found := pick(in, cands); found {
			ids[i] = id
			batch.Queue(mergeSQL, mergeArgs(id, in)...)
			queued = append(queued, pending{i, false})
		} else {
			batch.Queue(insertSQL, insertArgs(in, discoveredBy)...)
			queued = append(queued, pending{i, true})
		}
	}
	br := tx.SendBatch(ctx, batch)
	var retry []int
	for _, q := range queued {
		if !q.insert {
			if _, err := br.Exec(); err != nil {
				br.Close()
				return nil, fmt.Errorf("papers: upsert many: merge: %w", err)
			}
			continue
		}
		err := br.QueryRow().Scan(&ids[q.i])
		if errors.Is(err, pgx.ErrNoRows) {
			retry = append(retry, q.i)
			continue
		}
		if err != nil {
			br.Close()
			return nil, fmt.Errorf("papers: upsert many: insert: %w", err)
		}
	}
	if err := br.Close(); err != nil {
		return nil, fmt.Errorf("papers: upsert many: %w", err)
	}
	for _, i := range retry {
		if ids[i], _, err = UpsertTx(ctx, tx, ins[i], discoveredBy); err != nil {
			return nil, err
		}
	}
	return ids, nil
}

// libraryTitleMatchSQL finds, in user $1's library, a paper with the title $2 (compared
// without case, spaces or punctuation) from year $3 or of no known year. The title key
// is exactly the expression of the index papers_title_key (migration 0010), so the
// lookup reads that index instead of computing the key for every library paper.
const libraryTitleMatchSQL = `
	SELECT p.id FROM user_library ul JOIN papers p ON p.id = ul.paper_id
	 WHERE ul.user_id = $1
	   AND lower(regexp_replace(p.title, '[^[:alnum:]]+', '', 'g')) = lower(regexp_replace($2::text, '[^[:alnum:]]+', '', 'g'))
	   AND ($3::int IS NULL OR p.publication_date IS NULL OR extract(year FROM p.publication_date) = $3::int)
	 LIMIT 1`

// UpsertForUserTx adds a paper a user brings in themselves (an import, an upload) and
// puts it into their library. The record is the user's word, not a public one, so it
// never changes a row others can see: when it names a shared paper, that row is
// linked as it is; when it names the user's own private paper, that row gains what
// it lacks; another user's private paper is never a candidate (see match), so the
// user gets a row of their own. It reports whether the paper was already in the
// user's library.
func UpsertForUserTx(ctx context.Context, tx pgx.Tx, in Input, userID uuid.UUID, via string) (uuid.UUID, bool, error) {
	in.Visibility = "private"
	if err := in.normalize(); err != nil {
		return uuid.Nil, false, err
	}
	id, found, err := match(ctx, tx, &in, &userID)
	if err != nil {
		return uuid.Nil, false, err
	}
	if found {
		var shared bool
		err := tx.QueryRow(ctx, `SELECT visibility = 'public' OR discovered_by IS NULL FROM papers WHERE id = $1`,
			id).Scan(&shared)
		if err != nil {
			return uuid.Nil, false, fmt.Errorf("papers: import: %w", err)
		}
		if !shared {
			if err := merge(ctx, tx, id, &in); err != nil {
				return uuid.Nil, false, err
			}
		}
	}
	if !found {
		// Without a shared identifier, the same title and year already in the
		// user's library is the same work (an import run twice).
		var year any
		if in.PublicationDate != nil {
			year = in.PublicationDate.Year()
		}
		err := tx.QueryRow(ctx, libraryTitleMatchSQL, userID, in.Title, year).Scan(&id)
		switch {
		case err == nil:
			found = true
		case !errors.Is(err, pgx.ErrNoRows):
			return uuid.Nil, false, fmt.Errorf("papers: import: %w", err)
		}
	}
	if !found {
		var inserted bool
		if id, inserted, err = insert(ctx, tx, &in, &userID); err != nil {
			return uuid.Nil, false, err
		}
		if !inserted {
			return uuid.Nil, false, fmt.Errorf("papers: import %q: an identifier was taken meanwhile; try again", in.Title)
		}
	}
	var already bool
	if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM user_library WHERE user_id = $1 AND paper_id = $2)`,
		userID, id).Scan(&already); err != nil {
		return uuid.Nil, false, fmt.Errorf("papers: import: %w", err)
	}
	if err := AddToLibraryTx(ctx, tx, userID, id, via); err != nil {
		return uuid.Nil, false, err
	}
	return id, already, nil
}
