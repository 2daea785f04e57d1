package webapi

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lectern-research/lectern/sdk/plugintest"
)

// FuzzDecodeAnswers answers every request of the client with the same arbitrary
// body, seeded with the recorded Web API answers, and calls each reading method
// and the write: whatever Zotero (or something in its place) sends, the client
// must not panic, must not hang past its deadline, and must return either a
// decoded value or a typed *Error.
func FuzzDecodeAnswers(f *testing.F) {
	plugintest.AddFixtureSeeds(f, "zotero", ".json")
	f.Add([]byte(`[{"key":"ABCD2345","version":3,"meta":{"parsedDate":"2017-06"},"data":{"itemType":"journalArticle","title":"T","deleted":1,"parentItem":7,"extra":"DOI: 10.1/x"}}]`))
	f.Add([]byte(`{"successful":{"0":{"key":"ABCD2345"}},"unchanged":{"1":"X"},"failed":{"2":{"code":412,"message":"m"}}}`))
	var body atomic.Pointer[[]byte]
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Last-Modified-Version", "12")
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(*body.Load())
	}))
	defer srv.Close()
	c := New(Config{BaseURL: srv.URL, APIKey: testKey, Clock: newFakeClock(), MaxAttempts: 1})
	lib := User(475425)
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) > plugintest.MaxFuzzInput {
			return
		}
		body.Store(&b)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		check := func(what string, err error) {
			t.Helper()
			if ctx.Err() != nil {
				t.Fatalf("%s: still decoding at the deadline", what)
			}
			var e *Error
			if err != nil && !errors.As(err, &e) {
				t.Fatalf("%s: an error that is not a *webapi.Error: %v", what, err)
			}
		}
		_, err := c.CurrentKey(ctx)
		check("CurrentKey", err)
		_, err = c.Groups(ctx, 475425)
		check("Groups", err)
		_, err = c.Changed(ctx, lib, "items", 3)
		check("Changed", err)
		_, err = c.DeletedSince(ctx, lib, 3)
		check("DeletedSince", err)
		items, err := c.Items(ctx, lib, []string{"ABCD2345", "EFGH6789"})
		check("Items", err)
		for _, it := range items {
			plugintest.CheckText(t, "item title", it.Title)
		}
		_, err = c.Collections(ctx, lib, []string{"ABCD2345"})
		check("Collections", err)
		_, err = c.Children(ctx, lib, "ABCD2345")
		check("Children", err)
		_, err = c.Create(ctx, lib, []map[string]any{{"itemType": "note"}, {"itemType": "note"}}, WriteToken())
		check("Create", err)
	})
}
