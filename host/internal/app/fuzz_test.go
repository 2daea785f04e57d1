package app

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/lectern-research/lectern/host/internal/mail"
)

// fuzzOp is one documented operation the fuzz test calls: its parameters and a body
// built from its request schema.
type fuzzOp struct {
	method, pattern string
	contentType     string // "" when the operation takes no body
	params          []fuzzParam
	admin           bool
	samples         [][]byte // bodies built from the schema: every property, required ones only
}

type fuzzParam struct {
	name, in string
	value    string // the default value: a row the caller owns, or a valid example
}

// fuzzWorld is the host and the rows the fuzzed requests name.
type fuzzWorld struct {
	b            *testBundle
	ops          []fuzzOp
	user, admin  string // session cookies
	ids          map[string]string
	victim       string // a user the admin routes act on
	unknownUUID  string
	poisonMarker string
}

// discardMail accepts every message; the fuzz test sends many.
type discardMail struct{}

func (discardMail) Send(context.Context, mail.Message) error { return nil }

// invalidUTF8 is a byte sequence no UTF-8 text contains.
const invalidUTF8 = "\xff\xfe\xc3"

// FuzzJSONRoutes calls every documented operation that takes JSON (and the text
// imports) with bodies, path and query values built from openapi.json and then
// mutated, as a signed-in user and as an admin. Nothing a client sends may answer
// 5xx, and no error body may carry raw driver or decoder text. The seeds (run by
// plain `go test`) put a NUL and invalid UTF-8 into every string field and every
// parameter of every operation.
func FuzzJSONRoutes(f *testing.F) {
	w := newFuzzWorld(f)
	for i, op := range w.ops {
		for _, s := range op.samples {
			f.Add(uint16(i), uint8(255), "", s)
			for _, poisoned := range poisonStrings(f, s, w.poisonMarker) {
				f.Add(uint16(i), uint8(255), "", poisoned)
			}
		}
		var body []byte
		if len(op.samples) > 0 {
			body = op.samples[0]
		}
		for p := range op.params {
			f.Add(uint16(i), uint8(p), "a\x00b", body)
			f.Add(uint16(i), uint8(p), "a"+invalidUTF8, body)
		}
		if op.contentType != "" && op.contentType != "application/json" {
			f.Add(uint16(i), uint8(255), "", []byte("@article{a,\n title = {x\x00y"+invalidUTF8+"},\n}\n"))
		}
	}
	f.Fuzz(func(t *testing.T, opIndex uint16, param uint8, value string, body []byte) {
		op := w.ops[int(opIndex)%len(w.ops)]
		rec := w.call(t, op, int(param), value, body)
		require.Less(t, rec.Code, 500, "%s %s answered %d: %s", op.method, op.pattern, rec.Code, rec.Body.String())
		for _, raw := range []string{"SQLSTATE", "json: ", "Go struct", "Go value", "invalid byte sequence", "dial tcp"} {
			require.NotContains(t, rec.Body.String(), raw, "%s %s leaks raw error text", op.method, op.pattern)
		}
	})
}

func newFuzzWorld(tb testing.TB) *fuzzWorld {
	// The whole queue of `lectern serve` (Build registers every kind), so the
	// routes that enqueue work find their kinds; no worker runs.
	b := setupWith(tb, nil, func(o *Options) { o.Mail = discardMail{} })
	tn := seedTenant(tb, b, "fuzz@example.org")
	admin := b.user(tb, "root@example.org", "admin")
	victim := b.user(tb, "victim@example.org", "user")
	w := &fuzzWorld{
		b: b, user: tn.cookie, admin: b.insertSession(tb, admin.ID, timeIn(24)),
		ids: map[string]string{
			"paper": tn.ids["user_library"], "deck": tn.ids["decks"], "card": tn.ids["cards"],
			"project": tn.ids["projects"], "task": tn.ids["tasks"], "milestone": tn.ids["milestones"],
		},
		victim: victim.ID.String(), unknownUUID: "6a0e6f4e-1111-4c5a-9d7e-0b1c2d3e4f50",
		poisonMarker: "poison-" + uuid.NewString(),
	}
	var chunk string
	require.NoError(tb, b.pool.QueryRow(context.Background(),
		`SELECT id::text FROM paper_chunks WHERE paper_id = $1`, w.ids["paper"]).Scan(&chunk))
	w.ids["chunk"] = chunk

	rec := b.do(tb, req{method: http.MethodGet, path: "/api/openapi.json"})
	require.Equal(tb, http.StatusOK, rec.Code)
	doc, err := openapi3.NewLoader().LoadFromData(rec.Body.Bytes())
	require.NoError(tb, err)
	w.ops = w.operations(tb, doc)
	require.NotEmpty(tb, w.ops)
	return w
}

// operations lists the operations to fuzz, deletions last so the other operations
// find their rows while the seeds run in order.
func (w *fuzzWorld) operations(tb testing.TB, doc *openapi3.T) []fuzzOp {
	var ops []fuzzOp
	for pattern, item := range doc.Paths.Map() {
		for method, o := range item.Operations() {
			switch {
			case !strings.HasPrefix(pattern, "/api/"):
				continue
			case pattern == "/api/auth/logout":
				continue // logging out would end the session the other calls use
			case strings.HasPrefix(pattern, "/api/admin/plugins"):
				continue // no plugin host runs here, so these answer 503 whatever is sent
			}
			op := fuzzOp{method: method, pattern: pattern, admin: strings.HasPrefix(pattern, "/api/admin/")}
			if rb := o.RequestBody; rb != nil && rb.Value != nil {
				if mt := rb.Value.Content.Get("application/json"); mt != nil {
					op.contentType = "application/json"
					all, err := json.Marshal(w.sample(mt.Schema, "", false))
					require.NoError(tb, err)
					required, err := json.Marshal(w.sample(mt.Schema, "", true))
					require.NoError(tb, err)
					op.samples = [][]byte{all}
					if !bytes.Equal(all, required) {
						op.samples = append(op.samples, required)
					}
				} else if rb.Value.Content.Get("multipart/form-data") != nil {
					continue // uploads are the ingest area's, with their own tests
				} else {
					for ct := range rb.Value.Content {
						op.contentType = ct
						break
					}
				}
			}
			for _, p := range append(slices.Clone(item.Parameters), o.Parameters...) {
				if p.Value == nil || (p.Value.In != "path" && p.Value.In != "query") {
					continue
				}
				op.params = append(op.params, fuzzParam{name: p.Value.Name, in: p.Value.In,
					value: w.paramValue(pattern, p.Value)})
			}
			ops = append(ops, op)
		}
	}
	slices.SortFunc(ops, func(a, b fuzzOp) int {
		ad, bd := a.method == http.MethodDelete, b.method == http.MethodDelete
		if ad != bd {
			if ad {
				return 1
			}
			return -1
		}
		return strings.Compare(a.method+" "+a.pattern, b.method+" "+b.pattern)
	})
	return ops
}

// paramValue is a value for a path or query parameter that names one of the
// caller's rows, or a valid example.
func (w *fuzzWorld) paramValue(pattern string, p *openapi3.Parameter) string {
	if p.In == "path" {
		switch {
		case p.Name == "key":
			return "notes.marker"
		case p.Name == "provider" && strings.HasSuffix(pattern, "/test"):
			return "local" // no base URL saved: the test answers without connecting out
		case p.Name == "provider":
			return "openai"
		case p.Name == "role":
			return "answer"
		case p.Name == "name":
			return "arxiv"
		case p.Name == "paper_id", strings.HasPrefix(pattern, "/api/papers/"):
			return w.ids["paper"]
		case strings.HasPrefix(pattern, "/api/admin/users/"):
			return w.victim
		case strings.HasPrefix(pattern, "/api/projects/"):
			return w.ids["project"]
		case strings.HasPrefix(pattern, "/api/tasks/"):
			return w.ids["task"]
		case strings.HasPrefix(pattern, "/api/milestones/"):
			return w.ids["milestone"]
		case strings.HasPrefix(pattern, "/api/decks/"):
			return w.ids["deck"]
		case strings.HasPrefix(pattern, "/api/cards/"):
			return w.ids["card"]
		}
		return w.unknownUUID
	}
	var schema *openapi3.Schema
	if p.Schema != nil {
		schema = p.Schema.Value
	}
	v := w.sample(&openapi3.SchemaRef{Value: schema}, p.Name, true)
	switch v := v.(type) {
	case string:
		return v
	case []any:
		if len(v) > 0 {
			if s, ok := v[0].(string); ok {
				return s
			}
		}
		return ""
	default:
		raw, _ := json.Marshal(v)
		return string(raw)
	}
}

// sample builds a value that fits ref: enum members, the caller's row ids for id
// fields, the minimum of a number range.
func (w *fuzzWorld) sample(ref *openapi3.SchemaRef, name string, requiredOnly bool) any {
	if ref == nil || ref.Value == nil {
		return "text"
	}
	s := ref.Value
	if len(s.Enum) > 0 {
		return s.Enum[0]
	}
	for _, alt := range [][]*openapi3.SchemaRef{s.OneOf, s.AnyOf, s.AllOf} {
		if len(alt) > 0 {
			return w.sample(alt[0], name, requiredOnly)
		}
	}
	switch {
	case s.Type.Is("object") || len(s.Properties) > 0:
		out := map[string]any{}
		for prop, ps := range s.Properties {
			if ps.Value != nil && ps.Value.ReadOnly {
				continue
			}
			if requiredOnly && !slices.Contains(s.Required, prop) {
				continue
			}
			out[prop] = w.sample(ps, prop, requiredOnly)
		}
		return out
	case s.Type.Is("array"):
		return []any{w.sample(s.Items, strings.TrimSuffix(name, "s"), requiredOnly)}
	case s.Type.Is("integer"):
		if s.Min != nil {
			return int(*s.Min)
		}
		return 1
	case s.Type.Is("number"):
		if s.Min != nil && *s.Min > 0 {
			return *s.Min
		}
		return 0.9
	case s.Type.Is("boolean"):
		return true
	}
	switch s.Format {
	case "uuid":
		for _, kind := range []string{"paper", "deck", "card", "chunk", "project", "task", "milestone"} {
			if strings.Contains(name, kind) {
				return w.ids[kind]
			}
		}
		return w.unknownUUID
	case "date-time":
		return time.Now().UTC().Format(time.RFC3339)
	case "date":
		return time.Now().UTC().Format(time.DateOnly)
	case "email":
		return "someone@example.org"
	case "uri":
		return "https://example.org/paper.pdf"
	}
	switch name {
	case "color":
		return "#3366cc"
	case "card_type":
		return "basic"
	case "doi":
		return "10.1234/fuzz." + strconv.Itoa(len(name))
	case "arxiv_id":
		return "2401.00001"
	}
	return "text"
}

// poisonStrings returns copies of the JSON body raw with one string value at a time
// replaced by one holding a NUL, and by one holding invalid UTF-8.
func poisonStrings(tb testing.TB, raw []byte, marker string) [][]byte {
	var v any
	require.NoError(tb, json.Unmarshal(raw, &v))
	var out [][]byte
	n := countStrings(v)
	for i := range n {
		for _, bad := range []string{"a\x00b", "a" + invalidUTF8} {
			k := i
			poisoned := replaceString(v, &k, marker)
			enc, err := json.Marshal(poisoned)
			require.NoError(tb, err)
			out = append(out, bytes.Replace(enc, []byte(marker), []byte(jsonStringBody(bad)), 1))
		}
	}
	return out
}

// jsonStringBody is s as it sits between the quotes of a JSON string: a NUL escaped
// as \u0000, invalid UTF-8 left raw.
func jsonStringBody(s string) string {
	return strings.ReplaceAll(s, "\x00", `\u0000`)
}

func countStrings(v any) int {
	switch v := v.(type) {
	case string:
		return 1
	case []any:
		n := 0
		for _, e := range v {
			n += countStrings(e)
		}
		return n
	case map[string]any:
		n := 0
		for _, e := range v {
			n += countStrings(e)
		}
		return n
	}
	return 0
}

// replaceString copies v with its *k-th string (in a fixed walk order) replaced.
func replaceString(v any, k *int, with string) any {
	switch v := v.(type) {
	case string:
		if *k == 0 {
			*k = -1
			return with
		}
		*k--
		return v
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = replaceString(e, k, with)
		}
		return out
	case map[string]any:
		keys := make([]string, 0, len(v))
		for key := range v {
			keys = append(keys, key)
		}
		slices.Sort(keys)
		out := make(map[string]any, len(v))
		for _, key := range keys {
			out[key] = replaceString(v[key], k, with)
		}
		return out
	}
	return v
}

// call sends op with parameter param set to value (any index past the parameters
// leaves them all at their defaults) and body.
func (w *fuzzWorld) call(t *testing.T, op fuzzOp, param int, value string, body []byte) *httptest.ResponseRecorder {
	t.Helper()
	path := op.pattern
	query := url.Values{}
	for i, p := range op.params {
		v := p.value
		if i == param {
			v = value
		}
		if p.in == "path" {
			path = strings.Replace(path, "{"+p.name+"}", url.PathEscape(v), 1)
		} else {
			query.Set(p.name, v)
		}
	}
	target := path
	if len(query) > 0 {
		target += "?" + query.Encode()
	}
	var rd *bytes.Reader
	if op.contentType != "" {
		rd = bytes.NewReader(body)
	} else {
		rd = bytes.NewReader(nil)
	}
	hr, err := http.NewRequest(op.method, "http://lectern.test"+target, rd)
	require.NoError(t, err, target)
	if op.contentType != "" {
		hr.Header.Set("Content-Type", op.contentType)
	}
	hr.RemoteAddr = remoteAddr
	cookie := w.user
	if op.admin {
		cookie = w.admin
	}
	hr.AddCookie(&http.Cookie{Name: "service_session", Value: cookie})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	rec := httptest.NewRecorder()
	w.b.app.Handler.ServeHTTP(rec, hr.WithContext(ctx))
	return rec
}
