-- model_fallback: why a summary or an extraction came from the builtin method.
--
-- When the model assigned to the summarize or extract role cannot do the work
-- (unreachable, timed out, refused, answered what cannot be read), the builtin
-- extractive method does it instead, and the paper page says so: which role, which
-- provider and model, and why, as rag.Fallback stores it
-- ({"role", "provider", "model", "endpoint", "reason", "message"}). NULL when the
-- summary or extraction is the work of the method that was asked for.

ALTER TABLE paper_summaries
    ADD COLUMN fallback jsonb CHECK (fallback IS NULL OR jsonb_typeof(fallback) = 'object');

ALTER TABLE paper_extractions
    ADD COLUMN fallback jsonb CHECK (fallback IS NULL OR jsonb_typeof(fallback) = 'object');
