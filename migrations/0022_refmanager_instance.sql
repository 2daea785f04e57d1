-- Instance-level reference-manager sync (issue 21): group libraries an admin
-- configures for the whole instance. What they bring is an instance-level
-- discovery (papers.discovered_by NULL), not anyone's library, so these rows have
-- no user: the instance owns them, like the deployment-wide settings. Owned by
-- host/internal/refsync.

CREATE TABLE refmanager_instance_links (
    -- The plugin's library id ("groups/42").
    library_id   text NOT NULL CHECK (length(library_id) BETWEEN 1 AND 200),
    item_key     text NOT NULL CHECK (length(item_key) BETWEEN 1 AND 100),
    paper_id     uuid NOT NULL REFERENCES papers (id) ON DELETE CASCADE,
    item_version bigint NOT NULL DEFAULT 0 CHECK (item_version >= 0),
    created_at   timestamptz NOT NULL DEFAULT now(),
    updated_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (library_id, item_key)
);
CREATE INDEX refmanager_instance_links_paper ON refmanager_instance_links (paper_id);

CREATE TABLE refmanager_instance_state (
    library_id  text PRIMARY KEY CHECK (length(library_id) BETWEEN 1 AND 200),
    -- The library version through which every change has been applied.
    version     bigint NOT NULL DEFAULT 0 CHECK (version >= 0),
    last_run_at timestamptz,
    last_ok_at  timestamptz,
    added       integer NOT NULL DEFAULT 0,
    updated     integer NOT NULL DEFAULT 0,
    removed     integer NOT NULL DEFAULT 0,
    capped      boolean NOT NULL DEFAULT false,
    last_error  text CHECK (length(last_error) <= 2000)
);
