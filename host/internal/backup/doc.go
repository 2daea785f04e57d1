// Package backup makes, checks, prunes and restores Lectern's restore points.
//
// A restore point is one folder under the backup folder (LECTERN_BACKUP_DIR), named
// by its UTC timestamp (YYYYMMDD_HHMMSS; a safety backup taken before a restore is
// safety_YYYYMMDD_HHMMSS). It holds the database dump (pg_dump -Fc of the server's
// own major version), the uploaded PDFs, when encrypted the secrets, and a manifest
// signed with HMAC-SHA256. Archives are encrypted with age to the configured
// recipients, all or none. The layout is a contract with scripts/restore-offhost;
// docs/operations.md "Backup and restore" describes it.
//
// Two processes use the package, with different rights:
//
//   - the backup sidecar (`lectern backup`, the [Service]) dumps, verifies, prunes
//     and restores. It alone writes the backup folder, drops databases and replaces
//     the PDF folder.
//   - the app (the [View] and its admin API) reads the backup folder and the
//     status, and writes only two sentinel files into the trigger folder
//     (LECTERN_BACKUP_TRIGGER_DIR): a restore request and "back up now". It gains
//     no new privilege (SPEC "Restore security").
//
// A restore that fails after its destructive step leaves the .destructive marker in
// the trigger folder; while it exists the app answers 503 on everything but sign-in,
// health and the backups panel ([View.Maintenance]).
package backup
