package jobs

import (
	"fmt"

	"github.com/riverqueue/river/rivertype"
)

// State is the public state of a job, as the envelope reports it.
type State string

// The public job states. Queued, running and retrying are live; succeeded, failed
// and cancelled are terminal.
const (
	StateQueued    State = "queued"
	StateRunning   State = "running"
	StateRetrying  State = "retrying"
	StateSucceeded State = "succeeded"
	StateFailed    State = "failed"
	StateCancelled State = "cancelled"
)

// States lists every public state in lifecycle order.
func States() []State {
	return []State{StateQueued, StateRunning, StateRetrying, StateSucceeded, StateFailed, StateCancelled}
}

// Terminal reports whether a job in state s will not change any more.
func (s State) Terminal() bool {
	return s == StateSucceeded || s == StateFailed || s == StateCancelled
}

// PublicState maps a River job state to the public state. It is the one place
// the mapping lives; an unknown River state (from a newer River) reads as queued,
// the state that promises nothing.
//
//   - available, scheduled, pending → queued (waiting for a worker)
//   - running → running (also while a cancel request is on its way to the worker)
//   - retryable → retrying (an attempt failed; another one is scheduled)
//   - completed → succeeded
//   - discarded → failed (the last attempt failed)
//   - cancelled → cancelled
func PublicState(s rivertype.JobState) State {
	switch s {
	case rivertype.JobStateAvailable, rivertype.JobStateScheduled, rivertype.JobStatePending:
		return StateQueued
	case rivertype.JobStateRunning:
		return StateRunning
	case rivertype.JobStateRetryable:
		return StateRetrying
	case rivertype.JobStateCompleted:
		return StateSucceeded
	case rivertype.JobStateDiscarded:
		return StateFailed
	case rivertype.JobStateCancelled:
		return StateCancelled
	}
	return StateQueued
}

// riverStates is the inverse of PublicState: the River states a public state
// covers, for list filters.
func riverStates(s State) []rivertype.JobState {
	var out []rivertype.JobState
	for _, rs := range rivertype.JobStates() {
		if PublicState(rs) == s {
			out = append(out, rs)
		}
	}
	return out
}

// parseState reads a public state name, or "active" for every live state.
func parseState(name string) ([]State, error) {
	if name == "active" {
		return []State{StateQueued, StateRunning, StateRetrying}, nil
	}
	for _, s := range States() {
		if string(s) == name {
			return []State{s}, nil
		}
	}
	return nil, fmt.Errorf("jobs: unknown state %q", name)
}
