// Package benchhttp is `make bench-http` (issue 18 item 7): an HTTP benchmark
// anyone can rerun. It starts the host (bin/lectern serve, the production binary)
// on a private embedded PostgreSQL under a cache folder, seeds it once with a
// generated corpus (10k papers, 100k passages, 10 users with 1k cards, a library
// and projects each) and the fixture PDFs, signs the users in through their
// sign-in links, and drives the mixed read set (due cards, library and feed
// pages, projects, passage search) at each load level with vegeta, printing
// p50/p95/p99, requests/s and non-2xx per route and overall.
//
// With --mix load (`make load`, issue 23 item 3) it runs virtual users instead:
// each signed in as one of the seeded users with its own session, doing one
// action of a mix with writes (reviews, Pulse ratings, uploads of generated
// PDFs, questions) and then thinking for a time drawn uniformly from
// [--think-min, --think-max], at each level of --users; it prints each route's
// percentiles and answers by status, and then looks in the database for every
// write the host acknowledged (vusers.go, loadrun.go).
//
// Seed is the one place outside the owning packages that writes their tables
// (archtest lists it): bulk generated rows for a benchmark, never run by the host.
// This package is a tool: API not stable.
package benchhttp
