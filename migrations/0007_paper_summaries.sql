-- 0007_paper_summaries: summaries of a paper, cached per model and prompt version.
--
-- A summary is derived from the paper's text (or its abstract) alone, the same for
-- every reader, so it lives in the corpus layer beside paper_texts and paper_chunks
-- and has no owner; reads go through the paper's visibility (papers.VisibleSQL),
-- so a private upload's summary is seen only by those who see the paper.

CREATE TABLE paper_summaries (
    id             uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    paper_id       uuid NOT NULL REFERENCES papers (id) ON DELETE CASCADE,
    model          text NOT NULL CHECK (length(model) BETWEEN 1 AND 300),
    prompt_version text NOT NULL CHECK (length(prompt_version) BETWEEN 1 AND 50),
    method         text NOT NULL CHECK (method IN ('extractive', 'generative')),
    source         text NOT NULL CHECK (source IN ('full_text', 'abstract')),
    tldr           text NOT NULL,
    summary        text NOT NULL,
    -- [{"text", "quote", "verified", "similarity", "char_start", "char_end"}]
    key_findings   jsonb NOT NULL DEFAULT '[]' CHECK (jsonb_typeof(key_findings) = 'array'),
    confidence     text NOT NULL CHECK (confidence IN ('HIGH', 'MEDIUM', 'LOW', 'UNVERIFIED')),
    created_at     timestamptz NOT NULL DEFAULT now(),
    UNIQUE (paper_id, model, prompt_version)
);
CREATE INDEX paper_summaries_latest ON paper_summaries (paper_id, created_at DESC);

-- The model and method of a user's extraction, and the text it was checked against.
ALTER TABLE paper_extractions
    ADD COLUMN method text NOT NULL DEFAULT 'generative' CHECK (method IN ('extractive', 'generative')),
    ADD COLUMN source text NOT NULL DEFAULT 'full_text' CHECK (source IN ('full_text', 'abstract'));
