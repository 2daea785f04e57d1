package jobs

import (
	"encoding/json"
	"time"

	"github.com/google/uuid"
	"github.com/riverqueue/river/rivertype"
)

// metaOwner is the River metadata key holding a job's owner: a user id, or JSON
// null for a system job (ops key alone, periodic schedules).
const metaOwner = "lectern_owner"

// Envelope is the public view of a job (docs/jobs.md).
type Envelope struct {
	// ID identifies the job in /api/jobs/{id}.
	ID int64 `json:"id"`
	// Kind is the registered kind, e.g. pulse.train_classifier.
	Kind string `json:"kind"`
	// State is one of queued, running, retrying, succeeded, failed, cancelled.
	State State `json:"state"`
	// CancelRequested is true once a cancel was asked for a running job that has
	// not stopped yet.
	CancelRequested bool `json:"cancel_requested"`
	// Progress is the latest progress event; null before the first.
	Progress *ProgressEvent `json:"progress"`
	// Attempt is the number of the current or last attempt; 0 before the first.
	Attempt int `json:"attempt"`
	// MaxAttempts is how many attempts the job gets.
	MaxAttempts int `json:"max_attempts"`
	// Args are the job's arguments.
	Args json.RawMessage `json:"args"`
	// Result is what the job recorded with SetResult; null when nothing.
	Result json.RawMessage `json:"result"`
	// Error is the sanitized error of a retrying, failed or cancelled job; null
	// otherwise.
	Error *ErrorInfo `json:"error"`
	// CreatedAt is when the job was enqueued.
	CreatedAt time.Time `json:"created_at"`
	// ScheduledAt is when the job may run next (or ran).
	ScheduledAt time.Time `json:"scheduled_at"`
	// StartedAt is when the current or last attempt started; null before the first.
	StartedAt *time.Time `json:"started_at"`
	// FinishedAt is when the job reached a terminal state; null before.
	FinishedAt *time.Time `json:"finished_at"`
}

// jobMeta is the part of River's job metadata the envelope reads.
type jobMeta struct {
	Owner             *string          `json:"lectern_owner"`
	Output            *output          `json:"output"`
	CancelAttemptedAt *json.RawMessage `json:"cancel_attempted_at"`
}

func parseMeta(raw []byte) jobMeta {
	var m jobMeta
	if len(raw) > 0 {
		_ = json.Unmarshal(raw, &m) // metadata River wrote is valid JSON; a stranger's is ignored
	}
	return m
}

// ownerOf returns the job's owner, or uuid.Nil for a system job.
func ownerOf(metadata []byte) uuid.UUID {
	m := parseMeta(metadata)
	if m.Owner == nil {
		return uuid.Nil
	}
	id, err := uuid.Parse(*m.Owner)
	if err != nil {
		return uuid.Nil
	}
	return id
}

// ownerMetadata is the metadata a job of owner is inserted with.
func ownerMetadata(owner uuid.UUID) []byte {
	if owner == uuid.Nil {
		return []byte(`{"` + metaOwner + `":null}`)
	}
	return []byte(`{"` + metaOwner + `":"` + owner.String() + `"}`)
}

// newEnvelope builds the envelope of row; progress is its latest event, if any.
func newEnvelope(row *rivertype.JobRow, progress *ProgressEvent) *Envelope {
	meta := parseMeta(row.Metadata)
	state := PublicState(row.State)
	env := &Envelope{
		ID:              row.ID,
		Kind:            row.Kind,
		State:           state,
		CancelRequested: meta.CancelAttemptedAt != nil && state == StateRunning,
		Progress:        progress,
		Attempt:         row.Attempt,
		MaxAttempts:     row.MaxAttempts,
		Args:            json.RawMessage(row.EncodedArgs),
		CreatedAt:       row.CreatedAt,
		ScheduledAt:     row.ScheduledAt,
		StartedAt:       row.AttemptedAt,
		FinishedAt:      row.FinalizedAt,
	}
	if len(env.Args) == 0 {
		env.Args = json.RawMessage("{}")
	}
	if meta.Output != nil && len(meta.Output.Result) > 0 {
		env.Result = meta.Output.Result
	}
	switch state {
	case StateRetrying, StateFailed:
		generic := genericFailure
		env.Error = &generic
		if meta.Output != nil && meta.Output.Error != nil {
			env.Error = meta.Output.Error
		}
	case StateCancelled:
		if meta.Output != nil && meta.Output.Error != nil {
			env.Error = meta.Output.Error
		}
	}
	return env
}

// OwnerOf returns the user a job belongs to, or uuid.Nil for a system job. Workers
// use it to act for the job's owner and no one else.
func OwnerOf(row *rivertype.JobRow) uuid.UUID { return ownerOf(row.Metadata) }
