// Package faulttest holds Lectern's fault-injection tests with real processes and
// real PostgreSQL (docs/reliability.md, "Fault injection"): the production binary
// (bin/lectern, from `make build`) killed with -9 in the middle of an upload and of
// an ingest, and PostgreSQL crashed and restarted (its own throwaway cluster) in the
// middle of an ingest and of a review batch. Each test checks what held afterwards:
// no orphan file, no paper left "being read", every job finished once, no
// half-written rows.
//
// The faults that need no process of the host's own live next to their code: a full
// disk (package ingest), a stalled model endpoint and a plugin killed mid-call
// (package app, with the real openai plugin), a dead worker's jobs (package jobs).
//
// This package is for tests only; it has no code of its own.
package faulttest
