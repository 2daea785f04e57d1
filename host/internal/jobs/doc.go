// Package jobs runs Lectern's long-running work on River (riverqueue/river, pgx
// driver) in the host's own PostgreSQL, and exposes it through one public job
// envelope at /api/jobs (SPEC "Long-running work"; docs/jobs.md).
//
// This package is internal to the host; its API changes with the host.
//
// # Kinds
//
// Every job kind is registered once, with Register, on the Registry the host
// hands to New: its args type (whose Kind() names it), worker, queue, attempts,
// timeout, and who may enqueue it through the API (EnqueueUser, EnqueueAdmin,
// EnqueueOps). The service adds its own kinds: pulse.train_classifier and
// data.purge (unless the host registered them first), jobs.prune_progress and
// jobs.user_schedule.
//
// # Workers
//
// A registered worker is wrapped by the envelope layer. Inside Work it may call
// ReportProgress (or Report) to publish a progress event, SetResult to record the
// job's result, and return a PublicError to fail with a message its owner may
// read; any other error shows as "Job failed". Work must return once its context
// is done: that is how cancel and timeouts reach it.
//
// # Owners
//
// A job belongs to the user who enqueued it (or for whom the ops key enqueued
// it); the owner is kept in River's job metadata and every read filters on it in
// SQL, so another user's job is not found. Jobs enqueued by the ops key alone and
// by the periodic schedules are system jobs with no owner: the ops key and admin
// sessions see those.
//
// # Progress and streams
//
// Progress events are rows of job_progress numbered 1, 2, … per job; an insert
// trigger announces each on the channel lectern_job_progress. GET
// /api/jobs/{id}/stream replays the events after Last-Event-ID, then follows live
// ones, and ends with the host's one done marker (package sse).
//
// # Periodic work
//
// periodicJobs is the one table of periodic jobs (UTC): data.purge at 02:00,
// jobs.prune_progress at 02:30, pulse.train_classifier at 03:30. Per-user deliveries
// at a local time in each user's timezone are added with
// Registry.ScheduleUserDaily.
package jobs
