package benchhttp

import (
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"sync"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"
	"github.com/valyala/fasthttp"
)

// route is one request of the mixed read set and how often a researcher's day
// sends it, out of 100.
type route struct {
	Name   string
	Weight int
	// Path makes the request's path and query for rng.
	Path func(c *corpus, rng *rand.Rand) string
}

// mixedReads is the mixed read set (docs/benchmarks.md, "Issue 18 item 7"):
// reviewing cards takes the most requests (the due queue is fetched again after
// every few answers), then the library and the feed, projects, and passage
// searches, each of which a person reads for a while.
var mixedReads = []route{
	{"due cards", 30, func(*corpus, *rand.Rand) string { return "/api/reviews/due" }},
	{"library page", 25, func(_ *corpus, rng *rand.Rand) string {
		view := []string{"all_non_trash", "all_non_trash", "all_non_trash", "inbox", "reading", "starred"}[rng.IntN(6)]
		return "/api/papers?scope=library&limit=20&view=" + view
	}},
	{"feed page", 10, func(*corpus, *rand.Rand) string { return "/api/papers?scope=corpus&limit=20" }},
	{"projects", 20, func(*corpus, *rand.Rand) string { return "/api/projects" }},
	{"passage search", 15, func(c *corpus, rng *rand.Rand) string {
		return "/api/search/chunks?limit=20&q=" + url.QueryEscape(c.query(rng))
	}},
}

// floorRoutes are not in the mix: driven alone (--only), they say what any
// request costs on the machine at the least. The signed-in floor is a signed-in
// user's own account (the session's look-up and the account's row, a small
// answer); the no-auth floor is the liveness probe, which reads nothing.
var floorRoutes = []route{
	{"signed-in floor", 1, func(*corpus, *rand.Rand) string { return "/api/me" }},
	{"no-auth floor", 1, func(*corpus, *rand.Rand) string { return "/healthz" }},
}

// mix picks routes by weight.
type mix struct {
	routes []route
	total  int
}

func newMix(routes []route) *mix {
	m := &mix{routes: routes}
	for _, r := range routes {
		m.total += r.Weight
	}
	return m
}

func (m *mix) pick(rng *rand.Rand) route {
	n := rng.IntN(m.total)
	for _, r := range m.routes {
		if n < r.Weight {
			return r
		}
		n -= r.Weight
	}
	return m.routes[len(m.routes)-1]
}

// Level is the outcome of one load level: per route and overall.
type Level struct {
	Connections int
	Duration    time.Duration
	Routes      map[string]*vegeta.Metrics
	Overall     *vegeta.Metrics
	// Non2xx counts answers outside 2xx (transport errors count as status 0).
	Non2xx map[string]int
	// Codes are the non-2xx statuses seen, with their first error text.
	Codes map[string]string
}

// attack drives the mix at connections keep-alive connections, each sending its
// next request as soon as the previous one is answered (a closed loop, as wrk
// does), for d; the requests under way at the end are finished and counted. Each
// request goes to a random signed-in user's session.
//
// The client is fasthttp's: the load generator shares the machine with the host
// and PostgreSQL, and net/http's client (through vegeta) took 0.23 of the two
// cores at 740 requests/s, CPU the host did not have (docs/benchmarks.md,
// "Eleventh session"). vegeta still keeps the figures.
func (m *mix) attack(base string, c *corpus, cookies []string, connections int, d time.Duration) *Level {
	hc := &fasthttp.HostClient{
		Addr: strings.TrimPrefix(base, "http://"), MaxConns: connections,
		ReadTimeout: 30 * time.Second, WriteTimeout: 30 * time.Second,
		MaxIdleConnDuration: time.Minute, NoDefaultUserAgentHeader: true,
	}
	type result struct {
		route string
		res   vegeta.Result
	}
	results := make([][]result, connections)
	start := time.Now()
	deadline := start.Add(d)
	var wg sync.WaitGroup
	for w := range connections {
		rng := rand.New(rand.NewPCG(uint64(connections), uint64(w)))
		wg.Go(func() {
			req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
			defer fasthttp.ReleaseRequest(req)
			defer fasthttp.ReleaseResponse(resp)
			for time.Now().Before(deadline) {
				r := m.pick(rng)
				u := base + r.Path(c, rng)
				req.Reset()
				req.SetRequestURI(u)
				req.Header.SetCookie(sessionCookie, cookies[rng.IntN(len(cookies))])
				req.Header.Set("Accept", "application/json")
				sent := time.Now()
				err := hc.Do(req, resp)
				res := vegeta.Result{Method: http.MethodGet, URL: u, Timestamp: sent, Latency: time.Since(sent)}
				if err != nil {
					res.Error = err.Error()
				} else {
					res.Code, res.BytesIn = uint16(resp.StatusCode()), uint64(len(resp.Body()))
				}
				results[w] = append(results[w], result{r.Name, res})
			}
		})
	}
	wg.Wait()
	lv := &Level{Connections: connections, Duration: time.Since(start), Routes: map[string]*vegeta.Metrics{},
		Overall: &vegeta.Metrics{}, Non2xx: map[string]int{}, Codes: map[string]string{}}
	for _, r := range m.routes {
		lv.Routes[r.Name] = &vegeta.Metrics{}
	}
	for _, rs := range results {
		for _, r := range rs {
			lv.Routes[r.route].Add(&r.res)
			lv.Overall.Add(&r.res)
			if r.res.Code < 200 || r.res.Code > 299 {
				lv.Non2xx[r.route]++
				key := fmt.Sprint(r.res.Code)
				if _, seen := lv.Codes[key]; !seen {
					lv.Codes[key] = r.res.Error
				}
			}
		}
	}
	for _, rm := range lv.Routes {
		rm.Close()
	}
	lv.Overall.Close()
	return lv
}

// print writes the level as a table: requests, requests/s, p50/p95/p99 and non-2xx
// per route, then overall.
func (lv *Level) print(w io.Writer, routes []route) {
	fmt.Fprintf(w, "\n%d connections, %s:\n", lv.Connections, lv.Duration.Round(time.Second))
	fmt.Fprintf(w, "| %-14s | %6s | %8s | %7s | %8s | %8s | %8s | %7s |\n", "route", "weight", "requests", "req/s", "p50 ms", "p95 ms", "p99 ms", "non-2xx")
	fmt.Fprintf(w, "|%s|%s:|%s:|%s:|%s:|%s:|%s:|%s:|\n", strings.Repeat("-", 16), strings.Repeat("-", 7), strings.Repeat("-", 9),
		strings.Repeat("-", 8), strings.Repeat("-", 9), strings.Repeat("-", 9), strings.Repeat("-", 9), strings.Repeat("-", 8))
	row := func(name, weight string, m *vegeta.Metrics, non2xx int) {
		secs := lv.Duration.Seconds()
		fmt.Fprintf(w, "| %-14s | %6s | %8d | %7.0f | %8.1f | %8.1f | %8.1f | %7d |\n", name, weight, m.Requests,
			float64(m.Requests)/secs, ms(m.Latencies.P50), ms(m.Latencies.P95), ms(m.Latencies.P99), non2xx)
	}
	total := 0
	for _, r := range routes {
		row(r.Name, fmt.Sprint(r.Weight), lv.Routes[r.Name], lv.Non2xx[r.Name])
		total += lv.Non2xx[r.Name]
	}
	row("overall", fmt.Sprint(weights(routes)), lv.Overall, total)
	codes := make([]string, 0, len(lv.Codes))
	for c := range lv.Codes {
		codes = append(codes, c)
	}
	sort.Strings(codes)
	for _, c := range codes {
		fmt.Fprintf(w, "  status %s, e.g. %q\n", c, lv.Codes[c])
	}
}

func weights(routes []route) int {
	n := 0
	for _, r := range routes {
		n += r.Weight
	}
	return n
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
