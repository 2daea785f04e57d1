package audit

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5/pgxpool"
)

// secureAuditLog is migration 0008's hand-over of the audit log, as statements
// that can run again: the log and its functions belong to lectern_audit, whoever
// owns the database may read and append to the log and run the scrub, and nobody
// else may run it.
const secureAuditLog = `
DO $$
DECLARE
    schema name := current_schema();
BEGIN
    BEGIN
        CREATE ROLE lectern_audit NOLOGIN;
    EXCEPTION WHEN duplicate_object OR unique_violation THEN
        NULL;
    END;
    EXECUTE format('GRANT USAGE ON SCHEMA %I TO lectern_audit', schema);
    ALTER TABLE audit_log OWNER TO lectern_audit;
    ALTER FUNCTION audit_log_refuse_truncate() OWNER TO lectern_audit;
    ALTER FUNCTION audit_log_scrub(text[]) OWNER TO lectern_audit;
    REVOKE EXECUTE ON FUNCTION audit_log_scrub(text[]) FROM PUBLIC;
    EXECUTE format('ALTER FUNCTION audit_log_scrub(text[]) SET search_path = pg_catalog, %I, pg_temp', schema);
    GRANT EXECUTE ON FUNCTION audit_log_scrub(text[]) TO pg_database_owner;
    GRANT SELECT, INSERT ON audit_log TO pg_database_owner;
    IF to_regnamespace('lectern_audit') IS NOT NULL THEN
        ALTER SCHEMA lectern_audit OWNER TO lectern_audit;
    END IF;
    IF to_regprocedure('lectern_audit.audit_log_refuse_drop()') IS NOT NULL THEN
        ALTER FUNCTION lectern_audit.audit_log_refuse_drop() OWNER TO lectern_audit;
    END IF;
END
$$`

// SecureLog gives the audit log back to its own role, with the grants
// migration 0008 made, on a database restored by a superuser from a dump taken
// without owners and privileges (lectern backup): there the log came back owned by
// the superuser and the application's role could no longer write it. It needs a
// superuser and is idempotent.
func SecureLog(ctx context.Context, pool *pgxpool.Pool) error {
	if _, err := pool.Exec(ctx, secureAuditLog); err != nil {
		return fmt.Errorf("audit: give the log back to its role: %w", err)
	}
	return nil
}
