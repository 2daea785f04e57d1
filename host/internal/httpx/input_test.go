package httpx

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestCheckJSONNamesTheField(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, body, field string
	}{
		{"clean", `{"a": "x", "b": [1, "y"]}`, ""},
		{"escaped backslash is not a NUL", `{"a": "\\u0000"}`, ""},
		{"NUL in a top-level value", `{"a": "ok", "name": "x\u0000y"}`, "name"},
		{"NUL in a nested list", `{"reviews": [{"client_id": "a"}, {"rating": 3, "client_id": "b\u0000"}]}`, "reviews[1].client_id"},
		{"NUL in a key", `{"na\u0000me": "x"}`, "na\\u0000me"},
		{"invalid UTF-8 in a value", "{\"a\": 1, \"title\": \"caf\xe9\"}", "title"},
		{"invalid UTF-8 in a list of strings", "{\"tags\": [\"ok\", \"\xff\"]}", "tags[1]"},
		{"invalid UTF-8 in a key", "{\"k\xff\": 1}", "k\uFFFD"},
		{"a NUL in a bare string body", `"\u0000"`, "body"},
		{"not JSON at all is left to the decoder", "{\"a\": \xff}", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := CheckJSON([]byte(tc.body))
			if tc.field == "" {
				require.Nil(t, err)
				return
			}
			require.NotNil(t, err)
			require.Equal(t, http.StatusUnprocessableEntity, err.Status)
			require.Equal(t, tc.field, err.Fields[0].Field)
		})
	}
}

func TestDecodeJSONAnswersInSentences(t *testing.T) {
	t.Parallel()
	type body struct {
		Name   string   `json:"name"`
		Rating int      `json:"rating"`
		Tags   []string `json:"tags"`
	}
	for _, tc := range []struct {
		name, body  string
		status      int
		field, text string
	}{
		{"wrong type", `{"rating": "five"}`, 422, "rating", "The rating field must be a whole number in range."},
		{"unknown field", `{"nmae": "x"}`, 422, "nmae", "The body has a field this request does not take: nmae."},
		{"syntax", `{"name": }`, 400, "", "The body is not valid JSON (at byte 10)."},
		{"truncated", `{"name": "x"`, 400, "", "The body is not valid JSON: it ends too early."},
		{"empty", ``, 400, "", "The body is empty; send a JSON object."},
		{"two objects", `{} {}`, 400, "", "The body must hold one JSON object and nothing after it."},
		{"NUL", `{"tags": ["a\u0000"]}`, 422, "tags[0]", "The tags[0] field holds a NUL character"},
		{"too big", `{"name": "` + strings.Repeat("x", 200) + `"}`, 413, "", "The body is larger than the 0 KB this request accepts."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(tc.body))
			r.Header.Set("Content-Type", "application/json")
			w := httptest.NewRecorder()
			limit := int64(MaxJSONBody)
			if tc.status == 413 {
				limit = 100
			}
			var v body
			require.False(t, DecodeJSON(w, r, &v, limit))
			require.Equal(t, tc.status, w.Code, w.Body.String())
			require.Contains(t, w.Body.String(), tc.text)
			if tc.field != "" {
				require.Contains(t, w.Body.String(), `"field":"`+tc.field+`"`)
			}
			require.NotContains(t, w.Body.String(), "json:")
			require.NotContains(t, w.Body.String(), "Go ")
		})
	}
}

func TestDecodeJSONShowsTheDecoderTextOnlyInDevelopment(t *testing.T) {
	t.Parallel()
	for _, debug := range []bool{false, true} {
		r := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(`{"rating": "five"}`))
		r = r.WithContext(WithDebug(r.Context(), debug))
		w := httptest.NewRecorder()
		var v struct {
			Rating int `json:"rating"`
		}
		require.False(t, DecodeJSON(w, r, &v, MaxJSONBody))
		require.Equal(t, debug, strings.Contains(w.Body.String(), `"exception":"json: cannot unmarshal`), w.Body.String())
	}
}

func TestCheckRequestNamesTheParameter(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, target string
		field        string
		ok           bool
	}{
		{"clean", "/api/search?q=fusion&limit=5", "", true},
		{"NUL in a value", "/api/search?q=a%00b", "q", false},
		{"invalid UTF-8 in a value", "/api/search?limit=1&q=caf%E9", "q", false},
		{"NUL in the path", "/api/settings/config/a%00b", "", false},
		{"invalid UTF-8 in the path", "/api/settings/config/%FF", "", false},
		{"bad escape", "/api/search?q=%zz", "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := httptest.NewRequest(http.MethodGet, tc.target, nil)
			err := CheckRequest(r)
			if tc.ok {
				require.Nil(t, err)
				return
			}
			require.NotNil(t, err)
			require.Equal(t, http.StatusBadRequest, err.Status)
			if tc.field != "" {
				require.Equal(t, tc.field, err.Fields[0].Field)
				require.Contains(t, err.Detail, "query parameter "+tc.field)
			}
		})
	}
}

func TestCheckText(t *testing.T) {
	t.Parallel()
	require.Nil(t, CheckText("file", "@article{a, title={Café}}"))
	require.Equal(t, "file", CheckText("file", "caf\xe9").Fields[0].Field)
	require.Equal(t, "file", CheckText("file", "a\x00b").Fields[0].Field)
}

// The fast path agrees with the full parse: anything it lets through decodes to
// ASCII without NUL, and everything else goes to url.ParseQuery.
func TestPlainASCIIAgreesWithTheParse(t *testing.T) {
	t.Parallel()
	for raw, plain := range map[string]bool{
		"":                             true,
		"q=spaced+repetition&limit=20": true,
		"q=a%20b%2Fc":                  true,
		"q=%00":                        false,
		"q=%C3%A9":                     false,
		"q=%e9":                        false,
		"q=%zz":                        false,
		"q=%1G":                        false,
		"q=%2":                         false,
		"q=caf\xc3\xa9":                false,
	} {
		require.Equal(t, plain, plainASCII(raw), raw)
		if plain {
			q, err := url.ParseQuery(raw)
			require.NoError(t, err, raw)
			require.Nil(t, CheckValues("query parameter", q), raw)
		}
	}
	for _, raw := range []string{"q=%00", "q=%C3", "q=%1G", "q=caf\xc3"} {
		r := httptest.NewRequest(http.MethodGet, "/api/x", nil)
		r.URL.RawQuery = raw
		require.NotNil(t, CheckRequest(r), "still refused: %q", raw)
	}
}
