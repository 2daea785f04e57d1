// Package sourcehttp is the HTTP client a plugin uses to talk to its upstream web
// API politely: it paces requests, retries the answers worth retrying and turns
// failures into the typed errors of package protocol. It also reads the common
// Configure settings (durations, whole numbers, URLs) with errors that name the
// setting.
//
// # Pacing
//
// A Client spaces the starts of its requests at least Policy.Interval apart, across
// all concurrent calls: each request reserves the next free slot of a Pacer and
// waits for it. Two clients that draw on one upstream allowance share a Pacer
// (Config.Pacer). SetPolicy changes the interval, like every other part of the
// policy, while calls run; a call keeps the policy it started with.
//
// # Retries
//
// A request is tried up to Policy.MaxAttempts times. A network failure, and an
// answer that Config.CheckFunc maps to a protocol RateLimited or Unavailable error
// (by default HTTP 429 and 5xx), is retried after an exponential backoff with
// jitter, or after the answer's Retry-After (seconds or an HTTP date) when that is
// longer. A Retry-After longer than Policy.MaxRetryAfter is never slept through: the
// call ends at once with the answer's error, which for a rate limit carries the
// wait in protocol.Error.RetryAfter. Every wait (pacing, a free in-flight slot, the
// attempt, the backoff) ends when the caller's context does, and the call then
// returns the context's error.
//
// # Hooks
//
// Config.CheckFunc maps an answer to a typed error using what only the plugin
// knows about its API's error bodies; Config.Header and Request.Header carry the
// User-Agent, API keys and any other headers.
//
// This package follows semantic versioning with the sdk module.
package sourcehttp
