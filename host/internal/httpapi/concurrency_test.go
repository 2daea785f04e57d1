package httpapi

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestRouteSlotsNameRoutes(t *testing.T) {
	t.Parallel()
	b := setup(t, nil, nil)
	declared := map[string]bool{}
	for _, rt := range b.routes {
		declared[rt.Method+" "+rt.Pattern] = true
	}
	require.NotEmpty(t, routeSlots)
	for k, n := range routeSlots {
		require.True(t, declared[k], "routeSlots names %q, which is not a route", k)
		require.Positive(t, n(), "%s: a route needs at least one slot", k)
	}
	require.NotNil(t, slotsOf(Route{Method: http.MethodGet, Pattern: "/api/search/chunks"}))
	require.Nil(t, slotsOf(Route{Method: http.MethodGet, Pattern: "/api/reviews/due"}), "the cheap reads are never bounded")
}

// With every slot taken, the next request waits until one is given back, and a
// request whose client leaves while it waits never reaches the handler.
func TestLimitConcurrencyQueuesBeyondItsSlots(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	// The handler stands in for a search: it holds its slot until released.
	var running, entered atomic.Int32
	h := limitConcurrency(2)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		entered.Add(1)
		running.Add(1)
		defer running.Add(-1)
		<-release
		w.WriteHeader(http.StatusOK)
	}))
	serve := func(ctx context.Context) chan int {
		done := make(chan int, 1)
		go func() {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/api/search/chunks?q=x", nil).WithContext(ctx))
			done <- rec.Code
		}()
		return done
	}
	first, second := serve(t.Context()), serve(t.Context())
	require.Eventually(t, func() bool { return running.Load() == 2 }, 5*time.Second, time.Millisecond)

	third := serve(t.Context())
	leaving, leave := context.WithCancel(t.Context())
	gone := serve(leaving)
	leave()
	require.Equal(t, http.StatusOK, <-gone, "a request that left while waiting writes nothing (the recorder's default)")
	require.Never(t, func() bool { return running.Load() > 2 }, 50*time.Millisecond, time.Millisecond,
		"a third request ran while both slots were taken")

	close(release)
	require.Equal(t, http.StatusOK, <-first)
	require.Equal(t, http.StatusOK, <-second)
	require.Equal(t, http.StatusOK, <-third)
	require.EqualValues(t, 3, entered.Load(), "the request that left never reached the handler")
}
