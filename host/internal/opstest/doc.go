// Package opstest holds the end-to-end tests of the operator tooling that lives
// outside the Go host: scripts/restore-offhost, run against real PostgreSQL
// clusters with restore points made by pg_dump, tar and the age CLI, and the
// invariants of the deploy/ container stack. It has no code of its own.
package opstest
