-- 0006_due_queue_index: the review queue reads from one index in its own order.
--
-- The due query takes active cards and buried cards whose time has come, oldest due
-- first. The index of 0001 covered active cards only, so PostgreSQL fell back to
-- sorting every due card of the user: p95 77 ms at 100k cards (docs/benchmarks.md).

DROP INDEX IF EXISTS cards_due;
CREATE INDEX cards_due_queue ON cards (user_id, due_at, id) WHERE status IN ('active', 'buried');
