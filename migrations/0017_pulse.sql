-- Pulse: what a user follows (topics, authors), the morning decks it made for
-- them, and the history of its nightly runs. Every row is the user's own; the
-- papers a deck suggests are instance-level discoveries (discovered_by NULL)
-- until the user acts on one.

-- A topic the user follows: words to search for and, optionally, arXiv (or other
-- source) categories to keep to.
CREATE TABLE pulse_topics (
    id         uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    user_id    uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    name       text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
    query      text NOT NULL CHECK (length(query) BETWEEN 1 AND 500),
    categories text[] NOT NULL DEFAULT '{}' CHECK (cardinality(categories) <= 20),
    enabled    boolean NOT NULL DEFAULT true,
    created_at timestamptz NOT NULL DEFAULT now(),
    UNIQUE (user_id, name)
);

-- An author the user follows, by name and, where known, Semantic Scholar id.
CREATE TABLE pulse_authors (
    id              uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    user_id         uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    name            text NOT NULL CHECK (length(name) BETWEEN 1 AND 300),
    s2_author_id    text CHECK (length(s2_author_id) <= 100),
    source          text NOT NULL DEFAULT 'manual' CHECK (source IN ('manual', 'auto_starred', 'auto_rated')),
    enabled         boolean NOT NULL DEFAULT true,
    last_checked_at timestamptz,
    created_at      timestamptz NOT NULL DEFAULT now(),
    UNIQUE NULLS NOT DISTINCT (user_id, name, s2_author_id)
);

-- One deck per user and day (the user's calendar day in their time zone).
CREATE TABLE pulse_decks (
    id              uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    user_id         uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    deck_date       date NOT NULL,
    card_count      integer NOT NULL DEFAULT 0 CHECK (card_count >= 0),
    generated_at    timestamptz NOT NULL DEFAULT now(),
    stats           jsonb NOT NULL DEFAULT '{}'::jsonb,
    degraded_reason text CHECK (length(degraded_reason) <= 2000),
    UNIQUE (user_id, deck_date),
    UNIQUE (id, user_id)
);

-- A suggestion in a deck, with the signals it was scored from (which the
-- classifier later trains on) and the one-line why.
CREATE TABLE pulse_cards (
    id       uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    deck_id  uuid NOT NULL,
    user_id  uuid NOT NULL,
    paper_id uuid NOT NULL REFERENCES papers (id) ON DELETE CASCADE,
    rank     integer NOT NULL CHECK (rank >= 1),
    score    double precision NOT NULL,
    signals  jsonb NOT NULL DEFAULT '{}'::jsonb,
    why      text NOT NULL DEFAULT '' CHECK (length(why) <= 1000),
    reason   text CHECK (length(reason) <= 2000),
    FOREIGN KEY (deck_id, user_id) REFERENCES pulse_decks (id, user_id) ON DELETE CASCADE,
    UNIQUE (deck_id, paper_id)
);
CREATE INDEX pulse_cards_user_paper ON pulse_cards (user_id, paper_id);

-- The history of nightly runs, kept for the diagnostics page.
CREATE TABLE pulse_runs (
    id              uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    user_id         uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    started_at      timestamptz NOT NULL DEFAULT now(),
    finished_at     timestamptz,
    status          text NOT NULL DEFAULT 'running' CHECK (status IN ('running', 'ok', 'degraded', 'failed')),
    candidate_count integer NOT NULL DEFAULT 0 CHECK (candidate_count >= 0),
    duration_ms     bigint CHECK (duration_ms >= 0),
    detail          jsonb NOT NULL DEFAULT '{}'::jsonb
);
CREATE INDEX pulse_runs_user ON pulse_runs (user_id, started_at DESC);
