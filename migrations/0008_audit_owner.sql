-- 0008_audit_owner: the application's role cannot switch the audit rules off
-- (issue 14 item 8).
--
-- The rules of 0001 make UPDATE and DELETE no-ops, but the table's owner may
-- disable or drop them, and until now the owner was the role the host connects as.
-- Here the log moves to a role of its own, lectern_audit (NOLOGIN), and the role
-- that owned it keeps only SELECT and INSERT. The purge's scrub, which needs the
-- update rule off for a moment, becomes audit_log_scrub(): a SECURITY DEFINER
-- function owned by lectern_audit that does that one scrub and nothing else. It
-- reads no table the application's role owns, so no code of that role's ever runs
-- with the audit owner's rights.
--
-- The schema's owner could still drop the whole table; an event trigger refuses
-- that (below).
--
-- Creating a role, giving a table away and creating an event trigger need a
-- superuser. When this migration
-- runs as a non-superuser (an operator's DATABASE_URL), it creates the function
-- with the current role as owner and leaves the table where it is: nothing breaks,
-- the rules stay in force against every other role, and the host warns at start
-- that they cannot be enforced against its own (docs/database.md).

-- The scrub of hard-deleted users (SPEC Events 3): their user_id is nulled and the
-- PII keys are stripped from their entries; entries where someone else acted on
-- them lose the subject's e-mail. Action, resource and timestamp stay. The key list
-- is audit.PIIKeys; it is fixed here so that no caller can strip anything else.
CREATE FUNCTION audit_log_scrub(user_ids text[]) RETURNS bigint
LANGUAGE plpgsql SECURITY DEFINER AS $$
DECLARE
    scrubbed bigint;
BEGIN
    IF user_ids IS NULL OR cardinality(user_ids) = 0 THEN
        RETURN 0;
    END IF;
    ALTER TABLE audit_log DISABLE RULE audit_log_no_update;
    UPDATE audit_log
       SET user_id = NULL, metadata = metadata - ARRAY['ip', 'email', 'user_agent', 'target_email']
     WHERE user_id = ANY (user_ids);
    GET DIAGNOSTICS scrubbed = ROW_COUNT;
    UPDATE audit_log SET metadata = metadata - 'target_email'
     WHERE metadata->>'target_user_id' = ANY (user_ids);
    ALTER TABLE audit_log ENABLE RULE audit_log_no_update;
    RETURN scrubbed;
END
$$;

REVOKE EXECUTE ON FUNCTION audit_log_scrub(text[]) FROM PUBLIC;

DO $$
DECLARE
    schema    name := current_schema();
    old_owner name;
BEGIN
    -- Built-ins first, then the schema, the session's temporary tables never:
    -- nothing another role creates can stand in for what the function calls.
    EXECUTE format('ALTER FUNCTION audit_log_scrub(text[]) SET search_path = pg_catalog, %I, pg_temp', schema);

    SELECT tableowner INTO old_owner FROM pg_tables WHERE schemaname = schema AND tablename = 'audit_log';
    EXECUTE format('GRANT EXECUTE ON FUNCTION audit_log_scrub(text[]) TO %I, pg_database_owner', old_owner);

    IF NOT (SELECT rolsuper FROM pg_roles WHERE rolname = current_user) THEN
        RAISE NOTICE 'audit_log stays owned by %: only a superuser can hand it to lectern_audit', old_owner;
        RETURN;
    END IF;

    BEGIN
        CREATE ROLE lectern_audit NOLOGIN;
    EXCEPTION WHEN duplicate_object OR unique_violation THEN
        NULL; -- roles are per cluster: another database (or a concurrent run) made it
    END;
    EXECUTE format('GRANT USAGE ON SCHEMA %I TO lectern_audit', schema);
    ALTER TABLE audit_log OWNER TO lectern_audit;
    ALTER FUNCTION audit_log_refuse_truncate() OWNER TO lectern_audit;
    ALTER FUNCTION audit_log_scrub(text[]) OWNER TO lectern_audit;
    -- The former owner (the application's role in every setup so far) and whoever
    -- owns the database keep writing and reading the log, and nothing more.
    EXECUTE format('GRANT SELECT, INSERT ON audit_log TO %I, pg_database_owner', old_owner);

    -- The owner of the schema (the database's owner, usually the application's
    -- role) may drop any table in it, the log included, and then make a new one
    -- without rules. An event trigger, which only a superuser can create, alter or
    -- bypass, refuses any statement that drops the log. Its function lives in a
    -- schema of the audit role's, so DROP SCHEMA ... CASCADE of the log's schema
    -- cannot take the trigger with it.
    CREATE SCHEMA IF NOT EXISTS lectern_audit AUTHORIZATION lectern_audit;
    CREATE FUNCTION lectern_audit.audit_log_refuse_drop() RETURNS event_trigger
    LANGUAGE plpgsql SET search_path = pg_catalog AS $fn$
    BEGIN
        IF EXISTS (SELECT 1 FROM pg_event_trigger_dropped_objects()
                    WHERE object_type = 'table' AND object_name = 'audit_log') THEN
            RAISE EXCEPTION 'audit_log is append-only: dropping it is refused';
        END IF;
    END
    $fn$;
    ALTER FUNCTION lectern_audit.audit_log_refuse_drop() OWNER TO lectern_audit;
    CREATE EVENT TRIGGER audit_log_no_drop ON sql_drop EXECUTE FUNCTION lectern_audit.audit_log_refuse_drop();
END
$$;
