package jobs

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"
	"github.com/riverqueue/river/rivertype"

	"github.com/lectern-research/lectern/host/internal/auth"
)

// Defaults of Config.
const (
	DefaultQueueWorkers         = 10
	DefaultHeartbeatInterval    = 15 * time.Second
	DefaultPollInterval         = 2 * time.Second
	DefaultUserScheduleInterval = time.Minute
	DefaultStopTimeout          = 25 * time.Second
	// DefaultRescueAfter is Config.RescueAfter's default: how long a job must
	// have been running before River's rescuer may take it back from a host that
	// died (docs/jobs.md, "Several hosts").
	DefaultRescueAfter = 5 * time.Minute
)

// How long River keeps finished jobs (and so their envelopes) before its cleaner
// deletes them; jobs.prune_progress then deletes their progress.
const (
	completedRetention = 7 * 24 * time.Hour
	cancelledRetention = 7 * 24 * time.Hour
	discardedRetention = 30 * 24 * time.Hour
)

// ErrNotFound is returned for a job that does not exist or that the caller may
// not see; the API answers 404 for both.
var ErrNotFound = errors.New("jobs: job not found")

// ErrAlreadyActive is returned when enqueuing a OnePerOwner kind while the owner
// has one queued or running.
var ErrAlreadyActive = errors.New("jobs: a job of this kind is already queued or running")

// ErrUnknownKind is returned when enqueuing a kind no one registered.
var ErrUnknownKind = errors.New("jobs: unknown job kind")

// Config is the input of New.
type Config struct {
	// Pool is the database. Required. River, the progress reporter and the API
	// share it; size it for the queue workers plus the HTTP handlers.
	Pool *pgxpool.Pool
	// Logger receives the service's and River's logs. Default slog.Default().
	Logger *slog.Logger
	// Registry holds the kinds of the host's areas. The Service copies it at New
	// and adds its built-in kinds (pulse.train_classifier and data.purge unless
	// registered already, and its own jobs.* kinds). Default: no extra kinds.
	Registry *Registry
	// QueueWorkers caps concurrent jobs per queue. A queue a kind names that is
	// missing here gets DefaultQueueWorkers.
	QueueWorkers map[string]int
	// FailureFunc is told about every owned job that fails for good. Optional.
	FailureFunc FailureFunc
	// PurgeFunc is the daily data.purge (hard deletion of soft-deleted users and
	// the audit scrub). When nil, data.purge logs that no purge is configured and
	// succeeds.
	PurgeFunc func(ctx context.Context) error
	// HeartbeatInterval is how often an idle stream sends a heartbeat comment.
	// Default DefaultHeartbeatInterval.
	HeartbeatInterval time.Duration
	// PollInterval is how often a stream re-reads its job when nothing woke it,
	// which covers state changes made by another host. Default
	// DefaultPollInterval.
	PollInterval time.Duration
	// UserScheduleInterval is how often per-user schedules are checked. Default
	// DefaultUserScheduleInterval.
	UserScheduleInterval time.Duration
	// StopTimeout is how long Stop lets running jobs finish before it cancels
	// their contexts. Default DefaultStopTimeout.
	StopTimeout time.Duration
	// FetchCooldown is the shortest pause between two fetches of jobs from one
	// queue. Lower it on a host that runs many short jobs. Default River's
	// (100 ms).
	FetchCooldown time.Duration
	// RescueInterval is how often the running service looks for jobs a stopped
	// process abandoned (rescue.go); it also looks once at start. Default
	// DefaultRescueInterval.
	RescueInterval time.Duration
	// InsertOnly makes a service that enqueues jobs, answers the API and serves
	// job streams but works no job and runs no periodic schedule: an API node of
	// a deployment with separate worker nodes (lectern serve --role api). Default
	// false.
	InsertOnly bool
	// RescueAfter is how long a job must have been running before River's
	// rescuer, on the elected leader among the working hosts, makes it available
	// again, for a host that died mid-job. River also waits out the kind's own
	// Timeout, so a live job whose context is honoured is never taken from its
	// worker; a kind with no time limit is never rescued. Default
	// DefaultRescueAfter.
	RescueAfter time.Duration
}

// runtime is what workers and handlers share.
type runtime struct {
	pool        *pgxpool.Pool
	log         *slog.Logger
	hub         *hub
	progress    *progressWriter
	reg         *Registry
	client      *river.Client[pgx.Tx]
	failureFunc FailureFunc
	purgeFunc   func(ctx context.Context) error
	cfg         Config
	// instanceID is this process's River client ID, the key of its liveness lock.
	instanceID string

	closeStreamsOnce sync.Once
	closing          chan struct{} // closed by CloseStreams
}

// Service runs the job queue: River's client with every registered kind, the
// periodic schedules, the progress listener and the HTTP API.
type Service struct {
	rt *runtime

	mu      sync.Mutex
	started bool
	stop    context.CancelFunc
	wg      sync.WaitGroup
}

// New builds the service. It checks that River's tables are migrated (see
// Migrate) but starts nothing; call Start.
func New(ctx context.Context, cfg Config) (*Service, error) {
	if cfg.Pool == nil {
		return nil, errors.New("jobs: new: Config.Pool is required")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Registry == nil {
		cfg.Registry = NewRegistry()
	}
	if cfg.HeartbeatInterval <= 0 {
		cfg.HeartbeatInterval = DefaultHeartbeatInterval
	}
	if cfg.PollInterval <= 0 {
		cfg.PollInterval = DefaultPollInterval
	}
	if cfg.UserScheduleInterval <= 0 {
		cfg.UserScheduleInterval = DefaultUserScheduleInterval
	}
	if cfg.StopTimeout <= 0 {
		cfg.StopTimeout = DefaultStopTimeout
	}
	if cfg.RescueInterval <= 0 {
		cfg.RescueInterval = DefaultRescueInterval
	}
	if cfg.RescueAfter <= 0 {
		cfg.RescueAfter = DefaultRescueAfter
	}

	driver := riverpgxv5.New(cfg.Pool)
	migrator, err := rivermigrate.New(driver, nil)
	if err != nil {
		return nil, fmt.Errorf("jobs: new: %w", err)
	}
	res, err := migrator.Validate(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("jobs: new: check River's schema: %w", err)
	}
	if !res.OK {
		return nil, fmt.Errorf("jobs: new: River's tables are not migrated (run `lectern migrate`): %v", res.Messages)
	}

	rt := &runtime{
		pool:        cfg.Pool,
		log:         cfg.Logger,
		hub:         newHub(),
		progress:    newProgressWriter(cfg.Pool),
		reg:         cfg.Registry.snapshot(),
		failureFunc: cfg.FailureFunc,
		purgeFunc:   cfg.PurgeFunc,
		cfg:         cfg,
		instanceID:  newInstanceID(),
		closing:     make(chan struct{}),
	}
	if err := registerBuiltins(rt.reg, rt); err != nil {
		return nil, err
	}
	for _, p := range rt.reg.periodics {
		if !rt.reg.has(p.Args.Kind()) {
			return nil, fmt.Errorf("jobs: new: periodic job %s: its kind is not registered", p.Args.Kind())
		}
	}

	client, err := newRiverClient(driver, rt)
	if err != nil {
		return nil, err
	}
	rt.client = client
	return &Service{rt: rt}, nil
}

// newRiverClient is River's client with a worker and a queue for every kind of
// rt's registry. An InsertOnly client keeps the workers (so River refuses a kind
// no one can run) but gets no queue and no periodic job: it never works.
func newRiverClient(driver *riverpgxv5.Driver, rt *runtime) (*river.Client[pgx.Tx], error) {
	cfg := rt.cfg
	workers := river.NewWorkers()
	queues := map[string]river.QueueConfig{}
	for _, name := range rt.reg.Kinds() {
		k, _ := rt.reg.lookup(name)
		if err := k.installFunc(workers, rt); err != nil {
			return nil, fmt.Errorf("jobs: new: %w", err)
		}
		n := cfg.QueueWorkers[k.queue]
		if n <= 0 {
			n = DefaultQueueWorkers
		}
		queues[k.queue] = river.QueueConfig{MaxWorkers: n}
	}
	periodic := periodicJobs(rt)
	if cfg.InsertOnly {
		queues, periodic = nil, nil
	}
	client, err := river.NewClient(driver, &river.Config{
		ID:           rt.instanceID,
		Logger:       cfg.Logger,
		Workers:      workers,
		Queues:       queues,
		PeriodicJobs: periodic,
		MaxAttempts:  DefaultMaxAttempts,
		// Every kind's worker names its own timeout (envelopeWorker.Timeout), so
		// River's default applies to none; River wants it within
		// RescueStuckJobsAfter.
		JobTimeout:                  min(DefaultTimeout, cfg.RescueAfter),
		RescueStuckJobsAfter:        cfg.RescueAfter,
		CompletedJobRetentionPeriod: completedRetention,
		CancelledJobRetentionPeriod: cancelledRetention,
		DiscardedJobRetentionPeriod: discardedRetention,
		SoftStopTimeout:             cfg.StopTimeout,
		FetchCooldown:               cfg.FetchCooldown,
	})
	if err != nil {
		return nil, fmt.Errorf("jobs: new: river client: %w", err)
	}
	return client, nil
}

// Start starts working jobs, the periodic schedules (on the elected leader host)
// and the progress listener. They run until Stop; cancelling ctx does not stop
// them, so that shutdown stays graceful. An InsertOnly service starts the
// progress listener alone: its streams follow jobs other hosts work.
func (s *Service) Start(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.started {
		return errors.New("jobs: start: already started")
	}
	bg, cancel := context.WithCancel(context.WithoutCancel(ctx))
	listenCfg := s.rt.pool.Config().ConnConfig.Copy()
	if !s.rt.cfg.InsertOnly {
		// The liveness lock is held before River attempts a job under this ID
		// (rescue.go).
		live := &liveness{rt: s.rt, id: s.rt.instanceID}
		if err := live.acquire(ctx); err != nil {
			cancel()
			return fmt.Errorf("jobs: start: %w", err)
		}
		events, unsubscribe := s.rt.client.Subscribe(
			river.EventKindJobCompleted, river.EventKindJobCancelled,
			river.EventKindJobFailed, river.EventKindJobSnoozed)
		if err := s.rt.client.Start(bg); err != nil {
			unsubscribe()
			cancel()
			_ = live.conn.Close(context.WithoutCancel(ctx))
			return fmt.Errorf("jobs: start: %w", err)
		}
		s.wg.Add(4)
		go func() {
			defer s.wg.Done()
			live.hold(bg)
		}()
		go func() {
			defer s.wg.Done()
			s.rt.rescueLoop(bg, s.rt.instanceID, s.rt.cfg.RescueInterval)
		}()
		go func() {
			defer s.wg.Done()
			s.rt.progress.run(bg)
		}()
		go func() {
			defer s.wg.Done()
			defer unsubscribe()
			s.rt.hub.follow(bg, events, s.rt.announceStates)
		}()
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		s.rt.hub.listen(bg, listenCfg, s.rt.log)
	}()
	s.started = true
	s.stop = cancel
	return nil
}

// Stop stops fetching jobs and waits for running ones to finish. After
// Config.StopTimeout their contexts are cancelled (they are retried later); when
// ctx ends first, Stop cancels them at once and returns ctx's error after they
// return.
func (s *Service) Stop(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.started {
		return nil
	}
	var err error
	if !s.rt.cfg.InsertOnly {
		err = s.rt.client.Stop(ctx)
	}
	if err != nil {
		hardCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		if hardErr := s.rt.client.StopAndCancel(hardCtx); hardErr != nil {
			err = errors.Join(err, hardErr)
		}
	}
	s.stop()
	s.wg.Wait()
	s.started = false
	if err != nil {
		return fmt.Errorf("jobs: stop: %w", err)
	}
	return nil
}

// CloseStreams ends every open job stream (without the done marker, so clients
// resume elsewhere with Last-Event-ID) and makes new ones end at once. Streams
// never go idle, so an HTTP server's graceful Shutdown would wait for them:
// register this with http.Server.RegisterOnShutdown.
func (s *Service) CloseStreams() {
	s.rt.closeStreamsOnce.Do(func() { close(s.rt.closing) })
}

// Client is the River client, for areas that need River directly (for example
// JobCancelTx). Insert jobs with Enqueue or EnqueueTx instead, which apply the
// kind's queue, attempts and owner.
func (s *Service) Client() *river.Client[pgx.Tx] { return s.rt.client }

// Kinds lists every kind the service runs, sorted.
func (s *Service) Kinds() []string { return s.rt.reg.Kinds() }

// Enqueue inserts a job for owner (uuid.Nil for a system job with no owner) with
// its kind's queue and attempts, and returns its envelope.
func (s *Service) Enqueue(ctx context.Context, owner uuid.UUID, args river.JobArgs) (*Envelope, error) {
	row, err := s.rt.insert(ctx, owner, args)
	if err != nil {
		return nil, err
	}
	return newEnvelope(row, nil), nil
}

// EnqueueTx is Enqueue inside the caller's transaction: the job exists only if
// tx commits, together with the domain write that asked for it.
func (s *Service) EnqueueTx(ctx context.Context, tx pgx.Tx, owner uuid.UUID, args river.JobArgs) (*Envelope, error) {
	row, err := s.rt.insertTx(ctx, tx, owner, args)
	if err != nil {
		return nil, err
	}
	return newEnvelope(row, nil), nil
}

// insert inserts a job of args for owner; a OnePerOwner kind in its own
// transaction, so that its check and its insert are one step.
func (rt *runtime) insert(ctx context.Context, owner uuid.UUID, args river.JobArgs) (*rivertype.JobRow, error) {
	k, ok := rt.reg.lookup(args.Kind())
	if !ok {
		return nil, fmt.Errorf("%w: %q", ErrUnknownKind, args.Kind())
	}
	if !k.onePerOwner {
		opts, err := rt.insertOpts(args.Kind(), owner)
		if err != nil {
			return nil, err
		}
		res, err := rt.client.Insert(ctx, args, opts)
		if err != nil {
			return nil, fmt.Errorf("jobs: enqueue %s: %w", args.Kind(), err)
		}
		return res.Job, nil
	}
	var row *rivertype.JobRow
	err := pgx.BeginFunc(ctx, rt.pool, func(tx pgx.Tx) error {
		var err error
		row, err = rt.insertTx(ctx, tx, owner, args)
		return err
	})
	return row, err
}

// insertTx inserts a job of args for owner in tx. For a OnePerOwner kind it first
// takes a transaction lock on (kind, owner) and refuses when the owner has a job
// of the kind that is not finished.
func (rt *runtime) insertTx(ctx context.Context, tx pgx.Tx, owner uuid.UUID, args river.JobArgs) (*rivertype.JobRow, error) {
	opts, err := rt.insertOpts(args.Kind(), owner)
	if err != nil {
		return nil, err
	}
	if k, _ := rt.reg.lookup(args.Kind()); k.onePerOwner {
		var active bool
		err := tx.QueryRow(ctx, `
			WITH lock AS (SELECT pg_advisory_xact_lock(hashtextextended('lectern.job.' || $1 || '.' || $2::text, 0)))
			SELECT EXISTS (SELECT 1 FROM lock, river_job
			                WHERE kind = $1 AND metadata @> $3::jsonb
			                  AND state IN ('available', 'pending', 'retryable', 'running', 'scheduled'))`,
			args.Kind(), owner, string(ownerMetadata(owner))).Scan(&active)
		if err != nil {
			return nil, fmt.Errorf("jobs: enqueue %s: %w", args.Kind(), err)
		}
		if active {
			return nil, ErrAlreadyActive
		}
	}
	res, err := rt.client.InsertTx(ctx, tx, args, opts)
	if err != nil {
		return nil, fmt.Errorf("jobs: enqueue %s: %w", args.Kind(), err)
	}
	return res.Job, nil
}

// insertOpts are the options a job of kind for owner is inserted with.
func (rt *runtime) insertOpts(kindName string, owner uuid.UUID) (*river.InsertOpts, error) {
	k, ok := rt.reg.lookup(kindName)
	if !ok {
		return nil, fmt.Errorf("%w: %q", ErrUnknownKind, kindName)
	}
	return &river.InsertOpts{Queue: k.queue, MaxAttempts: k.maxAttempts, Metadata: ownerMetadata(owner)}, nil
}

// scope narrows a job list to the jobs caller may see: a user's own jobs; for an
// admin session also the system jobs (no owner); for the ops key alone only the
// system jobs. An anonymous caller sees nothing (ok false).
func scope(p *river.JobListParams, c auth.Caller) (*river.JobListParams, bool) {
	switch {
	case c.IsAdmin():
		return p.Where("(metadata @> @lectern_own::jsonb OR metadata @> @lectern_sys::jsonb)", river.NamedArgs{
			"lectern_own": string(ownerMetadata(c.UserID)),
			"lectern_sys": string(ownerMetadata(uuid.Nil)),
		}), true
	case c.HasUser():
		return p.Metadata(string(ownerMetadata(c.UserID))), true
	case c.OpsKey:
		return p.Metadata(string(ownerMetadata(uuid.Nil))), true
	}
	return nil, false
}

// visibleJob returns job id if caller may see it, else ErrNotFound. The owner
// check is part of the query.
func (rt *runtime) visibleJob(ctx context.Context, c auth.Caller, id int64) (*rivertype.JobRow, error) {
	params, ok := scope(river.NewJobListParams().IDs(id).First(1), c)
	if !ok {
		return nil, ErrNotFound
	}
	res, err := rt.client.JobList(ctx, params)
	if err != nil {
		return nil, fmt.Errorf("jobs: get job %d: %w", id, err)
	}
	if len(res.Jobs) == 0 {
		return nil, ErrNotFound
	}
	return res.Jobs[0], nil
}

// envelopes builds the envelopes of rows with their latest progress.
func (rt *runtime) envelopes(ctx context.Context, rows []*rivertype.JobRow) ([]*Envelope, error) {
	ids := make([]int64, len(rows))
	for i, row := range rows {
		ids[i] = row.ID
	}
	latest, err := latestProgress(ctx, rt.pool, ids)
	if err != nil {
		return nil, err
	}
	out := make([]*Envelope, len(rows))
	for i, row := range rows {
		var p *ProgressEvent
		if ev, ok := latest[row.ID]; ok {
			p = &ev
		}
		out[i] = newEnvelope(row, p)
	}
	return out, nil
}

// envelope builds one job's envelope.
func (rt *runtime) envelope(ctx context.Context, row *rivertype.JobRow) (*Envelope, error) {
	envs, err := rt.envelopes(ctx, []*rivertype.JobRow{row})
	if err != nil {
		return nil, err
	}
	return envs[0], nil
}
