-- 0003_plugin_settings: run-time plugin state an admin changes.
--
-- plugins.toml lists the plugins, their enabled flag and non-secret settings. An admin
-- may enable or disable a plugin and change its settings while the host runs
-- (GET/PATCH /api/admin/plugins); those choices live here, keyed by the plugin's name
-- from plugins.toml, and win over the file at every start. A row whose plugin has left
-- plugins.toml is ignored (kept, so re-adding the plugin restores the admin's choice).
--
-- enabled NULL means "as plugins.toml says". settings holds only the keys the admin
-- overrode; the host merges them over the file's settings. Secrets never go here:
-- credentials reach a plugin per call from the encrypted user_config.

CREATE TABLE plugin_settings (
    plugin_name text PRIMARY KEY CHECK (plugin_name ~ '^[a-z][a-z0-9_-]{0,62}$'),
    enabled     boolean,
    settings    jsonb NOT NULL DEFAULT '{}'::jsonb
        CHECK (jsonb_typeof(settings) = 'object' AND octet_length(settings::text) <= 65536),
    updated_at  timestamptz NOT NULL DEFAULT now(),
    updated_by  uuid REFERENCES users (id) ON DELETE SET NULL
);
