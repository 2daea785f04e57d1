package app

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The feed's sort and text filter over HTTP: unknown sorts, overlong filters and a
// cursor of another sort are 422s; any other text is an answer, never a 500.
func TestFeedSortAndFilterParameters(t *testing.T) {
	t.Parallel()
	f := newCorpus(t)
	get := func(q url.Values) (int, string) {
		rec := f.b.do(t, req{method: http.MethodGet, path: "/api/papers?" + q.Encode(), cookie: f.ann})
		return rec.Code, rec.Body.String()
	}
	code, body := get(url.Values{"sort": {"rating"}})
	require.Equal(t, http.StatusUnprocessableEntity, code)
	require.Contains(t, body, "added, title, year")

	code, body = get(url.Values{"q": {strings.Repeat("é", 201)}})
	require.Equal(t, http.StatusUnprocessableEntity, code, body)
	require.Contains(t, body, `"q"`)
	for _, text := range []string{strings.Repeat("é", 200), `%_\'"`, "a OR 1=1 --", "   "} {
		for _, sort := range []string{"added", "year", "title"} {
			code, body = get(url.Values{"q": {text}, "sort": {sort}, "scope": {"corpus"}})
			require.Equal(t, http.StatusOK, code, body)
		}
	}

	code, body = get(url.Values{"sort": {"added"}, "scope": {"corpus"}, "limit": {"1"}})
	require.Equal(t, http.StatusOK, code, body)
	var page struct {
		NextCursor string `json:"next_cursor"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &page))
	require.NotEmpty(t, page.NextCursor)
	code, _ = get(url.Values{"sort": {"title"}, "scope": {"corpus"}, "cursor": {page.NextCursor}})
	require.Equal(t, http.StatusUnprocessableEntity, code)
}
