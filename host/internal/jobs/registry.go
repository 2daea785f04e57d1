package jobs

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/riverqueue/river"

	"github.com/lectern-research/lectern/host/internal/auth"
)

// QueueDefault is the queue a kind runs on when its KindSpec names none.
const QueueDefault = "default"

// Defaults a KindSpec falls back to.
const (
	DefaultMaxAttempts = 3
	DefaultTimeout     = 10 * time.Minute
)

// Enqueuer is a set of callers that may enqueue a kind through POST /api/jobs.
type Enqueuer uint8

// Who may enqueue a kind. Combine them with |. A kind with none is internal: only
// host code (Service.Enqueue, periodic schedules) inserts it.
const (
	// EnqueueUser lets any signed-in user enqueue the kind for themselves, also
	// through the ops key with a verified X-Owner-User-Id.
	EnqueueUser Enqueuer = 1 << iota
	// EnqueueAdmin lets an admin session enqueue the kind.
	EnqueueAdmin
	// EnqueueOps lets the ops key (SERVICE_API_KEY) enqueue the kind, with or
	// without X-Owner-User-Id. Without one, the job has no owner.
	EnqueueOps
)

// allows reports whether caller c may enqueue a kind open to e.
func (e Enqueuer) allows(c auth.Caller) bool {
	switch {
	case e&EnqueueAdmin != 0 && c.IsAdmin():
		return true
	case e&EnqueueUser != 0 && c.HasUser():
		return true
	case e&EnqueueOps != 0 && c.OpsKey:
		return true
	}
	return false
}

// KindSpec describes one job kind: its task and who may start it. The kind's name
// is T's Kind().
type KindSpec[T river.JobArgs] struct {
	// Worker runs the job. Embed river.WorkerDefaults[T] for the optional methods.
	// Work must return promptly once ctx is done (a cancel or a timeout), returning
	// ctx.Err() or an error wrapping it. Workers report progress with
	// ReportProgress, record a result with SetResult, and fail with a message the
	// owner may read by returning a PublicError.
	Worker river.Worker[T]
	// Queue is the River queue the kind runs on. Default QueueDefault.
	Queue string
	// MaxAttempts is how many times the job runs before it fails for good.
	// Default DefaultMaxAttempts.
	MaxAttempts int
	// Timeout bounds one attempt; the job's context is cancelled after it. Default
	// DefaultTimeout; a negative value means no limit. A Worker whose Timeout
	// method returns non-zero overrides it per job.
	Timeout time.Duration
	// Enqueuers says who may enqueue the kind through POST /api/jobs. Zero keeps
	// the kind internal.
	Enqueuers Enqueuer
	// OnePerOwner allows one job of the kind per owner at a time: enqueuing
	// another while one is queued or running is ErrAlreadyActive (409 through
	// the API). For work like a user's nightly run that must never overlap.
	OnePerOwner bool
}

// ArgsValidator is implemented by job args that check their values before the job
// is enqueued through the API. Return one FieldError per bad field (join several
// with errors.Join); any other error is reported against "args" as a whole.
type ArgsValidator interface {
	ValidateArgs() error
}

// FieldError says what is wrong with one argument of a job.
type FieldError struct {
	// Field is the argument's JSON name.
	Field string
	// Message says what is wrong, for people.
	Message string
}

// Error implements error.
func (e *FieldError) Error() string { return e.Field + ": " + e.Message }

// ArgsError is the error of args that cannot be enqueued: the fields at fault.
type ArgsError struct {
	Fields []FieldError
}

// Error implements error.
func (e *ArgsError) Error() string {
	parts := make([]string, len(e.Fields))
	for i, f := range e.Fields {
		parts[i] = f.Field + ": " + f.Message
	}
	return "jobs: invalid args: " + strings.Join(parts, "; ")
}

var kindName = regexp.MustCompile(`^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)+$`)

// kind is a registered kind with its type erased.
type kind struct {
	name        string
	queue       string
	maxAttempts int
	timeout     time.Duration
	enqueuers   Enqueuer
	onePerOwner bool
	// decodeFunc reads API args into the kind's args type and validates them.
	decodeFunc func(raw json.RawMessage) (river.JobArgs, error)
	// installFunc adds the kind's worker, wrapped by the envelope layer, to workers.
	installFunc func(workers *river.Workers, rt *runtime) error
}

// Registry maps every job kind to its task. Later areas register their kinds on
// it before the Service is built; the Service adds its built-in kinds.
type Registry struct {
	mu        sync.Mutex
	kinds     map[string]*kind
	schedules []UserDaily
	periodics []Periodic
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry {
	return &Registry{kinds: map[string]*kind{}}
}

// Register adds the kind T with its spec. It fails on a second registration of the
// same kind, a kind name that is not dotted lowercase words (ingest.pdf), or a
// missing worker.
func Register[T river.JobArgs](reg *Registry, spec KindSpec[T]) error {
	var zero T
	name := zero.Kind()
	if !kindName.MatchString(name) {
		return fmt.Errorf("jobs: register %q: a kind is dotted lowercase words, like ingest.pdf", name)
	}
	if spec.Worker == nil {
		return fmt.Errorf("jobs: register %s: no worker", name)
	}
	k := &kind{
		name:        name,
		queue:       spec.Queue,
		maxAttempts: spec.MaxAttempts,
		timeout:     spec.Timeout,
		enqueuers:   spec.Enqueuers,
		onePerOwner: spec.OnePerOwner,
		decodeFunc:  decodeArgs[T],
		installFunc: func(workers *river.Workers, rt *runtime) error {
			return river.AddWorkerSafely(workers, river.Worker[T](&envelopeWorker[T]{inner: spec.Worker, kind: name, rt: rt}))
		},
	}
	if k.queue == "" {
		k.queue = QueueDefault
	}
	if k.maxAttempts <= 0 {
		k.maxAttempts = DefaultMaxAttempts
	}
	if k.timeout == 0 {
		k.timeout = DefaultTimeout
	}
	reg.mu.Lock()
	defer reg.mu.Unlock()
	if _, dup := reg.kinds[name]; dup {
		return fmt.Errorf("jobs: register %s: kind already registered", name)
	}
	reg.kinds[name] = k
	return nil
}

// Kinds lists the registered kind names, sorted.
func (r *Registry) Kinds() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Sorted(maps.Keys(r.kinds))
}

// has reports whether name is registered.
func (r *Registry) has(name string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	_, ok := r.kinds[name]
	return ok
}

// snapshot copies the registry, so that the Service's view cannot change under it.
func (r *Registry) snapshot() *Registry {
	r.mu.Lock()
	defer r.mu.Unlock()
	return &Registry{kinds: maps.Clone(r.kinds), schedules: slices.Clone(r.schedules), periodics: slices.Clone(r.periodics)}
}

func (r *Registry) lookup(name string) (*kind, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	k, ok := r.kinds[name]
	return k, ok
}

// apiKinds lists the kinds that some caller may enqueue through the API, sorted.
func (r *Registry) apiKinds() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for name, k := range r.kinds {
		if k.enqueuers != 0 {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// decodeArgs reads raw (absent or null means zero args) strictly into T: unknown
// fields and wrong types are errors naming the field. Then T validates itself
// when it implements ArgsValidator.
func decodeArgs[T river.JobArgs](raw json.RawMessage) (river.JobArgs, error) {
	var args T
	if trimmed := bytes.TrimSpace(raw); len(trimmed) > 0 && !bytes.Equal(trimmed, []byte("null")) {
		dec := json.NewDecoder(bytes.NewReader(trimmed))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&args); err != nil {
			return nil, &ArgsError{Fields: []FieldError{jsonFieldError(err)}}
		}
		if _, err := dec.Token(); !errors.Is(err, io.EOF) {
			return nil, &ArgsError{Fields: []FieldError{{Field: "args", Message: "must be one JSON object"}}}
		}
	}
	var v any = args
	if _, ok := v.(ArgsValidator); !ok {
		v = &args
	}
	if val, ok := v.(ArgsValidator); ok {
		if err := val.ValidateArgs(); err != nil {
			return nil, argsError(err)
		}
	}
	return args, nil
}

// jsonFieldError turns a decoding error into the field it is about.
func jsonFieldError(err error) FieldError {
	var typeErr *json.UnmarshalTypeError
	if errors.As(err, &typeErr) {
		field := "args"
		if typeErr.Field != "" {
			field = "args." + typeErr.Field
		}
		return FieldError{Field: field, Message: "must be " + jsonTypeName(typeErr.Type.Kind().String())}
	}
	if name, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		return FieldError{Field: "args." + strings.Trim(name, `"`), Message: "is not an argument of this kind"}
	}
	return FieldError{Field: "args", Message: "must be a JSON object of this kind's arguments"}
}

func jsonTypeName(goKind string) string {
	switch goKind {
	case "string":
		return "a string"
	case "bool":
		return "true or false"
	case "slice", "array":
		return "an array"
	case "struct", "map":
		return "an object"
	case "int", "int8", "int16", "int32", "int64", "uint", "uint8", "uint16", "uint32", "uint64":
		return "an integer"
	case "float32", "float64":
		return "a number"
	}
	return "of another type"
}

// argsError collects the FieldErrors in err's tree, prefixing their fields with
// "args."; an error without any is reported against args as a whole.
func argsError(err error) *ArgsError {
	var fields []FieldError
	var walk func(error)
	walk = func(e error) {
		if fe, ok := e.(*FieldError); ok {
			fields = append(fields, FieldError{Field: "args." + fe.Field, Message: fe.Message})
			return
		}
		switch u := e.(type) {
		case interface{ Unwrap() []error }:
			for _, inner := range u.Unwrap() {
				walk(inner)
			}
		case interface{ Unwrap() error }:
			if inner := u.Unwrap(); inner != nil {
				walk(inner)
			}
		}
	}
	walk(err)
	if len(fields) == 0 {
		fields = []FieldError{{Field: "args", Message: err.Error()}}
	}
	return &ArgsError{Fields: fields}
}
