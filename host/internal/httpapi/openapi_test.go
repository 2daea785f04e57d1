package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"net/http"
	"net/http/httptest"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/go-chi/chi/v5"
	"github.com/stretchr/testify/require"

	"github.com/lectern-research/lectern/host/internal/auth"
	"github.com/lectern-research/lectern/host/internal/httpx"
	"github.com/lectern-research/lectern/host/internal/infraevents"
	"github.com/lectern-research/lectern/host/internal/ingest"
	"github.com/lectern-research/lectern/host/internal/jobs"
	"github.com/lectern-research/lectern/host/internal/llmgw"
	"github.com/lectern-research/lectern/host/internal/papers"
	"github.com/lectern-research/lectern/host/internal/pulse"
	"github.com/lectern-research/lectern/host/internal/rag"
	"github.com/lectern-research/lectern/host/internal/retrieve"
	"github.com/lectern-research/lectern/host/internal/search"
	"github.com/lectern-research/lectern/host/internal/userconfig"
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

// TestOpenAPISchemasMatchWhatTheCodeSends compares the JSON field names of the Go
// types the handlers send with the properties of the schemas that describe them:
// a field the code sends and the document leaves out fails, and so does one the
// document promises that the code never sends. A field the code always sends
// (no omitempty) must be required; one it may leave out must not be.
func TestOpenAPISchemasMatchWhatTheCodeSends(t *testing.T) {
	t.Parallel()
	doc, err := openapi3.NewLoader().LoadFromData(openAPIDocument)
	require.NoError(t, err)

	cases := []struct {
		schema string
		sent   map[string]bool // JSON name -> always sent
	}{
		{"Error", errorBodyFields(t)},
		{"InfraEventsAccepted", jsonFields(reflect.TypeFor[infraevents.Accepted]())},
		{"InfraEvent", jsonFields(reflect.TypeFor[infraevents.Event]())},
		{"FieldError", jsonFields(reflect.TypeFor[httpx.FieldError]())},
		{"UploadResult", jsonFields(reflect.TypeFor[ingest.UploadResult]())},
		{"JobEnvelope", jsonFields(reflect.TypeFor[jobs.Envelope]())},
		{"AnswerDone", jsonFields(reflect.TypeFor[rag.Done]())},
		{"AnswerFallback", jsonFields(reflect.TypeFor[rag.Fallback]())},
		{"StreamError", jsonFields(reflect.TypeFor[rag.StreamError]())},
		{"Citation", jsonFields(reflect.TypeFor[rag.Citation]())},
		{"Me", jsonFields(reflect.TypeFor[auth.Me]())},
		{"MessengerStatus", jsonFields(reflect.TypeFor[auth.MessengerStatus]())},
		{"PairingToken", jsonFields(reflect.TypeFor[auth.PairingToken]())},
		{"MessengerSettings", jsonFields(reflect.TypeFor[userconfig.MessengerSettings]())},
		{"SearchResponse", jsonFields(reflect.TypeFor[search.Response]())},
		{"SourceReport", jsonFields(reflect.TypeFor[search.SourceReport]())},
		{"Passage", jsonFields(reflect.TypeFor[retrieve.Passage]())},
		{"OutlineEntry", jsonFields(reflect.TypeFor[papers.OutlineEntry]())},
		{"PassageText", jsonFields(reflect.TypeFor[papers.PassageText]())},
		{"AnswerSentence", jsonFields(reflect.TypeFor[rag.SentenceCheck]())},
		{"LLMProbeResult", jsonFields(reflect.TypeFor[llmgw.ProbeResult]())},
		{"PulseOnboarding", jsonFields(reflect.TypeFor[pulse.Onboarding]())},
		{"PulseOnboardingCandidate", jsonFields(reflect.TypeFor[pulse.OnboardingCandidate]())},
		{"PulseOnboardingRating", jsonFields(reflect.TypeFor[pulse.OnboardingRating]())},
		{"PulseDiscovery", jsonFields(reflect.TypeFor[pulse.Discovery]())},
	}
	for _, tc := range cases {
		t.Run(tc.schema, func(t *testing.T) {
			ref := doc.Components.Schemas[tc.schema]
			require.NotNil(t, ref, "openapi.json has no schema %s", tc.schema)
			s := ref.Value
			documented := map[string]bool{}
			for name := range s.Properties {
				documented[name] = true
			}
			sent, always := map[string]bool{}, map[string]bool{}
			for name, a := range tc.sent {
				sent[name] = true
				if a {
					always[name] = true
				}
			}
			require.Equal(t, sortedKeys(sent), sortedKeys(documented), "the properties of %s are the fields the code sends", tc.schema)
			required := map[string]bool{}
			for _, name := range s.Required {
				required[name] = true
			}
			require.Equal(t, sortedKeys(always), sortedKeys(required), "%s requires exactly the fields the code always sends", tc.schema)
		})
	}
}

// errorBodyFields renders the error body twice through httpx.Err: bare, which
// shows the fields always sent, and with every optional part set, which shows
// them all.
func errorBodyFields(t *testing.T) map[string]bool {
	t.Helper()
	render := func(ctx context.Context, e *httpx.Error) map[string]json.RawMessage {
		rec := httptest.NewRecorder()
		httpx.Err(rec, httptest.NewRequest(http.MethodGet, "/", nil).WithContext(ctx), e)
		var body map[string]json.RawMessage
		require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &body))
		return body
	}
	out := map[string]bool{}
	full := httpx.Invalid("The email address is not valid.", httpx.FieldError{Field: "email", Message: "is not an email address"})
	full.Cause = errors.New("raw cause")
	ctx := httpx.WithDebug(httpx.WithRequestID(context.Background(), "req-1"), true)
	for name := range render(ctx, full) {
		out[name] = false
	}
	for name := range render(context.Background(), httpx.NotFound("No such paper.")) {
		out[name] = true
	}
	return out
}

// jsonFields are the JSON names encoding/json gives the fields of struct type t,
// each with whether it is always sent (no omitempty or omitzero).
func jsonFields(t reflect.Type) map[string]bool {
	out := map[string]bool{}
	for f := range t.Fields() {
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" {
			et := f.Type
			if et.Kind() == reflect.Pointer {
				et = et.Elem()
			}
			if et.Kind() == reflect.Struct {
				maps.Copy(out, jsonFields(et))
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		optional := slices.Contains(strings.Split(opts, ","), "omitempty") || slices.Contains(strings.Split(opts, ","), "omitzero")
		out[name] = !optional
	}
	return out
}

// TestOpenAPIDocumentsTheRefusals: the answers every route may give to what a
// client sends are in the document. Every operation with a body documents 413 and
// 422 (a NUL or bad UTF-8 in it); every operation with a path or query parameter
// documents 400 (a NUL or bad UTF-8 there, refused by refuseUnstorableText); a
// route with a declared body limit names that limit in its 413; adding a paper
// by identifier documents 503 with Retry-After.
func TestOpenAPIDocumentsTheRefusals(t *testing.T) {
	t.Parallel()
	doc, err := openapi3.NewLoader().LoadFromData(openAPIDocument)
	require.NoError(t, err)
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			key := method + " " + path
			if op.RequestBody != nil {
				require.NotNil(t, op.Responses.Status(http.StatusRequestEntityTooLarge), "%s takes a body but documents no 413", key)
				require.NotNil(t, op.Responses.Status(http.StatusUnprocessableEntity), "%s takes a body but documents no 422", key)
			}
			for _, p := range append(slices.Clone(item.Parameters), op.Parameters...) {
				if in := p.Value.In; in == openapi3.ParameterInPath || in == openapi3.ParameterInQuery {
					require.NotNil(t, op.Responses.Status(http.StatusBadRequest), "%s has the %s parameter %s but documents no 400", key, in, p.Value.Name)
				}
			}
		}
	}
	for route, limit := range bodyLimits {
		method, path, _ := strings.Cut(route, " ")
		op := doc.Paths.Find(path).GetOperation(method)
		require.NotNil(t, op, route)
		tooLarge := op.Responses.Status(http.StatusRequestEntityTooLarge)
		require.NotNil(t, tooLarge, route)
		require.Contains(t, *tooLarge.Value.Description, byteSize(limit), "the 413 of %s names its limit", route)
	}
	unreachable := doc.Paths.Find("/api/library").Post.Responses.Status(http.StatusServiceUnavailable)
	require.NotNil(t, unreachable, "POST /api/library documents 503 sources_unreachable")
	require.Contains(t, *unreachable.Value.Description, "sources_unreachable")
	require.Contains(t, unreachable.Value.Headers, "Retry-After")
}
