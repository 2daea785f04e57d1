package papers

import (
	"context"
	"fmt"
	"strconv"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// This file is what an in-process full-text index (retrieve's, over package bm25)
// reads to stay in step with PostgreSQL: every passage's tsvector once, then the
// papers named by the change log (paper_chunk_changes, migration 0018) since the
// last read. Transaction ids are carried as uint64 (xid8).

// PassageTerms is one passage as the index holds it.
type PassageTerms struct {
	ID         uuid.UUID
	PaperID    uuid.UUID
	ChunkIndex int
	// Public says every user may see the passage's paper (publicPredicate).
	Public bool
	// Vector is the passage's search_vector in PostgreSQL's text form.
	Vector string
}

// PassageChange names a paper whose passages or visibility changed, and the
// transaction that last changed them.
type PassageChange struct {
	PaperID uuid.UUID
	XID     uint64
}

// AllPassageTerms calls each for every passage, read in one snapshot, and returns
// that snapshot's xmin: every change made by a transaction below it is in what
// each saw, so PassageChanges(horizon) lists every change made since (and maybe
// some already seen).
func (st *Store) AllPassageTerms(ctx context.Context, each func(PassageTerms) error) (horizon uint64, err error) {
	err = pgx.BeginTxFunc(ctx, st.pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly},
		func(tx pgx.Tx) error {
			var h string
			if err := tx.QueryRow(ctx, `SELECT pg_snapshot_xmin(pg_current_snapshot())::text`).Scan(&h); err != nil {
				return err
			}
			if horizon, err = strconv.ParseUint(h, 10, 64); err != nil {
				return err
			}
			rows, err := tx.Query(ctx, passageTermsSQL+` WHERE true`)
			if err != nil {
				return err
			}
			return forEachPassageTerms(rows, each)
		})
	if err != nil {
		return 0, fmt.Errorf("papers: read passage terms: %w", err)
	}
	return horizon, nil
}

// PassageTermsOf returns the passages of these papers now. A paper that has none,
// or no longer exists, has no passage in the answer.
func (st *Store) PassageTermsOf(ctx context.Context, paperIDs []uuid.UUID) ([]PassageTerms, error) {
	rows, err := st.pool.Query(ctx, passageTermsSQL+` WHERE c.paper_id = ANY($1)`, paperIDs)
	if err != nil {
		return nil, fmt.Errorf("papers: passage terms: %w", err)
	}
	var out []PassageTerms
	if err := forEachPassageTerms(rows, func(p PassageTerms) error { out = append(out, p); return nil }); err != nil {
		return nil, fmt.Errorf("papers: passage terms: %w", err)
	}
	return out, nil
}

const passageTermsSQL = `
	SELECT c.id, c.paper_id, c.chunk_index, ` + publicPredicate + `, c.search_vector::text
	  FROM paper_chunks c JOIN papers p ON p.id = c.paper_id`

func forEachPassageTerms(rows pgx.Rows, each func(PassageTerms) error) error {
	var p PassageTerms
	_, err := pgx.ForEachRow(rows, []any{&p.ID, &p.PaperID, &p.ChunkIndex, &p.Public, &p.Vector},
		func() error { return each(p) })
	return err
}

// IndexSearchInputs is what a search of the index asks PostgreSQL first, in one
// round trip (SearchInputs).
type IndexSearchInputs struct {
	// Changes are the changes made by transactions at or above the since asked
	// for that have committed, and Horizon the xmin of the snapshot they were read
	// in: the since of the next call.
	Changes []PassageChange
	Horizon uint64
	// TSQuery is the query as the tsquery PostgreSQL matches passages with, in its
	// text form ('' when it holds no lexeme).
	TSQuery string
	// PrivateVisible are the papers userID may see that not everyone may: the
	// private papers in their library. With the public papers they are what
	// visiblePredicate lets userID see.
	PrivateVisible []uuid.UUID
}

// SearchInputs reads, in one round trip, the passage changes since the
// transaction id since, query (a web-search query) as a tsquery, and the private
// papers userID may see.
func (st *Store) SearchInputs(ctx context.Context, userID uuid.UUID, query string, since uint64) (IndexSearchInputs, error) {
	var in IndexSearchInputs
	batch := &pgx.Batch{}
	batch.Queue(`
		SELECT pg_snapshot_xmin(pg_current_snapshot())::text, c.paper_id, c.xid::text
		  FROM (SELECT 1) one
		  LEFT JOIN paper_chunk_changes c ON c.xid >= $1::text::xid8`, strconv.FormatUint(since, 10))
	batch.Queue(`SELECT websearch_to_tsquery('english', $1)::text`, query)
	batch.Queue(`SELECT ul.paper_id FROM user_library ul WHERE ul.user_id = $1 AND NOT ul.paper_public`, userID)
	res := st.pool.SendBatch(ctx, batch)
	defer res.Close()
	rows, err := res.Query()
	if err != nil {
		return in, fmt.Errorf("papers: passage changes: %w", err)
	}
	if in.Changes, in.Horizon, err = scanChanges(rows); err != nil {
		return in, fmt.Errorf("papers: passage changes: %w", err)
	}
	if err := res.QueryRow().Scan(&in.TSQuery); err != nil {
		return in, fmt.Errorf("papers: parse the query: %w", err)
	}
	if rows, err = res.Query(); err != nil {
		return in, fmt.Errorf("papers: private visible ids: %w", err)
	}
	if in.PrivateVisible, err = pgx.CollectRows(rows, pgx.RowTo[uuid.UUID]); err != nil {
		return in, fmt.Errorf("papers: private visible ids: %w", err)
	}
	if err := res.Close(); err != nil {
		return in, fmt.Errorf("papers: search inputs: %w", err)
	}
	return in, nil
}

// PassageChanges returns the changes made by transactions at or above since that
// have committed, and the xmin of the snapshot they were read in, which is the
// since of the next call.
func (st *Store) PassageChanges(ctx context.Context, since uint64) ([]PassageChange, uint64, error) {
	rows, err := st.pool.Query(ctx, `
		SELECT pg_snapshot_xmin(pg_current_snapshot())::text, c.paper_id, c.xid::text
		  FROM (SELECT 1) one
		  LEFT JOIN paper_chunk_changes c ON c.xid >= $1::text::xid8`, strconv.FormatUint(since, 10))
	if err != nil {
		return nil, 0, fmt.Errorf("papers: passage changes: %w", err)
	}
	changes, horizon, err := scanChanges(rows)
	if err != nil {
		return nil, 0, fmt.Errorf("papers: passage changes: %w", err)
	}
	return changes, horizon, nil
}

// scanChanges reads the change log's rows: the snapshot's xmin on each, and a
// change on each but a lone row of the outer join.
func scanChanges(rows pgx.Rows) ([]PassageChange, uint64, error) {
	var out []PassageChange
	var horizon uint64
	var h string
	var paper *uuid.UUID
	var xid *string
	_, err := pgx.ForEachRow(rows, []any{&h, &paper, &xid}, func() error {
		var err error
		if horizon, err = strconv.ParseUint(h, 10, 64); err != nil {
			return err
		}
		if paper == nil || xid == nil {
			return nil
		}
		c := PassageChange{PaperID: *paper}
		c.XID, err = strconv.ParseUint(*xid, 10, 64)
		out = append(out, c)
		return err
	})
	return out, horizon, err
}

// MatchingPassages returns which of the passages ids query, a web-search query,
// matches.
func (st *Store) MatchingPassages(ctx context.Context, query string, ids []uuid.UUID) (map[uuid.UUID]bool, error) {
	return st.matching(ctx, `websearch_to_tsquery('english', $2)`, query, ids)
}

// PassagesMatchingTSQuery returns which of the passages ids tsquery, a tsquery in
// its text form, matches.
func (st *Store) PassagesMatchingTSQuery(ctx context.Context, tsquery string, ids []uuid.UUID) (map[uuid.UUID]bool, error) {
	return st.matching(ctx, `$2::tsquery`, tsquery, ids)
}

// TSQuery returns the tsquery of query, a web-search query, in its text form.
func (st *Store) TSQuery(ctx context.Context, query string) (string, error) {
	var out string
	if err := st.pool.QueryRow(ctx, `SELECT websearch_to_tsquery('english', $1)::text`, query).Scan(&out); err != nil {
		return "", fmt.Errorf("papers: read a search query: %w", err)
	}
	return out, nil
}

// matching returns which of the passages ids the tsquery expression (of $2, which
// is arg) matches.
func (st *Store) matching(ctx context.Context, expr, arg string, ids []uuid.UUID) (map[uuid.UUID]bool, error) {
	rows, err := st.pool.Query(ctx, `
		SELECT id FROM paper_chunks WHERE id = ANY($1) AND search_vector @@ `+expr, ids, arg)
	if err != nil {
		return nil, fmt.Errorf("papers: matching passages: %w", err)
	}
	found, err := pgx.CollectRows(rows, pgx.RowTo[uuid.UUID])
	if err != nil {
		return nil, fmt.Errorf("papers: matching passages: %w", err)
	}
	out := make(map[uuid.UUID]bool, len(found))
	for _, id := range found {
		out[id] = true
	}
	return out, nil
}
