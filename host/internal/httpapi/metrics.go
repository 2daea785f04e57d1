package httpapi

import (
	"strconv"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

type metrics struct {
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
}

// newMetrics registers the HTTP, database-pool, Go runtime and process collectors
// on reg. Each server has its own registry, so tests never share counters.
func newMetrics(reg *prometheus.Registry, pool *pgxpool.Pool) *metrics {
	m := &metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "lectern_http_requests_total",
			Help: "HTTP requests served, by route pattern, method and status code.",
		}, []string{"route", "method", "status"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "lectern_http_request_duration_seconds",
			Help:    "Time to serve an HTTP request, by route pattern and method.",
			Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
		}, []string{"route", "method"}),
	}
	reg.MustRegister(m.requests, m.duration,
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	if pool != nil {
		reg.MustRegister(poolCollector{pool})
	}
	return m
}

func (m *metrics) observe(route, method string, status int, elapsed time.Duration) {
	m.requests.WithLabelValues(route, method, strconv.Itoa(status)).Inc()
	m.duration.WithLabelValues(route, method).Observe(elapsed.Seconds())
}

var (
	poolConnsDesc = prometheus.NewDesc("lectern_db_pool_connections",
		"Database pool connections by state.", []string{"state"}, nil)
	poolMaxDesc = prometheus.NewDesc("lectern_db_pool_max_connections",
		"Largest size the database pool may grow to.", nil, nil)
	poolAcquiresDesc = prometheus.NewDesc("lectern_db_pool_acquires_total",
		"Connections acquired from the database pool.", nil, nil)
	poolWaitsDesc = prometheus.NewDesc("lectern_db_pool_empty_acquires_total",
		"Acquires that had to wait for a connection.", nil, nil)
	poolWaitSecondsDesc = prometheus.NewDesc("lectern_db_pool_acquire_wait_seconds_total",
		"Time spent waiting for a pool connection.", nil, nil)
)

// poolCollector reads pgxpool statistics at scrape time.
type poolCollector struct{ pool *pgxpool.Pool }

func (c poolCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- poolConnsDesc
	ch <- poolMaxDesc
	ch <- poolAcquiresDesc
	ch <- poolWaitsDesc
	ch <- poolWaitSecondsDesc
}

func (c poolCollector) Collect(ch chan<- prometheus.Metric) {
	s := c.pool.Stat()
	ch <- prometheus.MustNewConstMetric(poolConnsDesc, prometheus.GaugeValue, float64(s.AcquiredConns()), "acquired")
	ch <- prometheus.MustNewConstMetric(poolConnsDesc, prometheus.GaugeValue, float64(s.IdleConns()), "idle")
	ch <- prometheus.MustNewConstMetric(poolConnsDesc, prometheus.GaugeValue, float64(s.ConstructingConns()), "constructing")
	ch <- prometheus.MustNewConstMetric(poolMaxDesc, prometheus.GaugeValue, float64(s.MaxConns()))
	ch <- prometheus.MustNewConstMetric(poolAcquiresDesc, prometheus.CounterValue, float64(s.AcquireCount()))
	ch <- prometheus.MustNewConstMetric(poolWaitsDesc, prometheus.CounterValue, float64(s.EmptyAcquireCount()))
	ch <- prometheus.MustNewConstMetric(poolWaitSecondsDesc, prometheus.CounterValue, s.AcquireDuration().Seconds())
}
