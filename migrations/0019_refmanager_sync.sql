-- Reference-manager sync (issue 21): which remote item brought which paper into a
-- user's library, and where each user's sync of each library stands. Owned by
-- host/internal/refsync.

CREATE TABLE refmanager_links (
    user_id      uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    -- The plugin's library id ("users/475425", "groups/42").
    library_id   text NOT NULL CHECK (length(library_id) BETWEEN 1 AND 200),
    item_key     text NOT NULL CHECK (length(item_key) BETWEEN 1 AND 100),
    paper_id     uuid NOT NULL REFERENCES papers (id) ON DELETE CASCADE,
    item_version bigint NOT NULL DEFAULT 0 CHECK (item_version >= 0),
    -- pull: the sync read the item; push: Lectern wrote it.
    origin       text NOT NULL CHECK (origin IN ('pull', 'push')),
    -- brought: the sync put the paper into the library (so a remote deletion
    -- takes it out again; a paper the user had already stays).
    brought      boolean NOT NULL DEFAULT false,
    created_at   timestamptz NOT NULL DEFAULT now(),
    updated_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (user_id, library_id, item_key)
);
CREATE INDEX refmanager_links_paper ON refmanager_links (user_id, paper_id);

CREATE TABLE refmanager_sync_state (
    user_id     uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    library_id  text NOT NULL CHECK (length(library_id) BETWEEN 1 AND 200),
    -- The library version through which every change has been applied.
    version     bigint NOT NULL DEFAULT 0 CHECK (version >= 0),
    last_run_at timestamptz,
    last_ok_at  timestamptz,
    -- The last run's counts and, when it failed, why (in words).
    added       integer NOT NULL DEFAULT 0,
    updated     integer NOT NULL DEFAULT 0,
    removed     integer NOT NULL DEFAULT 0,
    notes       integer NOT NULL DEFAULT 0,
    capped      boolean NOT NULL DEFAULT false,
    last_error  text CHECK (length(last_error) <= 2000),
    PRIMARY KEY (user_id, library_id)
);
