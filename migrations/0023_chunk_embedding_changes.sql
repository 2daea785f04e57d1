-- 0023_chunk_embedding_changes: a change log of the vectors, so that the embedded
-- vector store of every host (API hosts search, worker hosts write: lectern serve
-- --role) stays in step with chunk_embeddings, the truth.
--
-- One row per model and chunk whose vector was written or deleted, stamped with
-- the id of the last transaction that did it. A reader keeps the xmin of the
-- snapshot it last read in and asks for the rows at or above it, then reads those
-- chunks' vectors again (a missing one was deleted), as the passages' log of
-- migration 0018 does. Rows are kept a day (the store prunes older ones); a
-- reader that has not read for twelve hours loads the whole model again.
CREATE TABLE chunk_embedding_changes (
    model    text NOT NULL,
    chunk_id uuid NOT NULL,
    xid      xid8 NOT NULL DEFAULT pg_current_xact_id(),
    noted_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (model, chunk_id)
);
CREATE INDEX chunk_embedding_changes_xid ON chunk_embedding_changes (model, xid);
CREATE INDEX chunk_embedding_changes_noted ON chunk_embedding_changes (noted_at);

CREATE FUNCTION chunk_embedding_changes_note() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP IN ('INSERT', 'UPDATE') THEN
        INSERT INTO chunk_embedding_changes (model, chunk_id)
        SELECT DISTINCT model, chunk_id FROM new_rows
        ON CONFLICT (model, chunk_id) DO UPDATE SET xid = pg_current_xact_id(), noted_at = now();
    END IF;
    IF TG_OP IN ('DELETE', 'UPDATE') THEN
        INSERT INTO chunk_embedding_changes (model, chunk_id)
        SELECT DISTINCT model, chunk_id FROM old_rows
        ON CONFLICT (model, chunk_id) DO UPDATE SET xid = pg_current_xact_id(), noted_at = now();
    END IF;
    RETURN NULL;
END $$;

-- A trigger with transition tables fires for one event only. Deletes cascaded
-- from paper_chunks (a paper removed) fire the delete trigger too.
CREATE TRIGGER chunk_embedding_changes_insert AFTER INSERT ON chunk_embeddings
    REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION chunk_embedding_changes_note();
CREATE TRIGGER chunk_embedding_changes_update AFTER UPDATE ON chunk_embeddings
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION chunk_embedding_changes_note();
CREATE TRIGGER chunk_embedding_changes_delete AFTER DELETE ON chunk_embeddings
    REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION chunk_embedding_changes_note();
