package store

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// auditTables and auditFunctions are what migration 0008 gives the audit log's own
// role. HandOver never gives them to the application's role, not even where 0008
// could not move them: then they stay with the role that ran the migrations.
var (
	auditTables    = []string{"audit_log"}
	auditFunctions = []string{"audit_log_scrub", "audit_log_refuse_truncate"}
)

// handOverStatements lists one ALTER ... OWNER TO $1 for every object in the current
// schema that the connecting role owns: tables (partitions included), views,
// materialized views, sequences, composite, enum, range and base types, domains,
// functions, procedures and aggregates. Objects that follow another one's owner are
// left out, because ALTER on them is refused or redundant: indexes and a table's row
// type follow the table, a serial or identity column's sequence its table, an array
// type its element type. A partition does not follow its parent, nor a multirange
// its range: both are listed. Members of an extension stay with the extension's
// owner.
const handOverStatements = `
WITH me AS (SELECT oid FROM pg_roles WHERE rolname = current_user),
     ns AS (SELECT oid FROM pg_namespace WHERE nspname = current_schema()),
     ext AS (SELECT classid, objid FROM pg_depend WHERE deptype = 'e')
SELECT format('ALTER %s %s OWNER TO %I',
              CASE c.relkind WHEN 'S' THEN 'SEQUENCE' WHEN 'v' THEN 'VIEW' WHEN 'm' THEN 'MATERIALIZED VIEW'
                             WHEN 'f' THEN 'FOREIGN TABLE' WHEN 'c' THEN 'TYPE' ELSE 'TABLE' END,
              c.oid::regclass, $1::text)
  FROM pg_class c, me, ns
 WHERE c.relnamespace = ns.oid AND c.relowner = me.oid
   AND c.relkind IN ('r', 'p', 'f', 'v', 'm', 'S', 'c')
   AND c.relname <> ALL ($2::text[])
   AND NOT (c.relkind = 'S' AND EXISTS (SELECT FROM pg_depend d
                    WHERE d.classid = 'pg_class'::regclass AND d.objid = c.oid
                      AND d.refclassid = 'pg_class'::regclass AND d.deptype IN ('a', 'i')))
   AND NOT EXISTS (SELECT FROM ext WHERE ext.classid = 'pg_class'::regclass AND ext.objid = c.oid)
UNION ALL
SELECT format('ALTER %s %s OWNER TO %I', CASE t.typtype WHEN 'd' THEN 'DOMAIN' ELSE 'TYPE' END, t.oid::regtype, $1::text)
  FROM pg_type t, me, ns
 WHERE t.typnamespace = ns.oid AND t.typowner = me.oid
   AND t.typrelid = 0
   AND NOT EXISTS (SELECT FROM pg_type e WHERE e.typarray = t.oid)
   AND NOT EXISTS (SELECT FROM ext WHERE ext.classid = 'pg_type'::regclass AND ext.objid = t.oid)
UNION ALL
SELECT format('ALTER %s %s OWNER TO %I', CASE p.prokind WHEN 'a' THEN 'AGGREGATE' ELSE 'ROUTINE' END,
              p.oid::regprocedure, $1::text)
  FROM pg_proc p, me, ns
 WHERE p.pronamespace = ns.oid AND p.proowner = me.oid
   AND p.proname <> ALL ($3::text[])
   AND NOT EXISTS (SELECT FROM ext WHERE ext.classid = 'pg_proc'::regclass AND ext.objid = p.oid)`

// HandOver gives role the current database and every object in the current schema
// that the connecting role owns (see handOverStatements), except the audit log and
// its functions, which stay with their owner (migration 0008). On the embedded
// cluster the host runs it as the superuser right after the migrations, so the
// application's role owns the tables it uses, River's included, but not the audit
// log, and cannot switch its rules off.
//
// HandOver is idempotent: objects role already owns are not touched, so an install
// whose schema the superuser owns is converted on its next start, and a later
// migration's new objects are handed over after it ran. It needs a superuser (or a
// member of role) and returns how many objects changed owner, the database counted.
func HandOver(ctx context.Context, pool *pgxpool.Pool, role string) (int, error) {
	n := 0
	err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		// One run at a time, and never while a migration runs.
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, migrationLockKey); err != nil {
			return err
		}
		var exists bool
		if err := tx.QueryRow(ctx, `SELECT to_regrole($1) IS NOT NULL`, role).Scan(&exists); err != nil {
			return err
		}
		if !exists {
			return fmt.Errorf("role %s does not exist", role)
		}
		var alterDB string
		err := tx.QueryRow(ctx, `
			SELECT CASE WHEN datdba <> to_regrole($1) THEN format('ALTER DATABASE %I OWNER TO %I', datname, $1::text) ELSE '' END
			  FROM pg_database WHERE datname = current_database()`, role).Scan(&alterDB)
		if err != nil {
			return err
		}
		stmts := []string{}
		if alterDB != "" {
			stmts = append(stmts, alterDB)
		}
		rows, err := tx.Query(ctx, handOverStatements, role, auditTables, auditFunctions)
		if err != nil {
			return err
		}
		objects, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			return err
		}
		for _, stmt := range append(stmts, objects...) {
			if _, err := tx.Exec(ctx, stmt); err != nil {
				return fmt.Errorf("%s: %w", stmt, err)
			}
			n++
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("store: hand the schema to %s: %w", role, err)
	}
	return n, nil
}
