package jobs_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/stretchr/testify/require"

	"github.com/lectern-research/lectern/host/internal/jobs"
	"github.com/lectern-research/lectern/host/internal/sse"
)

// Benchmarks of docs/benchmarks.md ("Jobs"). Run them with
//
//	go test -run '^$' -bench . -benchtime 5000x -count 3 ./host/internal/jobs/

// benchWorkers is the queue size of every throughput variant.
const benchWorkers = 50

// benchInserters is how many goroutines enqueue at once.
const benchInserters = 4

// benchFetchCooldown is River's pause between fetches in every variant. River's
// default (100 ms) caps throughput at benchWorkers jobs per 100 ms, which would
// hide any cost of the layer.
const benchFetchCooldown = 5 * time.Millisecond

type trivialArgs struct{}

func (trivialArgs) Kind() string { return "bench.trivial" }

type trivialWorker struct {
	river.WorkerDefaults[trivialArgs]
}

func (trivialWorker) Work(context.Context, *river.Job[trivialArgs]) error { return nil }

type reportingArgs struct{}

func (reportingArgs) Kind() string { return "bench.reporting" }

type reportingWorker struct {
	river.WorkerDefaults[reportingArgs]
}

func (reportingWorker) Work(ctx context.Context, _ *river.Job[reportingArgs]) error {
	return jobs.ReportProgress(ctx, 1, 1, "done")
}

// BenchmarkThroughput measures enqueue→complete of trivial jobs: b.N jobs are
// enqueued by benchInserters goroutines while the workers run, and the clock
// stops when the last completion is reported.
//
//   - bare_river: River alone (Client.Insert, a worker that returns nil).
//   - envelope: the same job through the envelope layer (Service.Enqueue with an
//     owner, the wrapped worker).
//   - envelope_progress: as envelope, and the worker reports one progress event.
func BenchmarkThroughput(b *testing.B) {
	bare := func(b *testing.B) {
		ctx := context.Background()
		pool := testPool(b)
		workers := river.NewWorkers()
		river.AddWorker(workers, river.Worker[trivialArgs](trivialWorker{}))
		client, err := river.NewClient(riverpgxv5.New(pool), &river.Config{
			Logger:        slog.New(slog.DiscardHandler),
			Workers:       workers,
			Queues:        map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: benchWorkers}},
			FetchCooldown: benchFetchCooldown,
		})
		require.NoError(b, err)
		runThroughput(b, client, func(ctx context.Context) error {
			_, err := client.Insert(ctx, trivialArgs{}, nil)
			return err
		})
		require.NoError(b, client.Stop(ctx))
	}
	// The first variant would otherwise also pay for a cold database cluster.
	b.Run("warm_up", bare)
	b.Run("bare_river", bare)

	layer := func(b *testing.B, enqueue func(ctx context.Context, svc *jobs.Service, owner uuid.UUID) error) {
		ctx := context.Background()
		pool := testPool(b)
		owner := createUser(b, pool, "bench", "user", "UTC")
		reg := jobs.NewRegistry()
		require.NoError(b, jobs.Register(reg, jobs.KindSpec[trivialArgs]{Worker: trivialWorker{}}))
		require.NoError(b, jobs.Register(reg, jobs.KindSpec[reportingArgs]{Worker: reportingWorker{}}))
		svc, err := jobs.New(ctx, jobs.Config{
			Pool: pool, Logger: slog.New(slog.DiscardHandler), Registry: reg,
			QueueWorkers:  map[string]int{jobs.QueueDefault: benchWorkers},
			FetchCooldown: benchFetchCooldown,
		})
		require.NoError(b, err)
		runThroughput(b, svc, func(ctx context.Context) error { return enqueue(ctx, svc, owner) })
		require.NoError(b, svc.Stop(ctx))
	}
	b.Run("envelope", func(b *testing.B) {
		layer(b, func(ctx context.Context, svc *jobs.Service, owner uuid.UUID) error {
			_, err := svc.Enqueue(ctx, owner, trivialArgs{})
			return err
		})
	})
	b.Run("envelope_progress", func(b *testing.B) {
		layer(b, func(ctx context.Context, svc *jobs.Service, owner uuid.UUID) error {
			_, err := svc.Enqueue(ctx, owner, reportingArgs{})
			return err
		})
	})
}

// starter is a River client or the Service.
type starter interface {
	Start(ctx context.Context) error
}

// runThroughput starts s, enqueues b.N jobs and waits for b.N completions.
func runThroughput(b *testing.B, s starter, enqueue func(ctx context.Context) error) {
	b.Helper()
	ctx := context.Background()
	var client *river.Client[pgx.Tx]
	switch v := s.(type) {
	case *river.Client[pgx.Tx]:
		client = v
	case *jobs.Service:
		client = v.Client()
	}
	completed, cancel := client.SubscribeConfig(&river.SubscribeConfig{
		ChanSize: b.N + 1000, Kinds: []river.EventKind{river.EventKindJobCompleted},
	})
	defer cancel()
	require.NoError(b, s.Start(ctx))

	b.ResetTimer()
	start := time.Now()
	var wg sync.WaitGroup
	errs := make(chan error, benchInserters)
	for i := range benchInserters {
		n := b.N / benchInserters
		if i < b.N%benchInserters {
			n++
		}
		wg.Go(func() {
			for range n {
				if err := enqueue(ctx); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	deadline := time.After(5 * time.Minute)
	for done := 0; done < b.N; {
		select {
		case <-completed:
			done++
		case err := <-errs:
			require.NoError(b, err)
		case <-deadline:
			require.Failf(b, "jobs did not complete", "%d of %d completed", done, b.N)
		}
	}
	elapsed := time.Since(start)
	b.StopTimer()
	wg.Wait()
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "jobs/s")
}

type pacedArgs struct {
	N int `json:"n"`
}

func (pacedArgs) Kind() string { return "bench.paced" }

// pacedWorker reports N events, each after the client acknowledged the one
// before, so every event is measured on its own rather than behind a backlog.
type pacedWorker struct {
	river.WorkerDefaults[pacedArgs]
	ack chan struct{}
}

func (w *pacedWorker) Work(ctx context.Context, job *river.Job[pacedArgs]) error {
	for i := 1; i <= job.Args.N; i++ {
		select {
		case <-w.ack:
		case <-ctx.Done():
			return ctx.Err()
		}
		data := fmt.Appendf(nil, `{"sent_unix_ns":%d}`, time.Now().UnixNano())
		if err := jobs.Report(ctx, jobs.Progress{Current: int64(i), Total: int64(job.Args.N), Data: data}); err != nil {
			return err
		}
	}
	return nil
}

// BenchmarkProgressLatency measures the time from a worker's ReportProgress call
// to the SSE client parsing that event (insert, NOTIFY, listener, stream query,
// write, HTTP, parse), one event per b.N, and reports p50 and p95.
func BenchmarkProgressLatency(b *testing.B) {
	worker := &pacedWorker{ack: make(chan struct{}, 1)}
	bundle := setup(b, setupOpts{configure: func(cfg *jobs.Config, reg *jobs.Registry) {
		cfg.PollInterval = time.Minute // measure the push path, not polling
		require.NoError(b, jobs.Register(reg, jobs.KindSpec[pacedArgs]{Worker: worker, Enqueuers: jobs.EnqueueUser}))
	}})
	user := userCaller(bundle.userA)
	env := bundle.create(b, user, "bench.paced", pacedArgs{N: b.N})
	resp := bundle.send(b, user, "GET", fmt.Sprintf("/api/jobs/%d/stream", env.ID), nil, nil)
	defer resp.Body.Close()
	r := sse.NewReader(resp.Body)

	latencies := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	worker.ack <- struct{}{}
	for len(latencies) < b.N {
		ev, err := r.Next()
		require.NoError(b, err)
		if ev.Name != jobs.EventProgress {
			continue
		}
		received := time.Now()
		var p struct {
			Data struct {
				SentUnixNS int64 `json:"sent_unix_ns"`
			} `json:"data"`
		}
		require.NoError(b, json.Unmarshal(ev.Data, &p))
		latencies = append(latencies, received.Sub(time.Unix(0, p.Data.SentUnixNS)))
		worker.ack <- struct{}{}
	}
	b.StopTimer()
	slices.Sort(latencies)
	pct := func(p float64) float64 {
		i := min(int(p*float64(len(latencies))), len(latencies)-1)
		return float64(latencies[i].Microseconds()) / 1000
	}
	b.ReportMetric(pct(0.50), "p50_ms")
	b.ReportMetric(pct(0.95), "p95_ms")
	b.ReportMetric(pct(0.99), "p99_ms")
}
