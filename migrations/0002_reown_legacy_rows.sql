-- 0002_reown_legacy_rows: SPEC ownership rule 9.
--
-- A single-user install of an earlier version could leave per-user rows without an
-- owner: user_config rows of scope 'user' whose user_id is NULL (system-scoped rows are
-- NULL-owned by design and are never touched). When exactly one live admin exists,
-- those rows belong to that admin. With no admin, or with several, nobody can say whose
-- they are, so nothing changes.
--
-- The host runs reown_legacy_rows() after every migration run, so rows written by an
-- older binary between upgrades are picked up too. It returns the number of rows it
-- re-owned. Where the admin already has a row for the same key, the admin's own row
-- wins and the legacy row is left in place for the operator to inspect.

CREATE FUNCTION reown_legacy_rows() RETURNS integer
LANGUAGE plpgsql AS $$
DECLARE
    admin_count integer;
    admin_id    uuid;
    moved       integer;
BEGIN
    SELECT count(*), min(id::text)::uuid INTO admin_count, admin_id
      FROM users
     WHERE role = 'admin' AND deleted_at IS NULL;

    IF admin_count <> 1 THEN
        RETURN 0;
    END IF;

    UPDATE user_config AS legacy
       SET user_id = admin_id, updated_at = now()
     WHERE legacy.scope = 'user'
       AND legacy.user_id IS NULL
       AND NOT EXISTS (
           SELECT 1 FROM user_config AS own
            WHERE own.user_id = admin_id AND own.key = legacy.key);
    GET DIAGNOSTICS moved = ROW_COUNT;
    RETURN moved;
END
$$;

SELECT reown_legacy_rows();
