// Package archtest holds tests that keep the host's structure as docs/ownership.md
// and docs/decisions.md describe it: each table in migrations/ is named in SQL by
// one package only, and no HTTP handler file runs SQL itself. It has no code of its
// own; its tests read the source tree and the schema.
package archtest
