package refsync

import (
	"cmp"
	"context"
	"slices"
	"strconv"
	"sync"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/lectern-research/lectern/host/internal/dbtest"
	"github.com/lectern-research/lectern/host/internal/papers"
	"github.com/lectern-research/lectern/sdk/paper"
	"github.com/lectern-research/lectern/sdk/protocol"
	"github.com/lectern-research/lectern/sdk/refmanager"
)

func TestMain(m *testing.M) { dbtest.Main(m) }

// remote stands in for the reference-manager plugin (the external Zotero, whose
// own client is tested in the plugin against recorded responses): one library
// whose items change at increasing versions, keeping to the plugin contract
// (ascending pages ending at a version, removals on the first page, Through).
type remote struct {
	protocol.ConfigureDefaults
	mu      sync.Mutex
	version int64
	items   map[string]*remoteItem
	removed map[string]int64
	calls   int
	pushes  []*refmanager.PushRequest
	written []refmanager.Note
}

type remoteItem struct {
	version int64
	paper   paper.Paper
	notes   []refmanager.Note
}

func newRemote() *remote {
	return &remote{items: map[string]*remoteItem{}, removed: map[string]int64{}}
}

func (r *remote) put(key string, p paper.Paper, notes ...refmanager.Note) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.version++
	r.items[key] = &remoteItem{version: r.version, paper: p, notes: notes}
}

func (r *remote) remove(key string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.version++
	delete(r.items, key)
	r.removed[key] = r.version
}

func (r *remote) Describe(context.Context, *protocol.DescribeRequest) (*protocol.DescribeResponse, error) {
	return &protocol.DescribeResponse{Name: "zotero", Version: "0.1.0"}, nil
}

func (r *remote) Libraries(context.Context, *refmanager.LibrariesRequest) (*refmanager.LibrariesResponse, error) {
	return &refmanager.LibrariesResponse{Libraries: []refmanager.Library{{ID: "users/1", Type: refmanager.LibraryUser, Writable: true}}}, nil
}

func (r *remote) ItemsSince(_ context.Context, req *refmanager.ItemsSinceRequest) (*refmanager.ItemsSinceResponse, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls++
	done := req.SinceVersion
	if req.Cursor != "" {
		done, _ = strconv.ParseInt(req.Cursor, 10, 64)
	}
	resp := &refmanager.ItemsSinceResponse{LibraryVersion: r.version, Through: r.version}
	if req.Cursor == "" {
		for k, v := range r.removed {
			if v > req.SinceVersion {
				resp.Items = append(resp.Items, refmanager.Item{Key: k, Deleted: true})
			}
		}
	}
	var keys []string
	for k, it := range r.items {
		if it.version > done {
			keys = append(keys, k)
		}
	}
	slices.SortFunc(keys, func(a, b string) int { return cmp.Compare(r.items[a].version, r.items[b].version) })
	if len(keys) > req.PageSize {
		keys = keys[:req.PageSize]
		resp.Through = r.items[keys[len(keys)-1]].version
		resp.NextCursor = strconv.FormatInt(resp.Through, 10)
	}
	for _, k := range keys {
		resp.Items = append(resp.Items, refmanager.Item{Key: k, Version: r.items[k].version, Paper: r.items[k].paper})
	}
	return resp, nil
}

func (r *remote) Notes(_ context.Context, req *refmanager.NotesRequest) (*refmanager.NotesResponse, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return &refmanager.NotesResponse{Notes: slices.Clone(r.items[req.ItemKey].notes)}, nil
}

// WriteNote adds a child note to the item, as the manager would.
func (r *remote) WriteNote(_ context.Context, req *refmanager.WriteNoteRequest) (*refmanager.WriteNoteResponse, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.version++
	n := req.Note
	n.Key, n.Version = "NOTE"+strconv.FormatInt(r.version, 10), r.version
	if it, ok := r.items[n.ParentItemKey]; ok {
		it.notes = append(it.notes, n)
		it.version = r.version
	}
	r.written = append(r.written, n)
	return &refmanager.WriteNoteResponse{Note: n}, nil
}

// Push creates an item for each paper without a key and reports the others
// unchanged, remembering what it was asked.
func (r *remote) Push(_ context.Context, req *refmanager.PushRequest) (*refmanager.PushResponse, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.pushes = append(r.pushes, req)
	resp := &refmanager.PushResponse{CollectionKey: "COLL" + req.Collection}
	for _, it := range req.Items {
		if it.Key != "" {
			resp.Results = append(resp.Results, refmanager.PushResult{Marker: it.Marker, Key: it.Key, Outcome: refmanager.PushUnchanged})
			continue
		}
		r.version++
		key := "PUSH" + strconv.FormatInt(r.version, 10)
		resp.Results = append(resp.Results, refmanager.PushResult{Marker: it.Marker, Key: key, Outcome: refmanager.PushCreated})
	}
	return resp, nil
}

type fixture struct {
	pool   *pgxpool.Pool
	remote *remote
	syncer *Syncer
	ann    uuid.UUID
	bob    uuid.UUID
}

func newFixture(t *testing.T) *fixture {
	pool := dbtest.NewDB(t)
	f := &fixture{pool: pool, remote: newRemote()}
	ctx := context.Background()
	require.NoError(t, pool.QueryRow(ctx, `INSERT INTO users (email) VALUES ('ann@example.org') RETURNING id`).Scan(&f.ann))
	require.NoError(t, pool.QueryRow(ctx, `INSERT INTO users (email) VALUES ('bob@example.org') RETURNING id`).Scan(&f.bob))
	f.syncer = &Syncer{Pool: pool, Manager: func() (refmanager.Manager, error) { return f.remote, nil },
		Account: func(context.Context, uuid.UUID) (Account, error) {
			return Account{Credentials: map[string]string{"api_key": "k"}}, nil
		}}
	return f
}

// counts are the rows a user has: library rows, links, reference-manager notes,
// own notes, papers.
type counts struct{ library, links, refNotes, ownNotes, papers int }

func (f *fixture) counts(t *testing.T, user uuid.UUID) counts {
	t.Helper()
	var c counts
	require.NoError(t, f.pool.QueryRow(context.Background(), `
		SELECT (SELECT count(*) FROM user_library WHERE user_id = $1),
		       (SELECT count(*) FROM refmanager_links WHERE user_id = $1),
		       (SELECT count(*) FROM paper_notes WHERE user_id = $1 AND source = 'refmanager'),
		       (SELECT count(*) FROM paper_notes WHERE user_id = $1 AND source = 'user'),
		       (SELECT count(*) FROM papers)`, user).Scan(&c.library, &c.links, &c.refNotes, &c.ownNotes, &c.papers))
	return c
}

func attention() paper.Paper {
	return paper.Paper{IDs: paper.IDs{ArXivID: "1706.03762", SourceID: "users/1/items/AAAA1111"}, Title: "Attention Is All You Need",
		Authors: []paper.Author{{Name: "Ashish Vaswani"}}, Published: paper.Date{Year: 2017, Precision: paper.PrecisionYear}}
}

func bert() paper.Paper {
	return paper.Paper{IDs: paper.IDs{DOI: "10.18653/v1/n19-1423", SourceID: "users/1/items/BBBB2222"},
		Title: "BERT: Pre-training of Deep Bidirectional Transformers for Language Understanding"}
}

func fsrs() paper.Paper {
	return paper.Paper{IDs: paper.IDs{SourceID: "users/1/items/CCCC3333"}, Title: "A Stochastic Shortest Path Algorithm for Optimizing Spaced Repetition Scheduling",
		Published: paper.Date{Year: 2022, Month: 8, Precision: paper.PrecisionMonth}}
}

func TestSyncingTwiceLeavesTheSameRowsAndARemovalTakesOutExactlyWhatItBrought(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	f.remote.put("AAAA1111", attention(), refmanager.Note{Key: "N1", HTML: "<p>Read <b>section 3</b> first.</p>", Version: 1})
	f.remote.put("BBBB2222", bert(),
		refmanager.Note{Key: "N2", HTML: "<p>Masked LM</p>", Version: 2},
		refmanager.Note{Key: "A1", Version: 3, Annotation: &refmanager.Annotation{Type: "highlight", Text: "bidirectional", PageLabel: "4"}})
	f.remote.put("CCCC3333", fsrs())

	rep, err := f.syncer.Run(ctx, f.ann)
	require.NoError(t, err)
	require.Equal(t, 3, rep.Added)
	require.EqualValues(t, 3, rep.Version)
	first := f.counts(t, f.ann)
	require.Equal(t, counts{library: 3, links: 3, refNotes: 3, ownNotes: 0, papers: 3}, first)
	var body string
	var page *int
	require.NoError(t, f.pool.QueryRow(ctx, `SELECT body FROM paper_notes WHERE external_key = 'N1'`).Scan(&body))
	require.Equal(t, "Read section 3 first.", body, "the note's text without its markup")
	require.NoError(t, f.pool.QueryRow(ctx, `SELECT page_number FROM paper_notes WHERE external_key = 'A1'`).Scan(&page))
	require.Equal(t, 4, *page)

	rep, err = f.syncer.Run(ctx, f.ann)
	require.NoError(t, err)
	require.Equal(t, Report{LibraryID: "users/1", Version: 3}, rep, "nothing changed, nothing done")
	require.Equal(t, first, f.counts(t, f.ann))

	// Ann writes her own note on BERT; then BERT is deleted in Zotero and a note
	// is added to the attention paper.
	bertID := f.paperOf(t, f.ann, "BBBB2222")
	_, err = f.pool.Exec(ctx, `INSERT INTO paper_notes (user_id, paper_id, body) VALUES ($1, $2, 'my own thoughts')`, f.ann, bertID)
	require.NoError(t, err)
	f.remote.remove("BBBB2222")
	f.remote.put("AAAA1111", attention(),
		refmanager.Note{Key: "N1", HTML: "<p>Read <b>section 3</b> first.</p>", Version: 1},
		refmanager.Note{Key: "N3", HTML: "<p>Compare with RNNs</p>", Version: 5})
	rep, err = f.syncer.Run(ctx, f.ann)
	require.NoError(t, err)
	require.Equal(t, 1, rep.Removed)
	require.Equal(t, 1, rep.Updated)
	require.EqualValues(t, 5, rep.Version, "the cursor moved")
	require.Equal(t, counts{library: 2, links: 2, refNotes: 2, ownNotes: 1, papers: 3}, f.counts(t, f.ann),
		"BERT left the library with the two notes it brought; Ann's own note and the paper stay")

	rep, err = f.syncer.Run(ctx, f.ann)
	require.NoError(t, err)
	require.Zero(t, rep.Added+rep.Updated+rep.Removed+rep.Notes)
	require.Equal(t, counts{library: 2, links: 2, refNotes: 2, ownNotes: 1, papers: 3}, f.counts(t, f.ann))
}

func (f *fixture) paperOf(t *testing.T, user uuid.UUID, key string) uuid.UUID {
	t.Helper()
	var id uuid.UUID
	require.NoError(t, f.pool.QueryRow(context.Background(),
		`SELECT paper_id FROM refmanager_links WHERE user_id = $1 AND item_key = $2`, user, key).Scan(&id))
	return id
}

func TestADOIMatchingAnotherUsersPrivateUploadDoesNotLinkToIt(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	var annsUpload uuid.UUID
	err := pgx.BeginFunc(ctx, f.pool, func(tx pgx.Tx) error {
		var err error
		annsUpload, _, err = papers.UpsertForUserTx(ctx, tx, papers.Input{DOI: "10.18653/v1/n19-1423",
			Title: "BERT (Ann's annotated copy)"}, f.ann, "upload")
		return err
	})
	require.NoError(t, err)

	f.remote.put("BBBB2222", bert(), refmanager.Note{Key: "N2", HTML: "Bob's note", Version: 2})
	rep, err := f.syncer.Run(ctx, f.bob)
	require.NoError(t, err)
	require.Equal(t, 1, rep.Added)
	bobs := f.paperOf(t, f.bob, "BBBB2222")
	require.NotEqual(t, annsUpload, bobs, "Bob gets a paper of his own")

	var title, visibility string
	var by uuid.UUID
	require.NoError(t, f.pool.QueryRow(ctx, `SELECT title, visibility, discovered_by FROM papers WHERE id = $1`, annsUpload).
		Scan(&title, &visibility, &by))
	require.Equal(t, "BERT (Ann's annotated copy)", title)
	require.Equal(t, "private", visibility)
	require.Equal(t, f.ann, by)
	visible, err := papers.New(f.pool).Visible(ctx, f.bob, annsUpload)
	require.NoError(t, err)
	require.False(t, visible)
	var onAnns int
	require.NoError(t, f.pool.QueryRow(ctx, `SELECT count(*) FROM paper_notes WHERE paper_id = $1`, annsUpload).Scan(&onAnns))
	require.Zero(t, onAnns, "Bob's notes never land on Ann's upload")
}

func TestARunAddsAtMostMaxNewAndTheNextGoesOnFromThere(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	for i := range 5 {
		f.remote.put("ITEM000"+strconv.Itoa(i), paper.Paper{Title: "Paper number " + strconv.Itoa(i),
			IDs: paper.IDs{SourceID: "users/1/items/ITEM000" + strconv.Itoa(i)}})
	}
	f.syncer.MaxNew = 2
	var total int
	for run := 0; run < 3; run++ {
		rep, err := f.syncer.Run(ctx, f.ann)
		require.NoError(t, err)
		require.LessOrEqual(t, rep.Added, 2)
		total += rep.Added
		require.Equal(t, run < 2, rep.Capped, "run %d", run)
	}
	require.Equal(t, 5, total)
	require.Equal(t, counts{library: 5, links: 5, papers: 5}, f.counts(t, f.ann))
	st, err := statuses(ctx, f.pool, f.ann)
	require.NoError(t, err)
	require.Len(t, st, 1)
	require.EqualValues(t, 5, st[0].Version)
	require.NotNil(t, st[0].LastOKAt)
}

func TestARemovalKeepsAPaperTheUserHadBeforeTheSync(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	var mine uuid.UUID
	err := pgx.BeginFunc(ctx, f.pool, func(tx pgx.Tx) error {
		var err error
		mine, _, err = papers.UpsertForUserTx(ctx, tx, papers.Input{ArxivID: "1706.03762", Title: "Attention Is All You Need"}, f.ann, "import")
		return err
	})
	require.NoError(t, err)
	f.remote.put("AAAA1111", attention(), refmanager.Note{Key: "N1", HTML: "x", Version: 1})
	rep, err := f.syncer.Run(ctx, f.ann)
	require.NoError(t, err)
	require.Zero(t, rep.Added, "the paper was in the library already")
	require.Equal(t, mine, f.paperOf(t, f.ann, "AAAA1111"))
	f.remote.remove("AAAA1111")
	_, err = f.syncer.Run(ctx, f.ann)
	require.NoError(t, err)
	require.Equal(t, counts{library: 1, links: 0, refNotes: 0, papers: 1}, f.counts(t, f.ann))
}

func TestPushFilesProjectPapersOnceAndRemembersTheirKeys(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	f.remote.put("AAAA1111", attention())
	_, err := f.syncer.Run(ctx, f.ann)
	require.NoError(t, err)
	synced := f.paperOf(t, f.ann, "AAAA1111")
	var own uuid.UUID
	require.NoError(t, pgx.BeginFunc(ctx, f.pool, func(tx pgx.Tx) error {
		var err error
		own, _, err = papers.UpsertForUserTx(ctx, tx, papers.Input{DOI: "10.1145/3368089.3409742", Title: "A paper of Ann's project"}, f.ann, "import")
		return err
	}))
	var bobs uuid.UUID
	require.NoError(t, pgx.BeginFunc(ctx, f.pool, func(tx pgx.Tx) error {
		var err error
		bobs, _, err = papers.UpsertForUserTx(ctx, tx, papers.Input{Title: "Bob's private draft"}, f.bob, "upload")
		return err
	}))
	projects := []ProjectPapers{{Name: "Thesis", Papers: []uuid.UUID{synced, own, bobs}}}

	rep, err := f.syncer.Push(ctx, f.ann, projects)
	require.NoError(t, err)
	require.Equal(t, PushReport{Created: 1, Unchanged: 1}, rep, "the synced paper is filed by its key; Bob's paper is not Ann's to push")
	require.Len(t, f.remote.pushes, 1)
	req := f.remote.pushes[0]
	require.Equal(t, "Thesis", req.Collection)
	require.Len(t, req.Items, 2)
	require.Equal(t, "AAAA1111", req.Items[0].Key)
	require.Equal(t, Marker(own), req.Items[1].Marker)
	require.Equal(t, "10.1145/3368089.3409742", req.Items[1].Paper.IDs.DOI)

	rep, err = f.syncer.Push(ctx, f.ann, projects)
	require.NoError(t, err)
	require.Equal(t, PushReport{Unchanged: 2}, rep, "the second push knows every key and creates nothing")
	require.NotEmpty(t, f.remote.pushes[1].Items[1].Key)
	var origin string
	require.NoError(t, f.pool.QueryRow(ctx, `SELECT origin FROM refmanager_links WHERE user_id = $1 AND paper_id = $2`, f.ann, own).Scan(&origin))
	require.Equal(t, "push", origin)
}

// The user's own notes go to Zotero once, as child notes of the paper's item,
// and the sync does not bring them back as copies.
func TestOwnNotesArePushedOnceAndNotSyncedBack(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	f.remote.put("AAAA1111", attention())
	_, err := f.syncer.Run(ctx, f.ann)
	require.NoError(t, err)
	id := f.paperOf(t, f.ann, "AAAA1111")
	_, err = f.pool.Exec(ctx, `INSERT INTO paper_notes (user_id, paper_id, body) VALUES ($1, $2, $3)`, f.ann, id,
		"Section 3 <is> the key.\nCompare with RNNs.")
	require.NoError(t, err)
	projects := []ProjectPapers{{Name: "Thesis", Papers: []uuid.UUID{id}}}

	rep, err := f.syncer.Push(ctx, f.ann, projects)
	require.NoError(t, err)
	require.Equal(t, 1, rep.Notes)
	require.Len(t, f.remote.written, 1)
	require.Equal(t, "AAAA1111", f.remote.written[0].ParentItemKey)
	require.Equal(t, "<p>Section 3 &lt;is&gt; the key.</p><p>Compare with RNNs.</p>", f.remote.written[0].HTML)

	rep, err = f.syncer.Push(ctx, f.ann, projects)
	require.NoError(t, err)
	require.Zero(t, rep.Notes, "pushed once")
	require.Len(t, f.remote.written, 1)

	_, err = f.syncer.Run(ctx, f.ann)
	require.NoError(t, err)
	require.Equal(t, counts{library: 1, links: 1, refNotes: 0, ownNotes: 1, papers: 1}, f.counts(t, f.ann),
		"the pushed note is Ann's own, not a second copy from Zotero")
}
