-- 0018_passage_changes: a change log of passages, so that an in-process full-text
-- index on each API node can stay in step with PostgreSQL, the truth.
--
-- One row per paper whose passages or visibility changed, stamped with the id of
-- the last transaction that changed them. A reader keeps the xmin of the snapshot
-- it last read in (every transaction below it has ended) and asks for the rows at
-- or above it; it reloads those papers' passages. A transaction id is assigned in
-- the order transactions start, not commit, which is why the reader uses the
-- snapshot's xmin and not the largest id it has seen. Rows stay after their paper
-- is deleted: they are its tombstone for the nodes that have not caught up.
CREATE TABLE paper_chunk_changes (
    paper_id uuid PRIMARY KEY,
    xid      xid8 NOT NULL DEFAULT pg_current_xact_id()
);
CREATE INDEX paper_chunk_changes_xid ON paper_chunk_changes (xid);

CREATE FUNCTION paper_chunk_changes_note() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP IN ('INSERT', 'UPDATE') THEN
        INSERT INTO paper_chunk_changes (paper_id)
        SELECT DISTINCT paper_id FROM new_rows
        ON CONFLICT (paper_id) DO UPDATE SET xid = pg_current_xact_id();
    END IF;
    IF TG_OP IN ('DELETE', 'UPDATE') THEN
        INSERT INTO paper_chunk_changes (paper_id)
        SELECT DISTINCT paper_id FROM old_rows
        ON CONFLICT (paper_id) DO UPDATE SET xid = pg_current_xact_id();
    END IF;
    RETURN NULL;
END $$;

-- A trigger with transition tables fires for one event only.
CREATE TRIGGER paper_chunk_changes_insert AFTER INSERT ON paper_chunks
    REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION paper_chunk_changes_note();
CREATE TRIGGER paper_chunk_changes_update AFTER UPDATE ON paper_chunks
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION paper_chunk_changes_note();
CREATE TRIGGER paper_chunk_changes_delete AFTER DELETE ON paper_chunks
    REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION paper_chunk_changes_note();

-- Who may see a paper's passages changes with its visibility and discoverer
-- (papers.visiblePredicate); a library row is read at search time instead.
CREATE FUNCTION paper_visibility_changes_note() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO paper_chunk_changes (paper_id) VALUES (NEW.id)
    ON CONFLICT (paper_id) DO UPDATE SET xid = pg_current_xact_id();
    RETURN NULL;
END $$;
CREATE TRIGGER paper_visibility_changes AFTER UPDATE OF visibility, discovered_by ON papers
    FOR EACH ROW
    WHEN (OLD.visibility IS DISTINCT FROM NEW.visibility OR OLD.discovered_by IS DISTINCT FROM NEW.discovered_by)
    EXECUTE FUNCTION paper_visibility_changes_note();
