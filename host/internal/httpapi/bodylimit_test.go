package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lectern-research/lectern/host/internal/auth"
	"github.com/lectern-research/lectern/host/internal/users"
)

// echoBody answers 200 with the body's length, or 400 with the read error's raw
// text, as a careless handler would.
var echoBody = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	raw, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, "could not read: "+err.Error(), http.StatusBadRequest)
		return
	}
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write([]byte(strings.Repeat("x", len(raw)%7) + "ok"))
})

func TestLimitBody(t *testing.T) {
	t.Parallel()
	h := limitBody(100, "")(echoBody)
	for _, tc := range []struct {
		name    string
		size    int
		chunked bool
		want    int
	}{
		{"at the limit", 100, false, http.StatusOK},
		{"at the limit, chunked", 100, true, http.StatusOK},
		{"declared over the limit", 101, false, http.StatusRequestEntityTooLarge},
		{"chunked over the limit", 101, true, http.StatusRequestEntityTooLarge},
		{"far over, chunked", 1 << 20, true, http.StatusRequestEntityTooLarge},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := httptest.NewRequest(http.MethodPost, "/x", bytes.NewReader(bytes.Repeat([]byte("a"), tc.size)))
			if tc.chunked {
				r.ContentLength = -1
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, r)
			require.Equal(t, tc.want, rec.Code, rec.Body.String())
			if tc.want != http.StatusOK {
				var body errorBody
				require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &body), rec.Body.String())
				require.Equal(t, "too_large", body.Code)
				require.Equal(t, "The request body is larger than the 100 bytes this route accepts.", body.Detail)
				require.NotContains(t, rec.Body.String(), "could not read", "the handler's raw answer is replaced")
			}
		})
	}
}

func TestByteSize(t *testing.T) {
	t.Parallel()
	for n, want := range map[int64]string{100: "100 bytes", 64 << 10: "64 KB", 1 << 20: "1 MB", 51 << 20: "51 MB", 3 << 19: "1.5 MB"} {
		require.Equal(t, want, byteSize(n))
	}
}

func TestBodyLimitsNameRoutes(t *testing.T) {
	t.Parallel()
	b := setup(t, nil, nil)
	declared := map[string]bool{}
	for _, rt := range b.routes {
		declared[rt.Method+" "+rt.Pattern] = true
	}
	for k, n := range bodyLimits {
		require.True(t, declared[k], "bodyLimits names %q, which is not a route", k)
		require.Greater(t, n, int64(MaxRouteBody), "%s: a limit below the default needs no entry", k)
	}
	for k := range bodyLimitDetails {
		require.True(t, declared[k], "bodyLimitDetails names %q, which is not a route", k)
	}
}

// An oversized upload is refused in the uploader's words, whether its size was
// announced (the middleware) or found while reading (the handler).
func TestAnOversizedPDFIsNamedAsSuch(t *testing.T) {
	t.Parallel()
	h := limitBody(maxUploadBody, bodyLimitDetails["POST /api/papers/upload"])(echoBody)
	req := httptest.NewRequest(http.MethodPost, "/api/papers/upload", strings.NewReader("x"))
	req.ContentLength = maxUploadBody + 1
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	require.Equal(t, http.StatusRequestEntityTooLarge, rec.Code)
	require.Equal(t, "The PDF is larger than 50 MB.", decodeError(t, rec).Detail)
}

// TestEveryRouteRefusesAnOversizedBody walks the route table as a signed-in admin
// (DEV_AUTH_BYPASS) and sends every route a body one byte over its limit: declared,
// it is refused with 413 before the handler runs; sent chunked, the route answers
// 413 or, when it never reads a body, its usual answer, and never a 5xx or the
// reader's raw error text.
func TestEveryRouteRefusesAnOversizedBody(t *testing.T) {
	t.Parallel()
	// /infra-events has its own key and allowlist, which the bypass does not open.
	const infraKey = "5c8e1a4f7b2d9e6a3c0f8b5d2e7a4c1f9b6d3e0a"
	b := setup(t, map[string]string{"DEV_AUTH_BYPASS": "true", "INFRA_INGEST_KEY": infraKey, "INFRA_INGEST_ALLOWED_CIDRS": "127.0.0.1/32"}, nil)
	_, err := users.Create(context.Background(), b.pool, "admin@example.org", users.RoleAdmin)
	require.NoError(t, err)
	path := strings.NewReplacer("{id}", "00000000-0000-4000-8000-000000000001", "{paper_id}", "00000000-0000-4000-8000-000000000002",
		"{key}", "ui.theme", "{provider}", "openai", "{role}", "chat", "{name}", "source.arxiv")
	noRAG := map[string]bool{"/api/rag/ask": true, "/api/papers/{id}/summary": true, "/api/papers/{id}/extractions": true, "/api/papers/{id}/extract": true}
	for _, rt := range b.routes {
		limit := maxBody(rt)
		body := bytes.Repeat([]byte("a"), int(limit)+1)
		for _, chunked := range []bool{false, true} {
			r := httptest.NewRequest(rt.Method, path.Replace(rt.Pattern), bytes.NewReader(body))
			r.Header.Set("Content-Type", "application/json")
			r.Header.Set(auth.HeaderInfraKey, infraKey)
			r.RemoteAddr = "127.0.0.1:5000"
			if chunked {
				r.ContentLength = -1
			}
			rec := b.do(t, r)
			if !chunked {
				require.Equal(t, http.StatusRequestEntityTooLarge, rec.Code, "%s %s: %s", rt.Method, rt.Pattern, rec.Body.String())
				require.Equal(t, "too_large", decodeError(t, rec).Code)
				continue
			}
			if rec.Code == http.StatusServiceUnavailable && decodeError(t, rec).Code == "unavailable" {
				continue // this bundle runs no job queue, so those routes answer 503 without reading
			}
			if noRAG[rt.Pattern] {
				continue // this bundle builds no RAG API (host/internal/app tests it)
			}
			require.Less(t, rec.Code, 500, "%s %s chunked: %s", rt.Method, rt.Pattern, rec.Body.String())
			require.NotContains(t, rec.Body.String(), "request body too large", "%s %s chunked", rt.Method, rt.Pattern)
		}
	}
}
