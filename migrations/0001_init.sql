-- 0001_init: the fresh Lectern schema.
--
-- Conventions (docs/database.md has the long form):
--   * ids are UUIDs from gen_random_uuid(), so ids in URLs cannot be enumerated;
--     append-only logs use bigint identities.
--   * every product row has a NOT NULL user_id (SPEC ownership rule 1). Corpus rows
--     (papers, chunks, embeddings, citation edges, knowledge-graph entities) have no
--     owner by design (rule 3). The only NULL-owned rows are system-scoped user_config
--     rows.
--   * a per-user child row points at its parent through (parent_id, user_id), so the
--     database itself refuses a row that links one user's task to another user's project.
--   * timestamps are timestamptz, set by the database.

-- ---------------------------------------------------------------------------
-- Identity
-- ---------------------------------------------------------------------------

CREATE TABLE users (
    id            uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    email         text NOT NULL CHECK (email = lower(btrim(email)) AND email LIKE '_%@_%' AND length(email) <= 320),
    display_name  text CHECK (length(display_name) <= 200),
    role          text NOT NULL DEFAULT 'user' CHECK (role IN ('user', 'admin')),
    timezone      text NOT NULL DEFAULT 'UTC' CHECK (length(timezone) BETWEEN 1 AND 64),
    created_at    timestamptz NOT NULL DEFAULT now(),
    updated_at    timestamptz NOT NULL DEFAULT now(),
    last_login_at timestamptz,
    deleted_at    timestamptz
);
-- An address belongs to one account, deleted or not, until the purge removes it.
CREATE UNIQUE INDEX users_email_key ON users (email);
CREATE INDEX users_live_admins ON users (id) WHERE role = 'admin' AND deleted_at IS NULL;

CREATE TABLE magic_link_tokens (
    token_hash   bytea PRIMARY KEY CHECK (octet_length(token_hash) = 32), -- SHA-256 of the emailed token
    user_id      uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    purpose      text NOT NULL DEFAULT 'sign_in' CHECK (purpose IN ('sign_in', 'invite')),
    created_at   timestamptz NOT NULL DEFAULT now(),
    expires_at   timestamptz NOT NULL,
    used_at      timestamptz,
    requested_ip inet,
    CHECK (expires_at > created_at)
);
CREATE INDEX magic_link_tokens_user ON magic_link_tokens (user_id, created_at DESC);
CREATE INDEX magic_link_tokens_expires ON magic_link_tokens (expires_at);

CREATE TABLE user_sessions (
    id           uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    user_id      uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    token_hash   bytea NOT NULL UNIQUE CHECK (octet_length(token_hash) = 32), -- SHA-256 of the cookie value
    created_at   timestamptz NOT NULL DEFAULT now(),
    expires_at   timestamptz NOT NULL,
    last_seen_at timestamptz,
    revoked_at   timestamptz,
    deleted_at   timestamptz,
    user_agent   text CHECK (length(user_agent) <= 512),
    ip           inet
);
CREATE INDEX user_sessions_user ON user_sessions (user_id);
CREATE INDEX user_sessions_expires ON user_sessions (expires_at);

-- Per-user configuration. scope = 'system' rows are deployment-wide (for example
-- messenger.bot_token, llm.providers.*) and always have a NULL user_id. scope = 'user'
-- rows belong to one user; a NULL user_id there marks a legacy row from a single-user
-- install, re-owned by reown_legacy_rows() (migration 0002, SPEC ownership rule 9).
CREATE TABLE user_config (
    id              uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    user_id         uuid REFERENCES users (id) ON DELETE CASCADE,
    scope           text NOT NULL DEFAULT 'user' CHECK (scope IN ('user', 'system')),
    key             text NOT NULL CHECK (key ~ '^[a-z][a-z0-9_]*(\.[a-z0-9_]+)*$' AND length(key) <= 200),
    value           jsonb,
    encrypted_value bytea,
    key_id          text,  -- which SERVICE_CONFIG_KEY sealed encrypted_value
    created_at      timestamptz NOT NULL DEFAULT now(),
    updated_at      timestamptz NOT NULL DEFAULT now(),
    CHECK (scope = 'user' OR user_id IS NULL),
    CHECK (value IS NULL OR encrypted_value IS NULL),
    CHECK ((encrypted_value IS NULL) = (key_id IS NULL)),
    UNIQUE NULLS NOT DISTINCT (user_id, key)
);

-- ---------------------------------------------------------------------------
-- Security log
-- ---------------------------------------------------------------------------

-- Append-only. user_id is free text, not a foreign key, so the log outlives the user.
CREATE TABLE audit_log (
    id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    user_id    text CHECK (length(user_id) <= 64),
    action     text NOT NULL CHECK (action ~ '^[a-z][a-z0-9_.:-]{0,127}$'),
    resource   text NOT NULL DEFAULT '' CHECK (length(resource) <= 512),
    "timestamp" timestamptz NOT NULL DEFAULT now(),
    metadata   jsonb NOT NULL DEFAULT '{}'::jsonb
        CHECK (jsonb_typeof(metadata) = 'object' AND octet_length(metadata::text) <= 4096)
);
CREATE INDEX audit_log_user ON audit_log (user_id, id DESC);
CREATE INDEX audit_log_action ON audit_log (action text_pattern_ops, id DESC);

-- Ordinary UPDATE and DELETE become no-ops. The daily purge is the one sanctioned
-- mutation: inside one transaction it runs ALTER TABLE audit_log DISABLE RULE
-- audit_log_no_update, scrubs, and enables it again (SPEC Events 3).
CREATE RULE audit_log_no_update AS ON UPDATE TO audit_log DO INSTEAD NOTHING;
CREATE RULE audit_log_no_delete AS ON DELETE TO audit_log DO INSTEAD NOTHING;

-- Rules do not see TRUNCATE; refuse it outright.
CREATE FUNCTION audit_log_refuse_truncate() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'audit_log is append-only: TRUNCATE is refused';
END
$$;
CREATE TRIGGER audit_log_no_truncate BEFORE TRUNCATE ON audit_log
    FOR EACH STATEMENT EXECUTE FUNCTION audit_log_refuse_truncate();

-- ---------------------------------------------------------------------------
-- Corpus (shared across users; no owner)
-- ---------------------------------------------------------------------------

CREATE TABLE papers (
    id                 uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    doi                text CHECK (doi = lower(doi) AND doi LIKE '10.%'),
    arxiv_id           text CHECK (arxiv_id !~ 'v[0-9]+$'),   -- without version
    arxiv_version      integer CHECK (arxiv_version > 0),
    openalex_id        text,
    semantic_scholar_id text,
    pubmed_id          text,
    title              text NOT NULL CHECK (length(btrim(title)) BETWEEN 1 AND 1000),
    -- [{"name": ..., "orcid": ..., "affiliation": ...}, ...]
    authors            jsonb NOT NULL DEFAULT '[]'::jsonb CHECK (jsonb_typeof(authors) = 'array'),
    abstract           text CHECK (length(abstract) <= 50000),
    publication_date   date,
    publication_date_precision text CHECK (publication_date_precision IN ('year', 'month', 'day')),
    venue              text CHECK (length(venue) <= 1000),
    url                text CHECK (length(url) <= 2000),
    pdf_url            text CHECK (length(pdf_url) <= 2000),
    source             text NOT NULL CHECK (source ~ '^[a-z][a-z0-9_]{0,63}$'),
    citation_count     integer CHECK (citation_count >= 0),
    metadata           jsonb NOT NULL DEFAULT '{}'::jsonb CHECK (jsonb_typeof(metadata) = 'object'),
    -- Who first introduced the paper; NULL means instance-level discovery, which makes
    -- the paper visible to every user (SPEC ownership rule 4).
    discovered_by      uuid REFERENCES users (id) ON DELETE SET NULL,
    visibility         text NOT NULL DEFAULT 'private' CHECK (visibility IN ('public', 'private')),
    discovered_at      timestamptz NOT NULL DEFAULT now(),
    updated_at         timestamptz NOT NULL DEFAULT now(),
    search_vector      tsvector GENERATED ALWAYS AS (
        setweight(to_tsvector('english', coalesce(title, '')), 'A') ||
        setweight(to_tsvector('english', coalesce(abstract, '')), 'B')
    ) STORED,
    CHECK ((publication_date IS NULL) = (publication_date_precision IS NULL)),
    CHECK (arxiv_version IS NULL OR arxiv_id IS NOT NULL)
);
CREATE UNIQUE INDEX papers_doi_key ON papers (doi) WHERE doi IS NOT NULL;
CREATE UNIQUE INDEX papers_arxiv_key ON papers (arxiv_id) WHERE arxiv_id IS NOT NULL;
CREATE UNIQUE INDEX papers_openalex_key ON papers (openalex_id) WHERE openalex_id IS NOT NULL;
CREATE UNIQUE INDEX papers_s2_key ON papers (semantic_scholar_id) WHERE semantic_scholar_id IS NOT NULL;
CREATE UNIQUE INDEX papers_pubmed_key ON papers (pubmed_id) WHERE pubmed_id IS NOT NULL;
CREATE INDEX papers_search ON papers USING gin (search_vector);
CREATE INDEX papers_discovered ON papers (discovered_at DESC, id);
CREATE INDEX papers_discovered_by ON papers (discovered_by) WHERE discovered_by IS NOT NULL;

-- Extracted full text of a paper, the ground truth for quote verification.
CREATE TABLE paper_texts (
    paper_id     uuid PRIMARY KEY REFERENCES papers (id) ON DELETE CASCADE,
    extractor    text NOT NULL,
    content      text NOT NULL,
    -- character offset at which each page starts: [0, 2811, ...]
    page_offsets integer[] NOT NULL DEFAULT '{}',
    page_count   integer NOT NULL CHECK (page_count >= 0),
    sha256       bytea CHECK (octet_length(sha256) = 32), -- of the source PDF
    extracted_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE paper_chunks (
    id          uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    paper_id    uuid NOT NULL REFERENCES papers (id) ON DELETE CASCADE,
    chunk_index integer NOT NULL CHECK (chunk_index >= 0),
    section     text CHECK (length(section) <= 500),
    content     text NOT NULL,
    page_start  integer NOT NULL CHECK (page_start >= 1),
    page_end    integer NOT NULL,
    char_start  integer NOT NULL CHECK (char_start >= 0),
    char_end    integer NOT NULL,
    token_count integer NOT NULL CHECK (token_count >= 0),
    created_at  timestamptz NOT NULL DEFAULT now(),
    search_vector tsvector GENERATED ALWAYS AS (to_tsvector('english', content)) STORED,
    CHECK (page_end >= page_start),
    CHECK (char_end >= char_start),
    UNIQUE (paper_id, chunk_index)
);
CREATE INDEX paper_chunks_search ON paper_chunks USING gin (search_vector);

-- One vector per chunk and embedding model; the source of truth for every vector index.
CREATE TABLE chunk_embeddings (
    chunk_id   uuid NOT NULL REFERENCES paper_chunks (id) ON DELETE CASCADE,
    model      text NOT NULL CHECK (length(model) BETWEEN 1 AND 200),
    dimension  integer NOT NULL CHECK (dimension BETWEEN 1 AND 16384),
    vector     real[] NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (chunk_id, model),
    CHECK (cardinality(vector) = dimension)
);
CREATE INDEX chunk_embeddings_model ON chunk_embeddings (model);

-- Citation edges. The cited work may not be in the corpus yet: then cited_paper_id is
-- NULL and the identifiers say what it is, so a later ingest can attach it.
CREATE TABLE paper_citations (
    id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    citing_paper_id uuid NOT NULL REFERENCES papers (id) ON DELETE CASCADE,
    cited_paper_id  uuid REFERENCES papers (id) ON DELETE SET NULL,
    cited_doi       text CHECK (cited_doi = lower(cited_doi)),
    cited_arxiv_id  text,
    cited_title     text CHECK (length(cited_title) <= 1000),
    cited_year      integer,
    context         text CHECK (length(context) <= 4000),
    is_influential  boolean,
    source          text NOT NULL,
    created_at      timestamptz NOT NULL DEFAULT now(),
    -- normalized identity of the cited work: 'doi:...', 'arxiv:...', 'paper:<uuid>' or 'title:<hash>'
    cited_key       text NOT NULL,
    UNIQUE (citing_paper_id, cited_key),
    CHECK (citing_paper_id IS DISTINCT FROM cited_paper_id)
);
CREATE INDEX paper_citations_cited ON paper_citations (cited_paper_id) WHERE cited_paper_id IS NOT NULL;
CREATE INDEX paper_citations_cited_doi ON paper_citations (cited_doi) WHERE cited_doi IS NOT NULL;

-- Knowledge-graph entities (corpus layer).
CREATE TABLE entities (
    id             uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    entity_type    text NOT NULL CHECK (entity_type IN ('method', 'dataset', 'metric', 'task', 'author', 'institution', 'concept')),
    canonical_name text NOT NULL CHECK (length(btrim(canonical_name)) BETWEEN 1 AND 500),
    aliases        text[] NOT NULL DEFAULT '{}',
    description    text,
    created_at     timestamptz NOT NULL DEFAULT now(),
    UNIQUE (entity_type, canonical_name)
);

CREATE TABLE entity_relationships (
    id                uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    source_entity_id  uuid NOT NULL REFERENCES entities (id) ON DELETE CASCADE,
    target_entity_id  uuid NOT NULL REFERENCES entities (id) ON DELETE CASCADE,
    relation          text NOT NULL CHECK (relation ~ '^[a-z][a-z_]{0,63}$'),
    paper_id          uuid REFERENCES papers (id) ON DELETE CASCADE,
    created_at        timestamptz NOT NULL DEFAULT now(),
    UNIQUE NULLS NOT DISTINCT (source_entity_id, target_entity_id, relation, paper_id),
    CHECK (source_entity_id <> target_entity_id)
);

-- ---------------------------------------------------------------------------
-- Per-user paper layer
-- ---------------------------------------------------------------------------

CREATE TABLE user_library (
    user_id   uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    paper_id  uuid NOT NULL REFERENCES papers (id) ON DELETE CASCADE,
    added_via text NOT NULL CHECK (added_via IN (
        'manual_save', 'search_save', 'upload', 'import', 'project_link', 'pulse_save',
        'refmanager_pull', 'messenger', 'legacy')),
    added_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (user_id, paper_id)
);
CREATE INDEX user_library_paper ON user_library (paper_id);
CREATE INDEX user_library_recent ON user_library (user_id, added_at DESC, paper_id);

-- Per-user overlay on a corpus paper. No row means state 'inbox'.
CREATE TABLE paper_user_state (
    user_id            uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    paper_id           uuid NOT NULL REFERENCES papers (id) ON DELETE CASCADE,
    state              text NOT NULL DEFAULT 'inbox' CHECK (state IN ('inbox', 'to_read', 'reading', 'done', 'trash')),
    state_before_trash text CHECK (state_before_trash IN ('inbox', 'to_read', 'reading', 'done')),
    starred            boolean NOT NULL DEFAULT false,
    rating             smallint CHECK (rating BETWEEN 1 AND 5),
    flagged            boolean NOT NULL DEFAULT false,
    notes              text CHECK (length(notes) <= 100000),
    read_at            timestamptz,
    state_changed_at   timestamptz NOT NULL DEFAULT now(),
    created_at         timestamptz NOT NULL DEFAULT now(),
    updated_at         timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (user_id, paper_id),
    CHECK (state = 'trash' OR state_before_trash IS NULL)
);
CREATE INDEX paper_user_state_view ON paper_user_state (user_id, state, paper_id);
CREATE INDEX paper_user_state_starred ON paper_user_state (user_id, paper_id) WHERE starred;

CREATE TABLE paper_recommendations (
    id          uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    user_id     uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    paper_id    uuid NOT NULL REFERENCES papers (id) ON DELETE CASCADE,
    score       double precision NOT NULL,
    modes       text[] NOT NULL DEFAULT '{}',
    explanation text,
    dismissed   boolean NOT NULL DEFAULT false,
    clicked     boolean NOT NULL DEFAULT false,
    created_at  timestamptz NOT NULL DEFAULT now(),
    updated_at  timestamptz NOT NULL DEFAULT now(),
    UNIQUE (user_id, paper_id)
);

-- Explicit thumbs and dismissals; the exclusion predicate reads the negative ones.
CREATE TABLE recommendation_feedback (
    id         uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    user_id    uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    paper_id   uuid NOT NULL REFERENCES papers (id) ON DELETE CASCADE,
    signal     text NOT NULL CHECK (signal IN ('positive', 'negative')),
    source     text NOT NULL CHECK (source IN ('pulse_thumbs', 'feed_thumbs', 'paper_detail_thumbs', 'dismiss_combined')),
    reason     text CHECK (length(reason) <= 2000),
    created_at timestamptz NOT NULL DEFAULT now(),
    UNIQUE (user_id, paper_id, source)
);
CREATE INDEX recommendation_feedback_recent ON recommendation_feedback (user_id, created_at DESC) WHERE signal = 'negative';

-- Notes and annotations, written by the user or pulled from a reference manager.
CREATE TABLE paper_notes (
    id                  uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    user_id             uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    paper_id            uuid NOT NULL REFERENCES papers (id) ON DELETE CASCADE,
    source              text NOT NULL DEFAULT 'user' CHECK (source IN ('user', 'refmanager')),
    body                text NOT NULL DEFAULT '' CHECK (length(body) <= 100000),
    highlight_text      text CHECK (length(highlight_text) <= 20000),
    page_number         integer CHECK (page_number >= 1),
    external_key        text,     -- the reference manager's note or annotation key
    external_version    bigint,
    verification_status text NOT NULL DEFAULT 'unverified' CHECK (verification_status IN ('unverified', 'verified', 'failed')),
    created_at          timestamptz NOT NULL DEFAULT now(),
    updated_at          timestamptz NOT NULL DEFAULT now(),
    CHECK (source = 'user' OR external_key IS NOT NULL)
);
CREATE INDEX paper_notes_owner ON paper_notes (user_id, paper_id);
CREATE UNIQUE INDEX paper_notes_external_key ON paper_notes (user_id, paper_id, source, external_key)
    WHERE external_key IS NOT NULL;

-- A user's extraction of record for a paper: one per (user, paper, template).
CREATE TABLE paper_extractions (
    id             uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    user_id        uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    paper_id       uuid NOT NULL REFERENCES papers (id) ON DELETE CASCADE,
    template       text NOT NULL DEFAULT 'default' CHECK (template ~ '^[a-z][a-z0-9_]{0,63}$'),
    model          text NOT NULL,
    prompt_version text NOT NULL,
    created_at     timestamptz NOT NULL DEFAULT now(),
    updated_at     timestamptz NOT NULL DEFAULT now(),
    UNIQUE (user_id, paper_id, template),
    UNIQUE (id, user_id)
);

-- Each extracted item carries a supporting quote and the outcome of checking it
-- against the paper's text.
CREATE TABLE paper_extraction_items (
    id                  uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    extraction_id       uuid NOT NULL,
    user_id             uuid NOT NULL,
    item_type           text NOT NULL CHECK (item_type IN ('claim', 'method', 'dataset', 'result', 'limitation')),
    content             text NOT NULL,
    quote               text,
    verification_status text NOT NULL DEFAULT 'unverified' CHECK (verification_status IN ('unverified', 'verified', 'failed')),
    similarity          real CHECK (similarity BETWEEN 0 AND 1),
    char_start          integer,
    char_end            integer,
    page_number         integer,
    position            integer NOT NULL DEFAULT 0,
    FOREIGN KEY (extraction_id, user_id) REFERENCES paper_extractions (id, user_id) ON DELETE CASCADE,
    CHECK (verification_status <> 'verified' OR (quote IS NOT NULL AND char_start IS NOT NULL AND char_end >= char_start))
);
CREATE INDEX paper_extraction_items_extraction ON paper_extraction_items (extraction_id, position);

-- A user's link between a paper and a knowledge-graph entity.
CREATE TABLE paper_entities (
    id                  uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    user_id             uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    paper_id            uuid NOT NULL REFERENCES papers (id) ON DELETE CASCADE,
    entity_id           uuid NOT NULL REFERENCES entities (id) ON DELETE CASCADE,
    role                text NOT NULL DEFAULT 'mentions' CHECK (role ~ '^[a-z][a-z_]{0,63}$'),
    quote               text,
    verification_status text NOT NULL DEFAULT 'unverified' CHECK (verification_status IN ('unverified', 'verified', 'failed')),
    created_at          timestamptz NOT NULL DEFAULT now(),
    UNIQUE (user_id, paper_id, entity_id, role)
);

-- ---------------------------------------------------------------------------
-- Projects
-- ---------------------------------------------------------------------------

CREATE TABLE projects (
    id          uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    user_id     uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    name        text NOT NULL CHECK (length(btrim(name)) BETWEEN 1 AND 200),
    description text CHECK (length(description) <= 20000),
    status      text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'paused', 'completed', 'archived')),
    deadline    date,
    color       text CHECK (color ~ '^#[0-9a-fA-F]{6}$'),
    created_at  timestamptz NOT NULL DEFAULT now(),
    updated_at  timestamptz NOT NULL DEFAULT now(),
    UNIQUE (id, user_id)
);
CREATE INDEX projects_owner ON projects (user_id, status);

CREATE TABLE tasks (
    id             uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    user_id        uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    project_id     uuid NOT NULL,
    parent_task_id uuid,
    title          text NOT NULL CHECK (length(btrim(title)) BETWEEN 1 AND 500),
    description    text CHECK (length(description) <= 20000),
    status         text NOT NULL DEFAULT 'todo' CHECK (status IN ('todo', 'in_progress', 'blocked', 'done')),
    priority       smallint NOT NULL DEFAULT 3 CHECK (priority BETWEEN 1 AND 4),
    due_at         timestamptz,
    completed_at   timestamptz,
    sort_order     integer NOT NULL DEFAULT 0,
    created_at     timestamptz NOT NULL DEFAULT now(),
    updated_at     timestamptz NOT NULL DEFAULT now(),
    UNIQUE (id, user_id),
    FOREIGN KEY (project_id, user_id) REFERENCES projects (id, user_id) ON DELETE CASCADE,
    FOREIGN KEY (parent_task_id, user_id) REFERENCES tasks (id, user_id) ON DELETE CASCADE,
    CHECK ((status = 'done') = (completed_at IS NOT NULL))
);
CREATE INDEX tasks_project ON tasks (project_id, sort_order);
CREATE INDEX tasks_owner_due ON tasks (user_id, due_at) WHERE status <> 'done';

CREATE TABLE milestones (
    id           uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    user_id      uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    project_id   uuid NOT NULL,
    title        text NOT NULL CHECK (length(btrim(title)) BETWEEN 1 AND 500),
    description  text CHECK (length(description) <= 20000),
    due_date     date NOT NULL,
    completed_at timestamptz,
    created_at   timestamptz NOT NULL DEFAULT now(),
    updated_at   timestamptz NOT NULL DEFAULT now(),
    FOREIGN KEY (project_id, user_id) REFERENCES projects (id, user_id) ON DELETE CASCADE
);
CREATE INDEX milestones_owner_due ON milestones (user_id, due_date) WHERE completed_at IS NULL;

CREATE TABLE project_papers (
    project_id uuid NOT NULL,
    paper_id   uuid NOT NULL REFERENCES papers (id) ON DELETE CASCADE,
    user_id    uuid NOT NULL,
    added_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (project_id, paper_id),
    FOREIGN KEY (project_id, user_id) REFERENCES projects (id, user_id) ON DELETE CASCADE
);
CREATE INDEX project_papers_owner ON project_papers (user_id, paper_id);

CREATE TABLE daily_log (
    user_id         uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    log_date        date NOT NULL,
    tasks_completed integer NOT NULL DEFAULT 0 CHECK (tasks_completed >= 0),
    cards_reviewed  integer NOT NULL DEFAULT 0 CHECK (cards_reviewed >= 0),
    papers_read     integer NOT NULL DEFAULT 0 CHECK (papers_read >= 0),
    review_ms       bigint NOT NULL DEFAULT 0 CHECK (review_ms >= 0),
    focus_seconds   integer NOT NULL DEFAULT 0 CHECK (focus_seconds >= 0),
    intent          text CHECK (length(intent) <= 2000),
    updated_at      timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (user_id, log_date)
);

-- ---------------------------------------------------------------------------
-- Spaced repetition
-- ---------------------------------------------------------------------------

CREATE TABLE decks (
    id                  uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    user_id             uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    name                text NOT NULL CHECK (length(btrim(name)) BETWEEN 1 AND 200),
    description         text CHECK (length(description) <= 20000),
    desired_retention   real NOT NULL DEFAULT 0.9 CHECK (desired_retention >= 0.7 AND desired_retention <= 0.99),
    maximum_interval    integer NOT NULL DEFAULT 36500 CHECK (maximum_interval BETWEEN 1 AND 36500), -- days
    created_at          timestamptz NOT NULL DEFAULT now(),
    updated_at          timestamptz NOT NULL DEFAULT now(),
    UNIQUE (user_id, name),
    UNIQUE (id, user_id)
);

CREATE TABLE cards (
    id             uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    user_id        uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    deck_id        uuid NOT NULL,
    paper_id       uuid REFERENCES papers (id) ON DELETE SET NULL,
    chunk_id       uuid REFERENCES paper_chunks (id) ON DELETE SET NULL,
    page_number    integer CHECK (page_number >= 1),
    card_type      text NOT NULL DEFAULT 'basic' CHECK (card_type IN ('basic', 'cloze', 'concept', 'quote', 'method', 'comparison')),
    front          text NOT NULL CHECK (length(btrim(front)) BETWEEN 1 AND 20000),
    back           text NOT NULL CHECK (length(back) <= 20000),
    tags           text[] NOT NULL DEFAULT '{}',
    -- draft: generated, waiting for the user; active: scheduled; suspended; buried until buried_until
    status         text NOT NULL DEFAULT 'active' CHECK (status IN ('draft', 'active', 'suspended', 'buried')),
    buried_until   timestamptz,
    -- FSRS memory state
    fsrs_state     smallint NOT NULL DEFAULT 0 CHECK (fsrs_state BETWEEN 0 AND 3), -- new, learning, review, relearning
    step           smallint NOT NULL DEFAULT 0 CHECK (step >= 0),
    stability      double precision CHECK (stability > 0),
    difficulty     double precision CHECK (difficulty BETWEEN 1 AND 10),
    due_at         timestamptz NOT NULL DEFAULT now(),
    last_review_at timestamptz,
    reps           integer NOT NULL DEFAULT 0 CHECK (reps >= 0),
    lapses         integer NOT NULL DEFAULT 0 CHECK (lapses >= 0),
    created_at     timestamptz NOT NULL DEFAULT now(),
    updated_at     timestamptz NOT NULL DEFAULT now(),
    UNIQUE (id, user_id),
    FOREIGN KEY (deck_id, user_id) REFERENCES decks (id, user_id) ON DELETE CASCADE,
    CHECK ((status = 'buried') = (buried_until IS NOT NULL)),
    CHECK ((fsrs_state = 0) = (stability IS NULL))
);
CREATE INDEX cards_due ON cards (user_id, due_at) WHERE status = 'active';
CREATE INDEX cards_deck ON cards (deck_id);

CREATE TABLE review_logs (
    id               uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    user_id          uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    card_id          uuid NOT NULL,
    rating           smallint NOT NULL CHECK (rating BETWEEN 1 AND 4), -- again, hard, good, easy
    reviewed_at      timestamptz NOT NULL,
    duration_ms      integer CHECK (duration_ms >= 0),
    state_before     smallint NOT NULL CHECK (state_before BETWEEN 0 AND 3),
    state_after      smallint NOT NULL CHECK (state_after BETWEEN 0 AND 3),
    stability_before double precision,
    stability_after  double precision NOT NULL,
    difficulty_before double precision,
    difficulty_after double precision NOT NULL,
    elapsed_days     double precision NOT NULL CHECK (elapsed_days >= 0),
    scheduled_days   double precision NOT NULL CHECK (scheduled_days >= 0),
    client_id        text CHECK (length(client_id) BETWEEN 1 AND 128), -- idempotency key of offline reviews
    created_at       timestamptz NOT NULL DEFAULT now(),
    FOREIGN KEY (card_id, user_id) REFERENCES cards (id, user_id) ON DELETE CASCADE,
    UNIQUE (user_id, client_id)
);
CREATE INDEX review_logs_card ON review_logs (card_id, reviewed_at);
CREATE INDEX review_logs_owner_time ON review_logs (user_id, reviewed_at);

-- ---------------------------------------------------------------------------
-- Pulse and per-user events
-- ---------------------------------------------------------------------------

CREATE TABLE pulse_source_health (
    user_id              uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    source               text NOT NULL CHECK (source ~ '^[a-z][a-z0-9_]{0,63}$'),
    successes            bigint NOT NULL DEFAULT 0 CHECK (successes >= 0),
    failures             bigint NOT NULL DEFAULT 0 CHECK (failures >= 0),
    consecutive_failures integer NOT NULL DEFAULT 0 CHECK (consecutive_failures >= 0),
    last_status          text CHECK (last_status IN ('ok', 'rate_limited', 'error', 'timeout')),
    last_error           text CHECK (length(last_error) <= 2000),
    last_request_at      timestamptz,
    last_success_at      timestamptz,
    backoff_until        timestamptz,
    updated_at           timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (user_id, source)
);

-- A user's Pulse classifier: a serialized blob and its HMAC-SHA256 tag, verified
-- before the blob is deserialized (SPEC "Pulse model signing").
CREATE TABLE pulse_models (
    id           uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    user_id      uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    version      text NOT NULL DEFAULT 'v1',
    blob         bytea NOT NULL,
    hmac         bytea NOT NULL CHECK (octet_length(hmac) = 32),
    sample_count integer NOT NULL CHECK (sample_count >= 0),
    metrics      jsonb NOT NULL DEFAULT '{}'::jsonb,
    active       boolean NOT NULL DEFAULT true,
    trained_at   timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX pulse_models_one_active ON pulse_models (user_id) WHERE active;

-- Per-user application events (job failures, source trouble, config changes) that the
-- dashboard shows a user about their own work.
CREATE TABLE system_events (
    id             bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    user_id        uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    level          text NOT NULL CHECK (level IN ('debug', 'info', 'warning', 'error', 'critical')),
    category       text NOT NULL CHECK (category IN ('error', 'job', 'source', 'auth', 'config')),
    source         text NOT NULL,
    message        text NOT NULL CHECK (length(message) <= 4000),
    context        jsonb NOT NULL DEFAULT '{}'::jsonb CHECK (jsonb_typeof(context) = 'object'),
    correlation_id text,
    created_at     timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX system_events_owner ON system_events (user_id, id DESC);

-- Infrastructure log events shipped to /infra-events. Operational, not product data:
-- no owner, purged after a short retention.
CREATE TABLE infra_events (
    id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    received_at timestamptz NOT NULL DEFAULT now(),
    source      text NOT NULL CHECK (length(source) <= 200),
    level       text NOT NULL CHECK (level IN ('debug', 'info', 'warning', 'error', 'critical')),
    message     text NOT NULL CHECK (length(message) <= 8000),
    context     jsonb NOT NULL DEFAULT '{}'::jsonb CHECK (jsonb_typeof(context) = 'object')
);
CREATE INDEX infra_events_received ON infra_events (received_at);

-- ---------------------------------------------------------------------------
-- Messenger
-- ---------------------------------------------------------------------------

CREATE TABLE messenger_pairing_tokens (
    token_hash  bytea PRIMARY KEY CHECK (octet_length(token_hash) = 32),
    user_id     uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    created_at  timestamptz NOT NULL DEFAULT now(),
    expires_at  timestamptz NOT NULL,
    consumed_at timestamptz,
    CHECK (expires_at > created_at)
);
CREATE INDEX messenger_pairing_tokens_user ON messenger_pairing_tokens (user_id);

-- One chat per user and one user per chat.
CREATE TABLE messenger_user_pairings (
    user_id            uuid PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
    chat_id            text NOT NULL UNIQUE CHECK (length(chat_id) BETWEEN 1 AND 64),
    messenger_username text CHECK (length(messenger_username) <= 256),
    paired_at          timestamptz NOT NULL DEFAULT now()
);

-- ---------------------------------------------------------------------------
-- Jobs
-- ---------------------------------------------------------------------------

-- Progress events of queued jobs (the queue rows themselves are River's tables).
-- seq orders a job's events and is the SSE event id, so a client resumes with
-- Last-Event-ID without a gap or a repeat.
CREATE TABLE job_progress (
    job_id     bigint NOT NULL,
    seq        integer NOT NULL CHECK (seq >= 1),
    current    bigint,
    total      bigint,
    message    text CHECK (length(message) <= 2000),
    data       jsonb,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (job_id, seq)
);
CREATE INDEX job_progress_created ON job_progress (created_at);
