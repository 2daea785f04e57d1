package httpapi

import (
	"net/http"
	"runtime"
)

// routeSlots are the routes whose handlers run only so many at a time, each with
// how many. A passage search scores vectors in memory and ranks words in
// PostgreSQL: tens of milliseconds of CPU, where a feed page or the due queue
// takes a fraction of one. Under load, searches without a bound take every core
// and the cheap reads of every other user queue behind them; with one, searches
// wait in their own line and everything else is served at once
// (docs/benchmarks.md, "Issue 18 item 7"). TestRouteSlotsNameRoutes keeps the keys
// in step with the table.
var routeSlots = map[string]func() int{
	"GET /api/search/chunks": searchSlots,
}

// searchSlots is one passage search per core: as many as can run without waiting
// for one another.
func searchSlots() int { return max(1, runtime.GOMAXPROCS(0)) }

// slotsOf is the middleware bounding rt's concurrent handlers, or nil for a
// route without a bound.
func slotsOf(rt Route) func(http.Handler) http.Handler {
	n, ok := routeSlots[rt.Method+" "+rt.Pattern]
	if !ok {
		return nil
	}
	return limitConcurrency(n())
}

// limitConcurrency lets n requests run the handler at once; the others wait, in
// no particular order, until one ends. A request whose client leaves while it
// waits ends without an answer (logged as 499, never as a server error).
func limitConcurrency(n int) func(http.Handler) http.Handler {
	slots := make(chan struct{}, n)
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			select {
			case slots <- struct{}{}:
			case <-r.Context().Done():
				return
			}
			defer func() { <-slots }()
			next.ServeHTTP(w, r)
		})
	}
}
