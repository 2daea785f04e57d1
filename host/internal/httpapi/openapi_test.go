package httpapi

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/go-chi/chi/v5"
	"github.com/stretchr/testify/require"
)

var chiParamRegexp = regexp.MustCompile(`\{([^}:]+):[^}]+\}`)

// TestOpenAPICoversEveryRoute fails when a route of the router is missing from
// openapi.json, or the document describes a route the router does not serve.
func TestOpenAPICoversEveryRoute(t *testing.T) {
	t.Parallel()
	b := setup(t, nil, nil)

	doc, err := openapi3.NewLoader().LoadFromData(openAPIDocument)
	require.NoError(t, err)
	require.NoError(t, doc.Validate(context.Background()), "openapi.json is a valid OpenAPI 3 document")

	documented := map[string]bool{}
	for path, item := range doc.Paths.Map() {
		for method := range item.Operations() {
			documented[method+" "+path] = true
		}
	}
	served := map[string]bool{}
	err = chi.Walk(b.router, func(method, route string, _ http.Handler, _ ...func(http.Handler) http.Handler) error {
		route = chiParamRegexp.ReplaceAllString(strings.TrimSuffix(route, "/*"), "{$1}")
		served[method+" "+route] = true
		return nil
	})
	require.NoError(t, err)

	require.Equal(t, sortedKeys(served), sortedKeys(documented))
}

// TestEveryRouteDeclaresOneResolver walks the router and fails on a route that is
// not in the route table with a declared resolver: no route can be mounted around the
// table and so escape authentication.
func TestEveryRouteDeclaresOneResolver(t *testing.T) {
	t.Parallel()
	b := setup(t, nil, nil)
	declared := map[string]Route{}
	for _, rt := range b.routes {
		key := rt.Method + " " + rt.Pattern
		require.NotContains(t, declared, key, "route declared twice")
		require.True(t, rt.Resolver.Valid(), "%s declares no resolver", key)
		declared[key] = rt
	}
	n := 0
	err := chi.Walk(b.router, func(method, route string, _ http.Handler, _ ...func(http.Handler) http.Handler) error {
		n++
		_, ok := declared[method+" "+route]
		require.True(t, ok, "%s %s is served but not declared in the route table", method, route)
		return nil
	})
	require.NoError(t, err)
	require.Equal(t, len(declared), n)
}

func TestOpenAPIIsServed(t *testing.T) {
	t.Parallel()
	b := setup(t, nil, nil)
	rec := b.do(t, httptest.NewRequest(http.MethodGet, "/api/openapi.json", nil))
	require.Equal(t, http.StatusOK, rec.Code)
	var doc map[string]any
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &doc))
	require.Equal(t, "3.0.3", doc["openapi"])
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
