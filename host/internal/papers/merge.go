package papers

import (
	"context"
	"encoding/hex"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// Merged is what MergeTx removed with the duplicate row.
type Merged struct {
	// Digests are the hex SHA-256 digests of the PDFs the removed row named (its
	// text's, its upload's, its download's): the caller releases the files no
	// other paper still names.
	Digests []string
	// HadText: the removed row had text and passages (and so vectors).
	HadText bool
}

// furtherState says that the duplicate's state f is further along than the
// survivor's t: done, reading, to_read, inbox, trash, in that order.
const furtherState = `array_position(ARRAY['trash', 'inbox', 'to_read', 'reading', 'done'], f.state)
		> array_position(ARRAY['trash', 'inbox', 'to_read', 'reading', 'done'], t.state)`

// mergeSteps move the per-user rows of papers' tables from $1 (the duplicate) to
// $2 (the survivor). Where a user has a row on both, the survivor's row keeps the
// richer of the two (see each step) and the duplicate's goes.
var mergeSteps = []struct{ what, sql string }{
	{"library rows", `
		UPDATE user_library t SET added_at = f.added_at, added_via = f.added_via
		  FROM user_library f
		 WHERE f.paper_id = $1 AND t.paper_id = $2 AND t.user_id = f.user_id AND f.added_at < t.added_at`},
	{"library rows", `
		DELETE FROM user_library f USING user_library t
		 WHERE f.paper_id = $1 AND t.paper_id = $2 AND t.user_id = f.user_id`},
	{"library rows", `UPDATE user_library SET paper_id = $2 WHERE paper_id = $1`},
	// The state further along (done > reading > to_read > inbox > trash) wins with
	// its own timestamps; stars and flags add up; the higher rating and the
	// earlier read date stay; both notes are kept, one after the other.
	{"reading states", `
		UPDATE paper_user_state t SET
		  state = CASE WHEN ` + furtherState + ` THEN f.state ELSE t.state END,
		  state_before_trash = CASE WHEN ` + furtherState + ` THEN f.state_before_trash ELSE t.state_before_trash END,
		  state_changed_at = CASE WHEN ` + furtherState + ` THEN f.state_changed_at ELSE t.state_changed_at END,
		  starred = t.starred OR f.starred, flagged = t.flagged OR f.flagged, rating = greatest(t.rating, f.rating),
		  notes = CASE WHEN coalesce(f.notes, '') = '' OR f.notes = t.notes THEN t.notes
		               WHEN coalesce(t.notes, '') = '' THEN f.notes
		               ELSE left(t.notes || E'\n\n' || f.notes, 100000) END,
		  read_at = least(t.read_at, f.read_at), created_at = least(t.created_at, f.created_at), updated_at = now()
		  FROM paper_user_state f
		 WHERE f.paper_id = $1 AND t.paper_id = $2 AND t.user_id = f.user_id`},
	{"reading states", `
		DELETE FROM paper_user_state f USING paper_user_state t
		 WHERE f.paper_id = $1 AND t.paper_id = $2 AND t.user_id = f.user_id`},
	{"reading states", `UPDATE paper_user_state SET paper_id = $2 WHERE paper_id = $1`},
	// A note pulled from a reference manager exists once per key: the survivor's
	// copy stays. Every other note moves.
	{"notes", `
		DELETE FROM paper_notes f USING paper_notes t
		 WHERE f.paper_id = $1 AND t.paper_id = $2 AND t.user_id = f.user_id AND t.source = f.source
		   AND t.external_key = f.external_key`},
	{"notes", `UPDATE paper_notes SET paper_id = $2 WHERE paper_id = $1`},
	{"recommendations", `
		UPDATE paper_recommendations t SET score = greatest(t.score, f.score),
		       modes = ARRAY(SELECT DISTINCT unnest(t.modes || f.modes)),
		       dismissed = t.dismissed OR f.dismissed, clicked = t.clicked OR f.clicked, updated_at = now()
		  FROM paper_recommendations f
		 WHERE f.paper_id = $1 AND t.paper_id = $2 AND t.user_id = f.user_id`},
	{"recommendations", `
		DELETE FROM paper_recommendations f USING paper_recommendations t
		 WHERE f.paper_id = $1 AND t.paper_id = $2 AND t.user_id = f.user_id`},
	{"recommendations", `UPDATE paper_recommendations SET paper_id = $2 WHERE paper_id = $1`},
	// Feedback of one kind is kept once: the later word stands.
	{"feedback", `
		DELETE FROM recommendation_feedback t USING recommendation_feedback f
		 WHERE f.paper_id = $1 AND t.paper_id = $2 AND t.user_id = f.user_id AND t.source = f.source
		   AND f.created_at > t.created_at`},
	{"feedback", `
		DELETE FROM recommendation_feedback f USING recommendation_feedback t
		 WHERE f.paper_id = $1 AND t.paper_id = $2 AND t.user_id = f.user_id AND t.source = f.source`},
	{"feedback", `UPDATE recommendation_feedback SET paper_id = $2 WHERE paper_id = $1`},
	// Citations of the duplicate now cite the survivor (an edge from the survivor
	// to itself goes); its own reference list joins the survivor's.
	{"citations", `DELETE FROM paper_citations WHERE cited_paper_id = $1 AND citing_paper_id = $2`},
	{"citations", `UPDATE paper_citations SET cited_paper_id = $2 WHERE cited_paper_id = $1`},
	{"citations", `
		UPDATE paper_citations f SET citing_paper_id = $2
		 WHERE f.citing_paper_id = $1 AND f.cited_paper_id IS DISTINCT FROM $2
		   AND NOT EXISTS (SELECT 1 FROM paper_citations t WHERE t.citing_paper_id = $2 AND t.cited_key = f.cited_key)`},
}

// MergeTx merges paper from into paper to, in the caller's transaction (lock both
// rows first): papers' per-user rows of every user move to to (see mergeSteps),
// from is deleted with its text, passages and what still hangs off it, and to
// takes the identifiers from held that it lacks. The packages owning the other
// tables that name a paper move their rows before this runs (package enrich).
// The caller decides that the two are one work and that they may be merged: two
// shared rows, or two private rows of one user alone.
func MergeTx(ctx context.Context, tx pgx.Tx, from, to uuid.UUID) (Merged, error) {
	if from == to {
		return Merged{}, fmt.Errorf("papers: merge: a paper cannot be merged into itself")
	}
	var loserProvenance []byte
	if err := tx.QueryRow(ctx, `SELECT provenance FROM papers WHERE id = $1`, from).Scan(&loserProvenance); err != nil {
		return Merged{}, fmt.Errorf("papers: merge: read the duplicate: %w", err)
	}
	for _, st := range mergeSteps {
		if _, err := tx.Exec(ctx, st.sql, from, to); err != nil {
			return Merged{}, fmt.Errorf("papers: merge %s: %w", st.what, err)
		}
	}
	var m Merged
	var text []byte
	var upload, download, doi, arxiv, openalex, s2, pubmed *string
	var version *int
	err := tx.QueryRow(ctx, `
		DELETE FROM papers p WHERE p.id = $1
		RETURNING (SELECT t.sha256 FROM paper_texts t WHERE t.paper_id = p.id),
		          EXISTS (SELECT 1 FROM paper_texts t WHERE t.paper_id = p.id),
		          p.metadata->'upload'->>'sha256', p.metadata->'download'->>'sha256',
		          p.doi, p.arxiv_id, p.arxiv_version, p.openalex_id, p.semantic_scholar_id, p.pubmed_id`, from).
		Scan(&text, &m.HadText, &upload, &download, &doi, &arxiv, &version, &openalex, &s2, &pubmed)
	if err != nil {
		return Merged{}, fmt.Errorf("papers: merge: delete the duplicate: %w", err)
	}
	if len(text) == 32 {
		m.Digests = append(m.Digests, hex.EncodeToString(text))
	}
	for _, d := range []*string{upload, download} {
		if d != nil && *d != "" {
			m.Digests = append(m.Digests, *d)
		}
	}
	if _, err := tx.Exec(ctx, `
		UPDATE papers SET doi = coalesce(doi, $2), arxiv_id = coalesce(arxiv_id, $3),
		       arxiv_version = CASE WHEN arxiv_id IS NULL THEN $4::int ELSE arxiv_version END,
		       openalex_id = coalesce(openalex_id, $5), semantic_scholar_id = coalesce(semantic_scholar_id, $6),
		       pubmed_id = coalesce(pubmed_id, $7),
		       provenance = provenance || jsonb_strip_nulls(jsonb_build_object(
		           'doi', CASE WHEN doi IS NULL THEN $9::jsonb->>'doi' END,
		           'arxiv_id', CASE WHEN arxiv_id IS NULL THEN $9::jsonb->>'arxiv_id' END)),
		       metadata = jsonb_set(metadata, '{merged_from}', coalesce(metadata->'merged_from', '[]'::jsonb) || to_jsonb($8::text)),
		       updated_at = now()
		 WHERE id = $1`, to, doi, arxiv, version, openalex, s2, pubmed, from.String(), loserProvenance); err != nil {
		return Merged{}, fmt.Errorf("papers: merge: keep the duplicate's identifiers: %w", err)
	}
	// Old links to the duplicate, and to anything merged into it before, now lead
	// to the survivor.
	if _, err := tx.Exec(ctx, `
		WITH moved AS (UPDATE paper_redirects SET to_id = $2 WHERE to_id = $1)
		INSERT INTO paper_redirects (from_id, to_id) VALUES ($1, $2)
		ON CONFLICT (from_id) DO UPDATE SET to_id = EXCLUDED.to_id, merged_at = now()`, from, to); err != nil {
		return Merged{}, fmt.Errorf("papers: merge: keep old links working: %w", err)
	}
	return m, nil
}
