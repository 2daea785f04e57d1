package cli

import (
	"fmt"
	"testing"
	"time"
)

// BenchmarkScaleOut measures job throughput through real lectern serve
// processes on one database, side by side in one run: one host with --role all,
// then two API and two worker hosts. Each round enqueues 500 test.noop jobs
// that do nothing (so it measures the queue: the API, River's fetches and
// completions, the progress writes) and reports jobs/s from the first enqueue
// to the last completion. Run it with -benchtime=1x (docs/operations.md,
// "Scaling out").
func BenchmarkScaleOut(b *testing.B) {
	for _, layout := range []struct {
		name           string
		apis, workers  int
		apiRole, wRole string
	}{
		{"one-all-host", 1, 0, "all", ""},
		{"two-api-two-worker", 2, 2, "api", "worker"},
	} {
		b.Run(layout.name, func(b *testing.B) {
			bin, dir, pool, env := scaleCluster(b)
			var apis []*scaleNode
			for i := range layout.apis {
				apis = append(apis, startScaleNode(b, bin, dir, fmt.Sprintf("api%d", i+1), layout.apiRole, env))
			}
			nodes := apis
			for i := range layout.workers {
				nodes = append(nodes, startScaleNode(b, bin, dir, fmt.Sprintf("worker%d", i+1), layout.wRole, env))
			}
			for _, n := range nodes {
				n.waitHealthy(b, 3*time.Minute)
			}
			b.ResetTimer()
			var rate float64
			for range b.N {
				ids := enqueueScaleJobs(b, apis, scaleJobs, 0)
				waitAllCompleted(b, pool, ids, 3*time.Minute)
				rate = throughput(b, pool, ids)
				_, err := pool.Exec(b.Context(), `DELETE FROM river_job`)
				if err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(rate, "jobs/s")
		})
	}
}
