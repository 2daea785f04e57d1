-- Where a merged-away paper went: papers.MergeTx deletes the duplicate row and
-- records its id here, so an old link (a bookmark, a citation in a saved answer, a
-- card's reader link) reaches the paper it became. A chain of merges is kept
-- flat: every redirect points at a paper that exists, and goes when that paper
-- does. Whether the caller may see the target is checked on every use.
CREATE TABLE paper_redirects (
    from_id   uuid PRIMARY KEY,
    to_id     uuid NOT NULL REFERENCES papers (id) ON DELETE CASCADE,
    merged_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX paper_redirects_to_idx ON paper_redirects (to_id);

INSERT INTO paper_redirects (from_id, to_id, merged_at)
SELECT DISTINCT ON (m.from_id) m.from_id, p.id, p.updated_at
  FROM papers p, LATERAL (SELECT value::uuid AS from_id FROM jsonb_array_elements_text(p.metadata->'merged_from')) m
 WHERE jsonb_typeof(p.metadata->'merged_from') = 'array'
   AND NOT EXISTS (SELECT 1 FROM papers q WHERE q.id = m.from_id)
 ORDER BY m.from_id, p.updated_at DESC;
