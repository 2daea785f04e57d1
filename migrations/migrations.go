// Package migrations embeds Lectern's numbered SQL migrations.
//
// Files are named NNNN_description.sql, zero-padded so that name order is version
// order. Each file runs in its own transaction; once released, a file is never edited
// (the runner refuses a changed checksum) — a change is a new file.
package migrations

import "embed"

// FS holds every migration file at its root.
//
//go:embed *.sql
var FS embed.FS
