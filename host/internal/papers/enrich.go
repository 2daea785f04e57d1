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

// The paper.enrich job (package enrich) checks a paper against the public records
// of the paper sources. These are the reads and writes it needs on papers:
// what to look the paper up by (EnrichTargetTx), which other rows are the same
// work (SameWorkTx), and writing a record (ApplyRecordTx), a link to the shared
// row of the work (LinkVersionTx) or the outcome of a lookup that found nothing
// (RecordLookupTx). Merging two rows is merge.go.

// EnrichTarget is a paper as the paper.enrich job sees it for one user.
type EnrichTarget struct {
	ID uuid.UUID
	// Shared: public or instance-level, so its record is everyone's.
	Shared bool
	// Own: a private paper of the user alone (their upload or private version).
	Own bool
	// VersionOf is the shared paper a private version belongs to; uuid.Nil for
	// none.
	VersionOf uuid.UUID
	// DOI and ArxivID are what to look the paper up by: its own, else what its PDF
	// printed (metadata.pdf), else, for a version, its shared paper's.
	DOI, ArxivID string
	// Title and FirstAuthor (as stored) find it by title when no identifier does.
	Title, FirstAuthor string
	HasText            bool
	DiscoveredAt       time.Time
}

// EnrichTargetTx reads paper paperID as userID may enrich it, locking its row
// when lock is set. A paper the user may not see, and a private paper that is not
// theirs alone, are ErrNotFound.
func EnrichTargetTx(ctx context.Context, q Querier, userID, paperID uuid.UUID, lock bool) (EnrichTarget, error) {
	sql := `
		SELECT p.id, p.visibility = 'public' OR p.discovered_by IS NULL,
		       p.visibility = 'private' AND p.discovered_by = $1
		         AND NOT EXISTS (SELECT 1 FROM user_library ol WHERE ol.paper_id = p.id AND ol.user_id <> $1),
		       coalesce(o.id, '00000000-0000-0000-0000-000000000000'::uuid),
		       coalesce(p.doi, p.metadata->'pdf'->>'doi', o.doi, ''),
		       coalesce(p.arxiv_id, p.metadata->'pdf'->>'arxiv_id', o.arxiv_id, ''),
		       p.title, coalesce(p.authors->0->>'name', ''),
		       EXISTS (SELECT 1 FROM paper_texts t WHERE t.paper_id = p.id), p.discovered_at
		  FROM papers p
		  LEFT JOIN papers o ON o.id::text = p.metadata->>'version_of' AND (o.visibility = 'public' OR o.discovered_by IS NULL)
		 WHERE p.id = $2 AND ` + visiblePredicate
	if lock {
		sql += ` FOR UPDATE OF p`
	}
	var t EnrichTarget
	err := q.QueryRow(ctx, sql, userID, paperID).Scan(&t.ID, &t.Shared, &t.Own, &t.VersionOf, &t.DOI, &t.ArxivID,
		&t.Title, &t.FirstAuthor, &t.HasText, &t.DiscoveredAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return EnrichTarget{}, ErrNotFound
	}
	if err != nil {
		return EnrichTarget{}, fmt.Errorf("papers: read paper to enrich: %w", err)
	}
	if !t.Shared && !t.Own {
		return EnrichTarget{}, ErrNotFound
	}
	t.DOI = NormalizeDOI(t.DOI)
	if id, _, ok := NormalizeArxivID(t.ArxivID); ok {
		t.ArxivID = id
	} else {
		t.ArxivID = ""
	}
	return t, nil
}

// Holder is another row that holds one of a work's identifiers.
type Holder struct {
	ID uuid.UUID
	// Shared: public or instance-level.
	Shared bool
	// Owner is who brought a private row in (uuid.Nil for a shared one).
	Owner uuid.UUID
	// OwnerAlone: private, and in nobody's library but its owner's.
	OwnerAlone   bool
	HasText      bool
	DiscoveredAt time.Time
	// ByDOI: it holds the work's DOI (or the arXiv DOI of its arXiv id).
	ByDOI bool
}

// SameWorkTx lists the rows other than except that are the work doi and arxivID
// name: a row holding the DOI or the arXiv id, where an arXiv DOI
// (10.48550/arxiv.<id>) and its arXiv id name the same work. Rows holding a DOI
// come first.
func SameWorkTx(ctx context.Context, tx Querier, doi, arxivID string, except uuid.UUID) ([]Holder, error) {
	doi = NormalizeDOI(doi)
	arxiv, _, _ := NormalizeArxivID(arxivID)
	dois, arxivs := []string{}, []string{}
	add := func(list []string, v string) []string {
		if v != "" && !slices.Contains(list, v) {
			list = append(list, v)
		}
		return list
	}
	dois, arxivs = add(dois, doi), add(arxivs, arxiv)
	dois, arxivs = add(dois, DOIOfArxivID(arxiv)), add(arxivs, ArxivIDOfDOI(doi))
	if len(dois) == 0 && len(arxivs) == 0 {
		return nil, nil
	}
	rows, err := tx.Query(ctx, `
		SELECT p.id, p.visibility = 'public' OR p.discovered_by IS NULL,
		       CASE WHEN p.visibility = 'private' AND p.discovered_by IS NOT NULL THEN p.discovered_by
		            ELSE '00000000-0000-0000-0000-000000000000'::uuid END,
		       p.visibility = 'private' AND p.discovered_by IS NOT NULL
		         AND NOT EXISTS (SELECT 1 FROM user_library ol WHERE ol.paper_id = p.id AND ol.user_id <> p.discovered_by),
		       EXISTS (SELECT 1 FROM paper_texts t WHERE t.paper_id = p.id), p.discovered_at,
		       coalesce(p.doi = ANY($1), false)
		  FROM papers p
		 WHERE p.id <> $3 AND (p.doi = ANY($1) OR p.arxiv_id = ANY($2))
		 ORDER BY coalesce(p.doi = ANY($1), false) DESC, p.discovered_at, p.id`, dois, arxivs, except)
	if err != nil {
		return nil, fmt.Errorf("papers: find the same work: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Holder, error) {
		var h Holder
		err := r.Scan(&h.ID, &h.Shared, &h.Owner, &h.OwnerAlone, &h.HasText, &h.DiscoveredAt, &h.ByDOI)
		return h, err
	})
	if err != nil {
		return nil, fmt.Errorf("papers: find the same work: %w", err)
	}
	return out, nil
}

// LockTx locks the rows of ids in the caller's transaction, in id order, so two
// merges of overlapping rows wait for each other instead of deadlocking. Rows
// that no longer exist are left out of the answer.
func LockTx(ctx context.Context, tx Querier, ids []uuid.UUID) ([]uuid.UUID, error) {
	rows, err := tx.Query(ctx, `SELECT id FROM papers WHERE id = ANY($1) ORDER BY id FOR UPDATE`, ids)
	if err != nil {
		return nil, fmt.Errorf("papers: lock: %w", err)
	}
	locked, err := pgx.CollectRows(rows, pgx.RowTo[uuid.UUID])
	if err != nil {
		return nil, fmt.Errorf("papers: lock: %w", err)
	}
	return locked, nil
}

// Record is a public record of a paper, put together from the paper sources, as
// ApplyRecordTx writes it.
type Record struct {
	// Input holds the identifiers and bibliographic fields; Title must be set.
	Input
	// From names the source of each field set (Field... names).
	From map[string]string
	// By says how the record was found: by "doi", "arxiv_id" or "title". A record
	// found by title replaces no identifier the paper already has.
	By string
	// Sources are the sources that knew the paper.
	Sources []string
}

// ApplyMode says how ApplyRecordTx writes a record.
type ApplyMode int

const (
	// ApplyFill fills only what the paper lacks, as a search result does: the
	// mode for a shared paper, whose fields already came from sources.
	ApplyFill ApplyMode = iota
	// ApplyCorrect lets the record win over what the PDF said: the mode for the
	// user's own upload, whose text stays the PDF's.
	ApplyCorrect
	// ApplyCorrectNoIDs is ApplyCorrect for a private version of a shared paper:
	// the identifiers stay the shared paper's.
	ApplyCorrectNoIDs
)

// enrichedRow is the part of a papers row a record changes.
type enrichedRow struct {
	Title         string
	Authors       []Author
	Abstract      *string
	Date          *time.Time
	Precision     *string
	Venue         *string
	URL, PDFURL   *string
	CitationCount *int
	DOI, Arxiv    *string
	ArxivVersion  *int
	OpenAlex, S2  *string
	PubMed        *string
	Provenance    map[string]string
}

// ApplyRecordTx writes rec onto paper paperID in the caller's transaction (lock
// the row first), in mode. Each field written takes its source in provenance;
// an identifier is written only when no other row holds it; metadata.enrichment
// records the outcome. The paper's visibility and text never change.
func ApplyRecordTx(ctx context.Context, tx Querier, paperID uuid.UUID, rec Record, mode ApplyMode) error {
	if err := rec.normalize(); err != nil {
		return err
	}
	cur, err := readEnrichedRow(ctx, tx, paperID)
	if err != nil {
		return err
	}
	free, err := freeIdentifiers(ctx, tx, paperID, &rec.Input)
	if err != nil {
		return err
	}
	next := applyRecord(cur, rec, mode, free)
	return writeEnrichedRow(ctx, tx, paperID, next, enrichmentNote("found", rec.By, rec.Sources))
}

func readEnrichedRow(ctx context.Context, tx Querier, paperID uuid.UUID) (enrichedRow, error) {
	var r enrichedRow
	var authors []byte
	err := tx.QueryRow(ctx, `
		SELECT title, authors, abstract, publication_date, publication_date_precision, venue, url, pdf_url,
		       citation_count, doi, arxiv_id, arxiv_version, openalex_id, semantic_scholar_id, pubmed_id, provenance
		  FROM papers WHERE id = $1`, paperID).Scan(&r.Title, &authors, &r.Abstract, &r.Date, &r.Precision, &r.Venue,
		&r.URL, &r.PDFURL, &r.CitationCount, &r.DOI, &r.Arxiv, &r.ArxivVersion, &r.OpenAlex, &r.S2, &r.PubMed, &r.Provenance)
	if errors.Is(err, pgx.ErrNoRows) {
		return r, ErrNotFound
	}
	if err != nil {
		return r, fmt.Errorf("papers: read paper to enrich: %w", err)
	}
	if err := json.Unmarshal(authors, &r.Authors); err != nil {
		return r, fmt.Errorf("papers: read paper to enrich: authors: %w", err)
	}
	if r.Provenance == nil {
		r.Provenance = map[string]string{}
	}
	return r, nil
}

// freeIdentifiers says which of in's identifiers paperID may take: none that a
// shared row holds, nor (for a private row) one its owner's other private rows
// hold. Another user's private paper never blocks them (migration 0015).
func freeIdentifiers(ctx context.Context, tx Querier, paperID uuid.UUID, in *Input) (map[string]bool, error) {
	var doi, arxiv, oa, s2, pm bool
	held := func(column, arg string) string {
		return arg + ` <> '' AND NOT EXISTS (SELECT 1 FROM papers o WHERE o.` + column + ` = ` + arg + ` AND o.id <> $1
		   AND (CASE WHEN o.visibility = 'private' THEN o.discovered_by END) IS NOT DISTINCT FROM me.owner
		    OR o.` + column + ` = ` + arg + ` AND o.id <> $1 AND (o.visibility = 'public' OR o.discovered_by IS NULL))`
	}
	err := tx.QueryRow(ctx, `
		SELECT `+held("doi", "$2")+`, `+held("arxiv_id", "$3")+`, `+held("openalex_id", "$4")+`,
		       `+held("semantic_scholar_id", "$5")+`, `+held("pubmed_id", "$6")+`
		  FROM (SELECT CASE WHEN visibility = 'private' THEN discovered_by END AS owner FROM papers WHERE id = $1) me`,
		paperID, in.DOI, in.ArxivID, in.OpenAlexID, in.SemanticScholarID, in.PubMedID).Scan(&doi, &arxiv, &oa, &s2, &pm)
	if err != nil {
		return nil, fmt.Errorf("papers: check identifiers: %w", err)
	}
	return map[string]bool{FieldDOI: doi, FieldArxivID: arxiv, "openalex_id": oa, "semantic_scholar_id": s2, "pubmed_id": pm}, nil
}

// applyRecord is cur with rec written in mode; free says which identifiers the
// row may take.
func applyRecord(cur enrichedRow, rec Record, mode ApplyMode, free map[string]bool) enrichedRow {
	next := cur
	next.Provenance = map[string]string{}
	for k, v := range cur.Provenance {
		next.Provenance[k] = v
	}
	correct := mode != ApplyFill
	from := func(field string) string {
		if s := rec.From[field]; s != "" {
			return s
		}
		return rec.Source
	}
	// take reports whether a field of the record replaces the row's: it must have
	// a value, and the row none, or (correcting) one that came from the PDF or
	// from an earlier record. A value with no provenance is the user's own word
	// (an import) and stays.
	take := func(field string, has, rowHas bool) bool {
		switch {
		case !has:
			return false
		case !rowHas:
			return true
		}
		return correct && cur.Provenance[field] != ""
	}
	if take(FieldTitle, rec.Title != "", true) {
		next.Title, next.Provenance[FieldTitle] = rec.Title, from(FieldTitle)
	}
	if take(FieldAuthors, len(rec.Authors) > 0, len(cur.Authors) > 0) {
		next.Authors, next.Provenance[FieldAuthors] = rec.Authors, from(FieldAuthors)
	}
	if take(FieldAbstract, rec.Abstract != "", cur.Abstract != nil) {
		next.Abstract, next.Provenance[FieldAbstract] = &rec.Abstract, from(FieldAbstract)
	}
	if take(FieldVenue, rec.Venue != "", cur.Venue != nil) {
		next.Venue, next.Provenance[FieldVenue] = &rec.Venue, from(FieldVenue)
	}
	if rec.PublicationDate != nil && (take(FieldYear, true, cur.Date != nil) || precisionRank(rec.DatePrecision) > precisionRank(deref(cur.Precision))) {
		next.Date, next.Precision, next.Provenance[FieldYear] = rec.PublicationDate, &rec.DatePrecision, from(FieldYear)
	}
	if rec.CitationCount != nil && (cur.CitationCount == nil || correct || *rec.CitationCount > *cur.CitationCount) {
		next.CitationCount, next.Provenance[FieldCitationCount] = rec.CitationCount, from(FieldCitationCount)
	}
	if rec.PDFURL != "" && (cur.PDFURL == nil || correct) {
		next.PDFURL, next.Provenance[FieldPDFURL] = &rec.PDFURL, from(FieldPDFURL)
	}
	if rec.URL != "" && cur.URL == nil {
		next.URL = &rec.URL
	}
	if mode == ApplyCorrectNoIDs {
		return next
	}
	// An identifier from a record found by title replaces none the row has: the
	// record may be another version of the work (a preprint of the article).
	byID := rec.By != "title"
	idTaken := func(field string, row *string, val string) bool {
		return free[field] && (row == nil || *row == val || correct && byID && cur.Provenance[field] == FromPDF)
	}
	if idTaken(FieldDOI, cur.DOI, rec.DOI) {
		next.DOI, next.Provenance[FieldDOI] = &rec.DOI, from(FieldDOI)
	}
	if idTaken(FieldArxivID, cur.Arxiv, rec.ArxivID) {
		next.Arxiv, next.Provenance[FieldArxivID] = &rec.ArxivID, from(FieldArxivID)
		if rec.ArxivVersion > 0 {
			v := rec.ArxivVersion
			next.ArxivVersion = &v
		} else if cur.Arxiv == nil || *cur.Arxiv != rec.ArxivID {
			next.ArxivVersion = nil
		}
	}
	if free["openalex_id"] && cur.OpenAlex == nil {
		next.OpenAlex = &rec.OpenAlexID
	}
	if free["semantic_scholar_id"] && cur.S2 == nil {
		next.S2 = &rec.SemanticScholarID
	}
	if free["pubmed_id"] && cur.PubMed == nil {
		next.PubMed = &rec.PubMedID
	}
	return next
}

func precisionRank(p string) int {
	return slices.Index([]string{"year", "month", "day"}, p) + 1
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// enrichmentNote is metadata.enrichment: how the last lookup ended, and when.
func enrichmentNote(outcome, by string, sources []string) map[string]any {
	note := map[string]any{"outcome": outcome, "checked_at": time.Now().UTC().Format(time.RFC3339)}
	if by != "" {
		note["by"] = by
	}
	if len(sources) > 0 {
		note["sources"] = sources
	}
	return note
}

func writeEnrichedRow(ctx context.Context, tx Querier, paperID uuid.UUID, r enrichedRow, note map[string]any) error {
	authors, err := json.Marshal(r.Authors)
	if err != nil {
		return fmt.Errorf("papers: apply record: %w", err)
	}
	if r.Authors == nil {
		authors = []byte("[]")
	}
	noteJSON, err := json.Marshal(note)
	if err != nil {
		return fmt.Errorf("papers: apply record: %w", err)
	}
	_, err = tx.Exec(ctx, `
		UPDATE papers SET title = left($2, 1000), authors = $3::jsonb, abstract = left($4, 50000),
		       publication_date = $5, publication_date_precision = $6, venue = left($7, 1000),
		       url = CASE WHEN length($8) <= 2000 THEN $8 ELSE url END,
		       pdf_url = CASE WHEN length($9) <= 2000 THEN $9 ELSE pdf_url END,
		       citation_count = $10, doi = $11, arxiv_id = $12, arxiv_version = $13, openalex_id = $14,
		       semantic_scholar_id = $15, pubmed_id = $16, provenance = $17,
		       metadata = jsonb_set(metadata, '{enrichment}', $18::jsonb), updated_at = now()
		 WHERE id = $1`,
		paperID, strings.TrimSpace(r.Title), string(authors), r.Abstract, r.Date, r.Precision, r.Venue, r.URL, r.PDFURL,
		r.CitationCount, r.DOI, r.Arxiv, r.ArxivVersion, r.OpenAlex, r.S2, r.PubMed, r.Provenance, string(noteJSON))
	if err != nil {
		return fmt.Errorf("papers: apply record: %w", err)
	}
	return nil
}

// RecordLookupTx records on paperID that its last lookup ended with outcome
// ("not_found": no source knows it; "unreachable": the sources could not be
// asked) and changes nothing else: the fields read from the PDF stay, marked
// unverified.
func RecordLookupTx(ctx context.Context, tx Querier, paperID uuid.UUID, outcome string) error {
	note, err := json.Marshal(enrichmentNote(outcome, "", nil))
	if err != nil {
		return fmt.Errorf("papers: record lookup: %w", err)
	}
	if _, err := tx.Exec(ctx, `UPDATE papers SET metadata = jsonb_set(metadata, '{enrichment}', $2::jsonb) WHERE id = $1`,
		paperID, string(note)); err != nil {
		return fmt.Errorf("papers: record lookup: %w", err)
	}
	return nil
}

// LinkVersionTx makes the user's own private paper paperID their private version
// of the shared paper original (metadata.version_of), in the caller's
// transaction: the same work is already in the shared corpus, so its identifiers
// belong to that row. Any identifier paperID held moves to
// metadata.unlinked_identifiers. Its text, visibility and library rows stay.
func LinkVersionTx(ctx context.Context, tx Querier, paperID, original uuid.UUID) error {
	if _, err := tx.Exec(ctx, `
		UPDATE papers SET
		  metadata = metadata || jsonb_build_object('version_of', $2::text, 'unlinked_identifiers',
		      coalesce(metadata->'unlinked_identifiers', '{}'::jsonb) || jsonb_strip_nulls(jsonb_build_object(
		        'doi', doi, 'arxiv_id', arxiv_id, 'openalex_id', openalex_id,
		        'semantic_scholar_id', semantic_scholar_id, 'pubmed_id', pubmed_id))),
		  doi = NULL, arxiv_id = NULL, arxiv_version = NULL, openalex_id = NULL, semantic_scholar_id = NULL,
		  pubmed_id = NULL, provenance = provenance - 'doi' - 'arxiv_id', updated_at = now()
		WHERE id = $1 AND visibility = 'private'`, paperID, original); err != nil {
		return fmt.Errorf("papers: link to the shared paper: %w", err)
	}
	return nil
}

// normalize prepares a record's input like a corpus input, keeping its sources.
func (r *Record) normalize() error {
	if err := r.Input.normalize(); err != nil {
		return err
	}
	if r.From == nil {
		r.From = map[string]string{}
	}
	return nil
}
