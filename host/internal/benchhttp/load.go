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

// targeter sends, for a random signed-in user, a random request of the mix. The
// request carries the route's name in a header the host ignores, so each result
// can be counted under its route.
func (m *mix) targeter(base string, c *corpus, cookies []string, seed uint64) vegeta.Targeter {
	var mu sync.Mutex
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	return func(t *vegeta.Target) error {
		mu.Lock()
		r := m.pick(rng)
		path := r.Path(c, rng)
		cookie := cookies[rng.IntN(len(cookies))]
		mu.Unlock()
		*t = vegeta.Target{Method: http.MethodGet, URL: base + path, Header: http.Header{
			"Cookie": {sessionCookie + "=" + cookie},
			"Accept": {"application/json"},
		}}
		return nil
	}
}

// routeOf names the route of a result from its URL.
func (m *mix) routeOf(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil {
		return "unknown"
	}
	switch {
	case u.Path == "/api/papers" && u.Query().Get("scope") == "corpus":
		return "feed page"
	case u.Path == "/api/papers":
		return "library page"
	case u.Path == "/api/reviews/due":
		return "due cards"
	case u.Path == "/api/projects":
		return "projects"
	case u.Path == "/api/search/chunks":
		return "passage search"
	}
	return "unknown"
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
// does), for d.
func (m *mix) attack(base string, c *corpus, cookies []string, connections int, d time.Duration) *Level {
	atk := vegeta.NewAttacker(
		vegeta.Workers(uint64(connections)), vegeta.MaxWorkers(uint64(connections)),
		vegeta.Connections(connections), vegeta.MaxConnections(connections),
		vegeta.KeepAlive(true), vegeta.Timeout(30*time.Second), vegeta.MaxBody(0),
		vegeta.Redirects(vegeta.NoFollow),
	)
	lv := &Level{Connections: connections, Routes: map[string]*vegeta.Metrics{}, Overall: &vegeta.Metrics{},
		Non2xx: map[string]int{}, Codes: map[string]string{}}
	for _, r := range m.routes {
		lv.Routes[r.Name] = &vegeta.Metrics{}
	}
	start := time.Now()
	rate := vegeta.Rate{Freq: 0} // no pacing: as fast as the connections go
	for res := range atk.Attack(m.targeter(base, c, cookies, uint64(connections)), rate, d, fmt.Sprint(connections)) {
		name := m.routeOf(res.URL)
		rm, ok := lv.Routes[name]
		if !ok {
			rm = &vegeta.Metrics{}
			lv.Routes[name] = rm
		}
		rm.Add(res)
		lv.Overall.Add(res)
		if res.Code < 200 || res.Code > 299 {
			lv.Non2xx[name]++
			key := fmt.Sprint(res.Code)
			if _, seen := lv.Codes[key]; !seen {
				lv.Codes[key] = res.Error
			}
		}
	}
	lv.Duration = time.Since(start)
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
