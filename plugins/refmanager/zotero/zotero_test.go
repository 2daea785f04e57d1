package main

import (
	"context"
	"log/slog"
	"testing"

	"github.com/hashicorp/go-plugin"
	"github.com/stretchr/testify/require"

	"github.com/lectern-research/lectern/sdk/paper"
	"github.com/lectern-research/lectern/sdk/plugintest"
	"github.com/lectern-research/lectern/sdk/protocol"
	"github.com/lectern-research/lectern/sdk/refmanager"
)

// dial serves the plugin over gRPC, as the host reaches it, configured to lib.
func dial(t *testing.T, lib *zoteroLib) refmanager.Manager {
	t.Helper()
	impl := New(slog.New(slog.DiscardHandler))
	client, _ := plugin.TestPluginGRPCConn(t, false, map[string]plugin.Plugin{"refmanager": &refmanager.GRPCPlugin{Impl: impl}})
	t.Cleanup(func() { _ = client.Close() })
	raw, err := client.Dispense("refmanager")
	require.NoError(t, err)
	m := raw.(refmanager.Manager)
	_, err = m.Configure(context.Background(), &protocol.ConfigureRequest{Settings: map[string]any{"base_url": lib.srv.URL}})
	require.NoError(t, err)
	return m
}

var creds = map[string]string{CredAPIKey: testKey}

// recorded is a library of the recorded items: records, a standalone note, a
// record with a PDF whose annotations are recorded, and the PDF's record (written
// here: the recordings name it only as a parent).
func recorded(t *testing.T) *zoteroLib {
	lib := newZoteroLib(t)
	lib.load("pyzotero_user_items_top.json")
	lib.load("webapi_user_items_with_note.json")
	lib.put("VR82JUX8", map[string]any{"itemType": "journalArticle", "title": "Canine longevity and diet",
		"DOI": "10.1000/XYZ123", "creators": []any{map[string]any{"creatorType": "author", "firstName": "Ada", "lastName": "Lovelace"}},
		"collections": []any{}, "tags": []any{}}, map[string]any{"parsedDate": "2019-03"})
	lib.load("webapi_user_item_children_attachments.json")
	lib.load("webapi_user_attachment_annotations.json")
	return lib
}

// drain lists every page of ItemsSince from since.
func drain(t *testing.T, m refmanager.Manager, since int64, size int) (items []refmanager.Item, pages int, version int64) {
	t.Helper()
	cursor := ""
	for {
		resp, err := m.ItemsSince(context.Background(), &refmanager.ItemsSinceRequest{Credentials: creds, LibraryID: "users/1",
			SinceVersion: since, Cursor: cursor, PageSize: size})
		require.NoError(t, err)
		pages++
		items = append(items, resp.Items...)
		if resp.NextCursor == "" {
			return items, pages, resp.LibraryVersion
		}
		cursor = resp.NextCursor
		require.Less(t, pages, 100)
	}
}

func TestLibrariesSayWhatTheKeyMayDo(t *testing.T) {
	m := dial(t, recorded(t))
	resp, err := m.Libraries(context.Background(), &refmanager.LibrariesRequest{Credentials: creds})
	require.NoError(t, err)
	require.NotEmpty(t, resp.Libraries)
	require.Equal(t, refmanager.Library{ID: "users/1", Name: "testuser", Type: refmanager.LibraryUser, Writable: true}, resp.Libraries[0])
	for _, l := range resp.Libraries[1:] {
		require.Equal(t, refmanager.LibraryGroup, l.Type)
		require.False(t, l.Writable, "the key reads groups but may not write to them")
	}

	_, err = m.Libraries(context.Background(), &refmanager.LibrariesRequest{Credentials: map[string]string{CredAPIKey: "wrong"}})
	require.Equal(t, protocol.CodeUnauthorized, protocol.CodeOf(err))
	require.Contains(t, err.Error(), "check it in Settings")
	require.NotContains(t, err.Error(), "wrong")
}

func TestItemsSinceListsRecordsOncePageByPageAndEndsWithRemovals(t *testing.T) {
	lib := recorded(t)
	m := dial(t, lib)
	items, pages, version := drain(t, m, 0, 7)
	require.Greater(t, pages, 3)
	require.EqualValues(t, lib.version, version)
	// A record may come again on a later page when a child of it changed later
	// (the PDF's annotations here): the same record each time.
	byKey := map[string]refmanager.Item{}
	for _, it := range items {
		if prev, ok := byKey[it.Key]; ok {
			require.Equal(t, prev, it, "record %s", it.Key)
		}
		byKey[it.Key] = it
	}
	require.Len(t, byKey, 25, "the 20 + 4 recorded records and the PDF's record")
	_, ok := byKey["Q6ALXLJG"]
	require.False(t, ok, "a standalone note is not a paper")
	_, ok = byKey["VG79HDDM"]
	require.False(t, ok, "an attachment is not a paper")
	_, ok = byKey["VR82JUX8"]
	require.True(t, ok)
	p := byKey["VR82JUX8"].Paper
	require.Equal(t, "10.1000/xyz123", p.IDs.DOI)
	require.Equal(t, paper.Date{Year: 2019, Month: 3, Precision: paper.PrecisionMonth}, p.Published)
	require.Equal(t, "Ada Lovelace", p.Authors[0].Name)
	require.Equal(t, "10.2307/2321200", byKey["PQKBRC33"].Paper.IDs.DOI)
	require.Equal(t, 1980, byKey["PQKBRC33"].Paper.Published.Year)
	require.Equal(t, paper.PrecisionYear, byKey["Z8N84QAJ"].Paper.Published.Precision, "1992-00-00 is a year")
	for _, it := range items {
		require.LessOrEqual(t, it.Version, version)
	}

	// Nothing changed: one 304, nothing listed.
	again, _, v := drain(t, m, version, 7)
	require.Empty(t, again)
	require.Equal(t, version, v)

	// A new annotation brings back its record; a trashed record and a removed one
	// come as removals; an item Lectern pushed is left out.
	lib.put("NEWANN01", map[string]any{"itemType": "annotation", "parentItem": "VG79HDDM", "annotationType": "highlight",
		"annotationText": "dogs on a restricted diet lived longer", "annotationPageLabel": "3"}, nil)
	lib.mu.Lock()
	lib.objects["Z77UB935"]["deleted"] = float64(1)
	lib.mu.Unlock()
	lib.put("Z77UB935", lib.objects["Z77UB935"], lib.meta["Z77UB935"])
	lib.remove("PQKBRC33")
	lib.put("PUSHED01", map[string]any{"itemType": "journalArticle", "title": "Ours", "extra": refmanager.MarkerPrefix + " 7d1c"}, nil)
	changed, _, _ := drain(t, m, version, 50)
	got := map[string]bool{}
	for _, it := range changed {
		got[it.Key] = it.Deleted
	}
	require.Equal(t, map[string]bool{"VR82JUX8": false, "Z77UB935": true, "PQKBRC33": true}, got)
}

func TestNotesListChildNotesAndPDFAnnotations(t *testing.T) {
	lib := recorded(t)
	lib.put("CHILDN01", map[string]any{"itemType": "note", "parentItem": "VR82JUX8", "note": "<p>Compare with the 2002 cohort.</p>"}, nil)
	m := dial(t, lib)
	resp, err := m.Notes(context.Background(), &refmanager.NotesRequest{Credentials: creds, LibraryID: "users/1", ItemKey: "VR82JUX8"})
	require.NoError(t, err)
	var notes, anns int
	for _, n := range resp.Notes {
		require.Equal(t, "VR82JUX8", n.ParentItemKey)
		if n.Annotation == nil {
			notes++
			require.Contains(t, n.HTML, "2002 cohort")
			continue
		}
		anns++
		require.NotEmpty(t, n.Annotation.Type)
	}
	require.Equal(t, 1, notes)
	require.Equal(t, 4, anns, "the four recorded annotations on the PDF")
}

func TestPushCreatesOnceLinksByDOIAndFilesIntoTheProjectCollection(t *testing.T) {
	lib := recorded(t)
	m := dial(t, lib)
	ctx := context.Background()
	req := &refmanager.PushRequest{Credentials: creds, LibraryID: "users/1", Collection: "Thesis chapter 2", SinceVersion: lib.version,
		Items: []refmanager.PushItem{
			{Marker: refmanager.MarkerPrefix + " 11111111-1111-1111-1111-111111111111",
				Paper: paper.Paper{IDs: paper.IDs{DOI: "10.1126/science.1195912"}, Title: "Biscrolling Nanotube Sheets"}},
			{Marker: refmanager.MarkerPrefix + " 22222222-2222-2222-2222-222222222222",
				Paper: paper.Paper{IDs: paper.IDs{ArXivID: "1706.03762"}, Title: "Attention Is All You Need",
					Authors: []paper.Author{{Name: "Ashish Vaswani", GivenName: "Ashish", FamilyName: "Vaswani"}}, WorkType: "preprint"}},
		}}
	resp, err := m.Push(ctx, req)
	require.NoError(t, err)
	require.NotEmpty(t, resp.CollectionKey)
	require.Len(t, resp.Results, 2)
	require.Equal(t, refmanager.PushLinked, resp.Results[0].Outcome, resp.Results[0].Error)
	require.Equal(t, "33TK9NH9", resp.Results[0].Key, "the item holding the DOI")
	require.Equal(t, refmanager.PushCreated, resp.Results[1].Outcome, resp.Results[1].Error)
	created := resp.Results[1].Key
	lib.mu.Lock()
	require.Contains(t, lib.objects["33TK9NH9"]["collections"], resp.CollectionKey)
	require.Equal(t, []any{resp.CollectionKey}, lib.objects[created]["collections"])
	require.Contains(t, lib.objects[created]["extra"], "22222222")
	posts := lib.posts
	lib.mu.Unlock()

	// Pushing again creates nothing: the keys are known, the items filed.
	req.Items[0].Key, req.Items[1].Key = "33TK9NH9", created
	again, err := m.Push(ctx, req)
	require.NoError(t, err)
	require.Equal(t, resp.CollectionKey, again.CollectionKey, "the collection is found, not made twice")
	for _, r := range again.Results {
		require.Equal(t, refmanager.PushUnchanged, r.Outcome)
	}
	lib.mu.Lock()
	require.Equal(t, posts, lib.posts)
	lib.mu.Unlock()
}

func TestResumingFromAPagesThroughMissesNothing(t *testing.T) {
	lib := recorded(t)
	lib.remove("PQKBRC33")
	m := dial(t, lib)
	all, _, _ := drain(t, m, 0, 7)
	first, err := m.ItemsSince(context.Background(), &refmanager.ItemsSinceRequest{Credentials: creds, LibraryID: "users/1", PageSize: 7})
	require.NoError(t, err)
	require.NotEmpty(t, first.NextCursor)
	require.Positive(t, first.Through)
	require.Less(t, first.Through, first.LibraryVersion)
	// The run stops here; the next one starts from Through with no cursor.
	rest, _, _ := drain(t, m, first.Through, 7)
	keys := func(items []refmanager.Item) map[string]bool {
		out := map[string]bool{}
		for _, it := range items {
			out[it.Key] = it.Deleted
		}
		return out
	}
	resumed := keys(first.Items)
	for k, d := range keys(rest) {
		resumed[k] = d
	}
	require.Equal(t, keys(all), resumed)
	require.True(t, keys(first.Items)["PQKBRC33"], "the removal came on the first page")
}

// TestConformance runs the SDK's conformance kit on the built plugin against the
// recorded library.
func TestConformance(t *testing.T) {
	lib := recorded(t)
	bin := plugintest.Build(t, ".")
	plugintest.Run(t, plugintest.Options{Path: bin, Kind: protocol.KindRefManager, Credentials: creds, PageSize: 5,
		Settings: map[string]any{"base_url": lib.srv.URL}})
}
