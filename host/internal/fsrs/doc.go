// Package fsrs is Lectern's implementation of FSRS-6, the Free Spaced Repetition
// Scheduler: the memory model (stability, difficulty, retrievability with a
// trainable decay), the card scheduler (learning and relearning steps, desired
// retention, maximum interval, interval fuzz), parameter fitting from a review
// history, and a reader for review logs in CSV.
//
// The package is pure: it does no I/O of its own (ReadReviewLog reads only the
// io.Reader it is given) and keeps no global state, so the cards API, the
// fsrs.optimize job and the `lectern fsrs` command all share it.
//
// It is internal to the host and its API is not stable.
//
// # Sources
//
// The formulas follow the FSRS-6 description in the open-spaced-repetition
// "The Algorithm" wiki page and the reference implementations py-fsrs v6 and
// fsrs-rs; the scheduler state machine follows py-fsrs v6's Scheduler; the
// long-term-only mode follows go-fsrs's long-term scheduler; parameter fitting
// follows the training set-up of fsrs-rs and fsrs-optimizer. Each function says
// which source it follows. docs/fsrs.md restates all of it in one place.
//
// # Model
//
// A memory is a pair (S, D): stability S, in days, is the interval after which
// recall probability falls to 90%; difficulty D lies in [1, 10]. Retrievability
// R(t, S) is the probability of recall t days after the last review. Ratings are
// Again (1), Hard (2), Good (3) and Easy (4); any rating but Again counts as a
// successful recall.
package fsrs
