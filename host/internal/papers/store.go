// Package papers owns the shared paper corpus and each user's layer over it: library
// membership, read state, stars and ratings, and the feed's view surfaces with their
// canonical predicates (views.go). Corpus rows are shared; everything a user does
// stays theirs (SPEC ownership rules 3-8, docs/ownership.md).
package papers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

var (
	// ErrNotFound means no such paper, or one the caller may not see.
	ErrNotFound = errors.New("papers: not found")
	// ErrSourcesUnreachable means a paper named by DOI or arXiv id is not in the
	// corpus and none of the paper sources could be asked for it (ResolveFunc).
	ErrSourcesUnreachable = errors.New("papers: the paper sources could not be reached")
	// ErrNotInLibrary means the paper is not in the caller's library.
	ErrNotInLibrary = errors.New("papers: not in your library")
	// ErrBadCursor means a cursor this package did not issue.
	ErrBadCursor = errors.New("papers: invalid cursor")
)

// Author is one author of a paper.
type Author struct {
	Name        string `json:"name"`
	ORCID       string `json:"orcid,omitempty"`
	Affiliation string `json:"affiliation,omitempty"`
	// SourceID is the author's id in the source that named them, as
	// "<source>:<id>" ("openalex:A5023888391"); empty for names read from a PDF.
	SourceID string `json:"source_id,omitempty"`
}

// Paper is corpus metadata, shared by every user who may see it.
type Paper struct {
	ID                uuid.UUID      `json:"id"`
	DOI               string         `json:"doi,omitempty"`
	ArxivID           string         `json:"arxiv_id,omitempty"`
	ArxivVersion      int            `json:"arxiv_version,omitempty"`
	OpenAlexID        string         `json:"openalex_id,omitempty"`
	SemanticScholarID string         `json:"semantic_scholar_id,omitempty"`
	PubMedID          string         `json:"pubmed_id,omitempty"`
	Title             string         `json:"title"`
	Authors           []Author       `json:"authors"`
	Abstract          string         `json:"abstract,omitempty"`
	PublicationDate   *time.Time     `json:"publication_date,omitempty"`
	DatePrecision     string         `json:"publication_date_precision,omitempty"`
	Venue             string         `json:"venue,omitempty"`
	URL               string         `json:"url,omitempty"`
	PDFURL            string         `json:"pdf_url,omitempty"`
	Source            string         `json:"source"`
	CitationCount     *int           `json:"citation_count,omitempty"`
	Metadata          map[string]any `json:"metadata,omitempty"`
	DiscoveredAt      time.Time      `json:"discovered_at"`
	// Provenance says where each bibliographic field came from (provenance.go):
	// FromPDF, or the name of the source whose public record gave it. A field
	// with no entry came with the row's Source.
	Provenance map[string]string `json:"provenance,omitempty"`
	// Unverified lists the fields whose value was read from the PDF and not yet
	// checked against a source, in a fixed order.
	Unverified []string `json:"unverified,omitempty"`
}

// Overlay is the caller's own layer on a paper. Nobody else's ever appears.
type Overlay struct {
	InLibrary bool       `json:"in_library"`
	AddedAt   *time.Time `json:"added_at,omitempty"`
	State     string     `json:"state"`
	Starred   bool       `json:"starred"`
	Rating    *int       `json:"rating,omitempty"`
	Flagged   bool       `json:"flagged"`
	Notes     string     `json:"notes,omitempty"`
	ReadAt    *time.Time `json:"read_at,omitempty"`
}

// Item is a paper as one user sees it.
type Item struct {
	Paper
	Overlay Overlay `json:"overlay"`
}

// Store reads and writes the corpus and the per-user layer.
type Store struct {
	pool *pgxpool.Pool
}

// New returns a Store.
func New(pool *pgxpool.Pool) *Store { return &Store{pool: pool} }

// Querier is a pool or a transaction.
type Querier interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// itemColumns select a paper and the caller's overlay; the query must alias papers as
// p, the caller's state as s and their library row as ul.
const itemColumns = `p.id, coalesce(p.doi, ''), coalesce(p.arxiv_id, ''), coalesce(p.arxiv_version, 0),
	coalesce(p.openalex_id, ''), coalesce(p.semantic_scholar_id, ''), coalesce(p.pubmed_id, ''),
	p.title, p.authors, coalesce(p.abstract, ''), p.publication_date, coalesce(p.publication_date_precision, ''),
	coalesce(p.venue, ''), coalesce(p.url, ''), coalesce(p.pdf_url, ''), p.source, p.citation_count, p.metadata,
	p.discovered_at, p.provenance,
	ul.paper_id IS NOT NULL, ul.added_at, coalesce(s.state, 'inbox'), coalesce(s.starred, false), s.rating,
	coalesce(s.flagged, false), coalesce(s.notes, ''), s.read_at`

func scanItem(row pgx.Row, extra ...any) (Item, error) {
	var it Item
	var authors []byte
	var rating *int16
	dest := []any{&it.ID, &it.DOI, &it.ArxivID, &it.ArxivVersion, &it.OpenAlexID, &it.SemanticScholarID, &it.PubMedID,
		&it.Title, &authors, &it.Abstract, &it.PublicationDate, &it.DatePrecision, &it.Venue, &it.URL, &it.PDFURL,
		&it.Source, &it.CitationCount, &it.Metadata, &it.DiscoveredAt, &it.Provenance,
		&it.Overlay.InLibrary, &it.Overlay.AddedAt, &it.Overlay.State, &it.Overlay.Starred, &rating,
		&it.Overlay.Flagged, &it.Overlay.Notes, &it.Overlay.ReadAt}
	if err := row.Scan(append(dest, extra...)...); err != nil {
		return it, err
	}
	if err := json.Unmarshal(authors, &it.Authors); err != nil {
		return it, fmt.Errorf("papers: authors: %w", err)
	}
	if it.Authors == nil {
		it.Authors = []Author{}
	}
	it.Unverified = unverified(it.Provenance)
	if rating != nil {
		r := int(*rating)
		it.Overlay.Rating = &r
	}
	return it, nil
}

const itemJoins = `
	LEFT JOIN paper_user_state s ON s.user_id = $1 AND s.paper_id = p.id
	LEFT JOIN user_library ul ON ul.user_id = $1 AND ul.paper_id = p.id`

// Get returns a paper the user may see, with the user's overlay. A paper the user may
// not see is ErrNotFound, exactly like a missing one.
func (st *Store) Get(ctx context.Context, userID, paperID uuid.UUID) (Item, error) {
	it, err := scanItem(st.pool.QueryRow(ctx, `SELECT `+itemColumns+` FROM papers p`+itemJoins+`
		WHERE p.id = $2 AND `+visiblePredicate, userID, paperID))
	if errors.Is(err, pgx.ErrNoRows) {
		return Item{}, ErrNotFound
	}
	if err != nil {
		return Item{}, fmt.Errorf("papers: get: %w", err)
	}
	return it, nil
}

// MergedInto returns the paper that paperID was merged into, when the user may see
// it; ErrNotFound otherwise (never merged, or merged into a paper the user may not
// see, which answers exactly like a missing one).
func (st *Store) MergedInto(ctx context.Context, userID, paperID uuid.UUID) (uuid.UUID, error) {
	var id uuid.UUID
	err := st.pool.QueryRow(ctx, `
		SELECT p.id FROM paper_redirects r JOIN papers p ON p.id = r.to_id
		 WHERE r.from_id = $2 AND `+visiblePredicate, userID, paperID).Scan(&id)
	if errors.Is(err, pgx.ErrNoRows) {
		return uuid.Nil, ErrNotFound
	}
	if err != nil {
		return uuid.Nil, fmt.Errorf("papers: find where a paper was merged: %w", err)
	}
	return id, nil
}

// GetMany returns the papers of ids the user may see, with the user's overlay, in
// one query. Papers the user may not see are simply absent from the map.
func (st *Store) GetMany(ctx context.Context, userID uuid.UUID, ids []uuid.UUID) (map[uuid.UUID]Item, error) {
	rows, err := st.pool.Query(ctx, `SELECT `+itemColumns+` FROM papers p`+itemJoins+`
		WHERE p.id = ANY($2) AND `+visiblePredicate, userID, ids)
	if err != nil {
		return nil, fmt.Errorf("papers: get many: %w", err)
	}
	items, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Item, error) { return scanItem(r) })
	if err != nil {
		return nil, fmt.Errorf("papers: get many: %w", err)
	}
	out := make(map[uuid.UUID]Item, len(items))
	for _, it := range items {
		out[it.ID] = it
	}
	return out, nil
}

// FeedParams select a page of the feed.
type FeedParams struct {
	View   string // one of ViewNames(); default DefaultView
	Scope  string // ScopeLibrary (default) or ScopeCorpus
	Sort   string // one of SortNames(); default SortAdded
	Query  string // text in the title or an author's name, case-insensitive; empty matches all
	Cursor string
	Limit  int // 1-100, default 20
}

// Page is one page of the feed.
type Page struct {
	Items      []Item `json:"items"`
	NextCursor string `json:"next_cursor,omitempty"`
}

// Feed returns a page of the user's feed in p.Sort's order: newest first by default
// (by when the paper joined the library in library scope, by when it was discovered
// in corpus scope). Its cursor carries the sort it was issued for.
func (st *Store) Feed(ctx context.Context, userID uuid.UUID, p FeedParams) (Page, error) {
	if p.View == "" {
		p.View = DefaultView
	}
	if p.Scope == "" {
		p.Scope = ScopeLibrary
	}
	if p.Sort == "" {
		p.Sort = SortAdded
	}
	if p.Limit == 0 {
		p.Limit = 20
	}
	sql, args, order, err := feedQuery(userID, p)
	if err != nil {
		return Page{}, err
	}
	rows, err := st.pool.Query(ctx, sql, args...)
	if err != nil {
		return Page{}, fmt.Errorf("papers: feed: %w", err)
	}
	type row struct {
		it  Item
		key any
	}
	list, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (row, error) {
		var out row
		var err error
		out.it, err = scanItem(r, &out.key)
		return out, err
	})
	if err != nil {
		return Page{}, fmt.Errorf("papers: feed: %w", err)
	}
	page := Page{Items: make([]Item, 0, len(list))}
	for i, r := range list {
		if i == p.Limit {
			last := list[i-1]
			page.NextCursor = order.encodeCursor(last.key, last.it.ID)
			break
		}
		page.Items = append(page.Items, r.it)
	}
	return page, nil
}

// feedQuery returns the statement of a page of the feed (p with its defaults
// applied) and its arguments, and the order it reads in.
func feedQuery(userID uuid.UUID, p FeedParams) (sql string, args []any, order feedOrder, err error) {
	order, err = feedOrderOf(p.Sort, p.Scope)
	if err != nil {
		return "", nil, feedOrder{}, err
	}
	from, where, args, err := feedFilter(userID, p)
	if err != nil {
		return "", nil, feedOrder{}, err
	}
	// The limit is written into the statement rather than passed: PostgreSQL plans
	// a statement pgx has prepared once for every value after five runs, and with
	// an unknown limit that plan joined a starred page by comparing every starred
	// paper with every library row (6 ms against 1.4 ms at 2,000 papers).
	limit := strconv.Itoa(p.Limit + 1)
	if p.Cursor != "" {
		key, id, err := order.decodeCursor(p.Cursor)
		if err != nil {
			return "", nil, feedOrder{}, err
		}
		args = append(args, key, id)
		where += fmt.Sprintf(" AND (%s, %s) %s ($%d%s, $%d)", order.key, order.id, order.after, len(args)-1, order.cast, len(args))
	}
	orderBy := ` ORDER BY ` + order.key + ` ` + order.dir + `, ` + order.id + ` ` + order.dir
	sql = `SELECT ` + itemColumns + `, ` + order.key + ` ` + from + where + orderBy + ` LIMIT ` + limit
	if p.Scope == ScopeLibrary && strings.TrimSpace(p.Query) == "" {
		// The view and every library sort key live on the library row and the
		// state row: pick the page from those two alone, then read its papers.
		// Joined first, the planner misjudged the views' coalesce() and read every
		// paper to keep a page of the user's (32 ms against 1 ms at 10k papers).
		// The page carries the library row's columns out as ul, so the outer query
		// reads no library row again (joined back, the planner hashed the whole
		// library: 5 ms a page at 2,000 papers against 0.6 ms).
		// Library scope's views read the state row themselves (libraryViews).
		sql = `SELECT ` + itemColumns + `, ` + order.key + ` FROM (
			SELECT ul.paper_id, ul.added_at, ul.sort_year, ul.sort_title FROM user_library ul
			 WHERE ul.user_id = $1` + where + orderBy + ` LIMIT ` + limit + `) ul
			JOIN papers p ON p.id = ul.paper_id
			LEFT JOIN paper_user_state s ON s.user_id = $1 AND s.paper_id = p.id` + orderBy
	}
	return sql, args, order, nil
}

// feedFilter returns the FROM and WHERE of the papers p selects for userID (its
// view, scope and text filter, defaults applied by the caller) and their
// arguments, $1 being userID. The FROM aliases papers as p, the caller's state as s
// and their library row as ul, as itemColumns needs.
func feedFilter(userID uuid.UUID, p FeedParams) (from, where string, args []any, err error) {
	pred, err := viewPredicate(p.View, p.Scope)
	if err != nil {
		return "", "", nil, err
	}
	if p.Scope == ScopeLibrary {
		from = `FROM user_library ul JOIN papers p ON p.id = ul.paper_id
			LEFT JOIN paper_user_state s ON s.user_id = $1 AND s.paper_id = p.id
			WHERE ul.user_id = $1`
	} else {
		from = `FROM papers p` + itemJoins + ` WHERE ` + visiblePredicate
	}
	args = []any{userID}
	where = " AND " + pred
	if text := strings.TrimSpace(p.Query); text != "" {
		args = append(args, "%"+likeEscaper.Replace(text)+"%")
		n := len(args)
		where += fmt.Sprintf(` AND (p.title ILIKE $%d OR EXISTS (
			SELECT 1 FROM jsonb_array_elements(p.authors) fa WHERE fa->>'name' ILIKE $%d))`, n, n)
	}
	return from, where, args, nil
}

// likeEscaper makes a user's text match itself in ILIKE (whose escape is \).
var likeEscaper = strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)

// StatePatch changes the caller's overlay; nil fields stay as they are. ClearRating
// removes the rating.
type StatePatch struct {
	State       *string
	Starred     *bool
	Rating      *int
	ClearRating bool
	Flagged     *bool
	Notes       *string
}

// States a paper can be in for a user.
var States = []string{"inbox", "to_read", "reading", "done", "trash"}

// SetState applies patch to the caller's overlay on a paper they may see. Moving to
// trash remembers the state it came from; moving out of trash forgets it; done sets
// read_at.
func (st *Store) SetState(ctx context.Context, userID, paperID uuid.UUID, patch StatePatch) (Item, error) {
	err := pgx.BeginFunc(ctx, st.pool, func(tx pgx.Tx) error { return SetStateTx(ctx, tx, userID, paperID, patch) })
	if err != nil {
		if errors.Is(err, ErrNotFound) {
			return Item{}, err
		}
		return Item{}, fmt.Errorf("papers: set state: %w", err)
	}
	return st.Get(ctx, userID, paperID)
}

// SetStateTx is SetState in the caller's transaction, without reading the paper
// back: ErrNotFound for a paper the user may not see.
func SetStateTx(ctx context.Context, tx Querier, userID, paperID uuid.UUID, patch StatePatch) error {
	var visible bool
	if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM papers p WHERE p.id = $2 AND `+visiblePredicate+`)`,
		userID, paperID).Scan(&visible); err != nil {
		return err
	}
	if !visible {
		return ErrNotFound
	}
	var rating any
	if patch.Rating != nil {
		rating = *patch.Rating
	}
	_, err := tx.Exec(ctx, `
		INSERT INTO paper_user_state (user_id, paper_id) VALUES ($1, $2)
		ON CONFLICT (user_id, paper_id) DO NOTHING`, userID, paperID)
	if err != nil {
		return err
	}
	_, err = tx.Exec(ctx, `
		UPDATE paper_user_state SET
		  state_before_trash = CASE
		      WHEN $3::text = 'trash' AND state <> 'trash' THEN state
		      WHEN $3::text IS NOT NULL AND $3::text <> 'trash' THEN NULL
		      ELSE state_before_trash END,
		  state_changed_at = CASE WHEN $3::text IS NOT NULL AND $3::text <> state THEN now() ELSE state_changed_at END,
		  read_at = CASE WHEN $3::text = 'done' AND read_at IS NULL THEN now() ELSE read_at END,
		  state = coalesce($3::text, state),
		  starred = coalesce($4, starred),
		  rating = CASE WHEN $6 THEN NULL ELSE coalesce($5::smallint, rating) END,
		  flagged = coalesce($7, flagged),
		  notes = coalesce($8, notes),
		  updated_at = now()
		WHERE user_id = $1 AND paper_id = $2`,
		userID, paperID, patch.State, patch.Starred, rating, patch.ClearRating, patch.Flagged, patch.Notes)
	return err
}

// AddToLibraryTx puts a paper the user may see into their library, in the caller's
// transaction (an upload or a project link adds the paper in the same transaction as
// its own write, SPEC ownership rule 8). Adding twice is not an error.
func AddToLibraryTx(ctx context.Context, q Querier, userID, paperID uuid.UUID, via string) error {
	tag, err := q.Exec(ctx, `
		INSERT INTO user_library (user_id, paper_id, added_via)
		SELECT $1, p.id, $3 FROM papers p
		 WHERE p.id = $2 AND (p.visibility = 'public' OR p.discovered_by IS NULL OR p.discovered_by = $1
		       OR EXISTS (SELECT 1 FROM user_library vl WHERE vl.user_id = $1 AND vl.paper_id = p.id))
		ON CONFLICT (user_id, paper_id) DO NOTHING`, userID, paperID, via)
	if err != nil {
		return fmt.Errorf("papers: add to library: %w", err)
	}
	if tag.RowsAffected() == 0 {
		var member bool
		if err := q.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM user_library WHERE user_id = $1 AND paper_id = $2)`,
			userID, paperID).Scan(&member); err != nil {
			return fmt.Errorf("papers: add to library: %w", err)
		}
		if !member {
			return ErrNotFound
		}
	}
	return nil
}

// FindVisible looks a paper up by DOI or arXiv id among those the user may see. A
// private paper of someone else never matches, so a lookup cannot link the caller
// onto another user's upload.
func (st *Store) FindVisible(ctx context.Context, userID uuid.UUID, doi, arxivID string) (uuid.UUID, error) {
	var id uuid.UUID
	err := st.pool.QueryRow(ctx, `
		SELECT p.id FROM papers p
		 WHERE ((p.doi = $2 AND $2 <> '') OR (p.arxiv_id = $3 AND $3 <> '')) AND `+visiblePredicate+`
		 LIMIT 1`, userID, doi, arxivID).Scan(&id)
	if errors.Is(err, pgx.ErrNoRows) {
		return uuid.Nil, ErrNotFound
	}
	if err != nil {
		return uuid.Nil, fmt.Errorf("papers: find: %w", err)
	}
	return id, nil
}

// RemoveFromLibrary takes a paper out of the user's library. Their overlay (state,
// rating, notes) stays, so adding it back restores it.
func (st *Store) RemoveFromLibrary(ctx context.Context, userID, paperID uuid.UUID) error {
	tag, err := st.pool.Exec(ctx, `DELETE FROM user_library WHERE user_id = $1 AND paper_id = $2`, userID, paperID)
	if err != nil {
		return fmt.Errorf("papers: remove from library: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return ErrNotInLibrary
	}
	return nil
}
