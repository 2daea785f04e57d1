package app

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/lectern-research/lectern/host/internal/bibio"
	"github.com/lectern-research/lectern/host/internal/papers"
)

// exportOf asks for an export as cookie and returns its status and body.
func (f *corpusFixture) exportOf(t *testing.T, cookie string, q url.Values) (int, string) {
	t.Helper()
	rec := f.b.do(t, req{method: http.MethodGet, path: "/api/library/export?" + q.Encode(), cookie: cookie})
	return rec.Code, rec.Body.String()
}

func (f *corpusFixture) idValues(titles ...string) []string {
	out := make([]string, 0, len(titles))
	for _, title := range titles {
		out = append(out, f.ids[title].String())
	}
	return out
}

func bibTitles(t *testing.T, body string) []string {
	t.Helper()
	entries, errs := bibio.ParseBibTeX(body)
	require.Empty(t, errs, body)
	titles := []string{}
	for _, e := range entries {
		titles = append(titles, e.Title)
	}
	return titles
}

// TestExportSelection: the export of chosen papers holds exactly those the caller
// may see, in the order named, once each, in all three formats, each of which
// reads back; an id of another user's private paper or of no paper is left out
// as if absent. Without ids the export follows the feed's filter.
func TestExportSelection(t *testing.T) {
	t.Parallel()
	f := newCorpus(t)
	ctx := context.Background()
	// Two papers whose first author, year and title words make the same key.
	for _, title := range []string{"P1", "P2"} {
		_, err := f.b.pool.Exec(ctx, `UPDATE papers SET authors = '[{"name": "Ada Lovelace"}]',
			publication_date = '2020-05-01', publication_date_precision = 'year', doi = $2 WHERE id = $1`,
			f.ids[title], "10.1000/"+strings.ToLower(title))
		require.NoError(t, err)
	}

	t.Run("bibtex keys are unique and the order is the caller's", func(t *testing.T) {
		code, body := f.exportOf(t, f.ann, url.Values{"format": {"bibtex"}, "id": f.idValues("P2", "P1", "P2")})
		require.Equal(t, http.StatusOK, code, body)
		entries, errs := bibio.ParseBibTeX(body)
		require.Empty(t, errs, body)
		require.Len(t, entries, 2, body)
		require.Equal(t, []string{"P2", "P1"}, []string{entries[0].Title, entries[1].Title})
		require.NotEqual(t, entries[0].Key, entries[1].Key, "keys are unique")
		require.Equal(t, []string{"Lovelace, Ada"}, entries[0].Authors)
		require.Equal(t, 2020, entries[0].Year)
		require.Equal(t, "10.1000/p2", entries[0].DOI)
	})

	t.Run("ris records open and close", func(t *testing.T) {
		code, body := f.exportOf(t, f.ann, url.Values{"format": {"ris"}, "id": f.idValues("P1", "P3")})
		require.Equal(t, http.StatusOK, code, body)
		require.Equal(t, 2, strings.Count(body, "TY  - "), body)
		require.Equal(t, 2, strings.Count(body, "ER  - "), body)
		entries, errs := bibio.ParseRIS(body)
		require.Empty(t, errs)
		require.Len(t, entries, 2)
		require.Equal(t, "P1", entries[0].Title)
		require.Equal(t, "P3", entries[1].Title)
	})

	t.Run("csl-json is an array of items with unique ids", func(t *testing.T) {
		code, body := f.exportOf(t, f.ann, url.Values{"format": {"csljson"}, "id": f.idValues("P1", "P2")})
		require.Equal(t, http.StatusOK, code, body)
		var items []struct {
			ID     string `json:"id"`
			Type   string `json:"type"`
			Title  string `json:"title"`
			Author []struct {
				Family string `json:"family"`
				Given  string `json:"given"`
			} `json:"author"`
			Issued struct {
				DateParts [][]int `json:"date-parts"`
			} `json:"issued"`
		}
		require.NoError(t, json.Unmarshal([]byte(body), &items), body)
		require.Len(t, items, 2)
		require.NotEqual(t, items[0].ID, items[1].ID)
		for _, it := range items {
			require.NotEmpty(t, it.Type)
			require.Equal(t, "Lovelace", it.Author[0].Family)
			require.Equal(t, [][]int{{2020}}, it.Issued.DateParts)
		}
	})

	t.Run("papers the caller may not see are left out as if absent", func(t *testing.T) {
		ids := append(f.idValues("P1", "U"), uuid.NewString())
		code, body := f.exportOf(t, f.bob, url.Values{"format": {"bibtex"}, "id": ids})
		require.Equal(t, http.StatusOK, code, body)
		require.Equal(t, []string{"P1"}, bibTitles(t, body), "Ann's private upload and a made-up id are not there")

		code, body = f.exportOf(t, f.bob, url.Values{"id": f.idValues("U")})
		require.Equal(t, http.StatusOK, code, body)
		require.Empty(t, bibTitles(t, body))
		code, body = f.exportOf(t, f.bob, url.Values{"scope": {"corpus"}, "q": {"U"}})
		require.Equal(t, http.StatusOK, code, body)
		require.Empty(t, bibTitles(t, body), "no filter reaches another user's private paper")
	})

	t.Run("without ids the filter decides", func(t *testing.T) {
		code, body := f.exportOf(t, f.ann, url.Values{})
		require.Equal(t, http.StatusOK, code, body)
		require.ElementsMatch(t, []string{"P1", "P2", "P3", "P5", "U"}, bibTitles(t, body), "the whole library, trash left out")

		code, body = f.exportOf(t, f.ann, url.Values{"q": {"p"}, "sort": {"title"}})
		require.Equal(t, http.StatusOK, code, body)
		require.Equal(t, []string{"P1", "P2", "P3", "P5"}, bibTitles(t, body), "all matching, in the page's order")

		code, body = f.exportOf(t, f.ann, url.Values{"view": {"reading"}})
		require.Equal(t, http.StatusOK, code, body)
		require.Equal(t, []string{"P2"}, bibTitles(t, body))

		code, body = f.exportOf(t, f.bob, url.Values{"scope": {"corpus"}, "q": {"P"}, "sort": {"title"}})
		require.Equal(t, http.StatusOK, code, body)
		require.Equal(t, []string{"P1", "P2", "P3", "P4", "P5", "P6"}, bibTitles(t, body))
	})

	t.Run("bad selections are 422s", func(t *testing.T) {
		many := make([]string, papers.MaxExportIDs+1)
		for i := range many {
			many[i] = uuid.NewString()
		}
		for name, q := range map[string]url.Values{
			"id":   {"id": {"not-a-uuid"}},
			"many": {"id": many},
			"q":    {"q": {strings.Repeat("é", papers.MaxQueryLen+1)}},
			"sort": {"sort": {"rating"}},
			"view": {"view": {"everything"}},
		} {
			code, body := f.exportOf(t, f.ann, q)
			require.Equal(t, http.StatusUnprocessableEntity, code, name+": "+body)
		}
	})
}
