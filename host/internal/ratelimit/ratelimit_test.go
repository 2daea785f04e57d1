package ratelimit

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestLimiterPerKey(t *testing.T) {
	t.Parallel()
	l := New("sign-in", 3, time.Minute)
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	l.now = func() time.Time { return now }

	for range 3 {
		ok, _ := l.Allow("10.0.0.1")
		require.True(t, ok)
	}
	ok, wait := l.Allow("10.0.0.1")
	require.False(t, ok)
	require.Equal(t, 20*time.Second, wait, "one event every 20 s refills the bucket")

	ok, _ = l.Allow("10.0.0.2")
	require.True(t, ok, "keys are independent")

	now = now.Add(20 * time.Second)
	ok, _ = l.Allow("10.0.0.1")
	require.True(t, ok)

	now = now.Add(2 * time.Minute)
	l.Allow("other")
	require.NotContains(t, l.buckets, "10.0.0.1", "idle keys are forgotten")
}

func TestRefuse(t *testing.T) {
	t.Parallel()
	rec := httptest.NewRecorder()
	New("sign-in", 1, time.Minute).Refuse(rec, httptest.NewRequest(http.MethodPost, "/", nil), 1500*time.Millisecond)
	require.Equal(t, http.StatusTooManyRequests, rec.Code)
	require.Equal(t, "2", rec.Header().Get("Retry-After"))
	require.Contains(t, rec.Body.String(), `"code":"rate_limited"`)
}
