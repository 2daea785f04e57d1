package refsync

import (
	"context"
	"errors"
	"strconv"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/lectern-research/lectern/host/internal/papers"
	"github.com/lectern-research/lectern/sdk/paper"
	"github.com/lectern-research/lectern/sdk/protocol"
	"github.com/lectern-research/lectern/sdk/refmanager"
)

// withGroups sets the instance up to sync the group libraries.
func (f *fixture) withGroups(libs ...string) {
	f.syncer.Instance = func(context.Context) (InstanceAccount, error) {
		return InstanceAccount{Credentials: map[string]string{"api_key": "admin"}, Libraries: libs}, nil
	}
}

// instanceCounts are the instance's rows: links, papers, and every user's
// library rows and notes (which the instance's sync never writes).
type instanceCounts struct{ links, papers, shared, libraries, notes int }

func (f *fixture) instanceCounts(t *testing.T) instanceCounts {
	t.Helper()
	var c instanceCounts
	require.NoError(t, f.pool.QueryRow(context.Background(), `
		SELECT (SELECT count(*) FROM refmanager_instance_links),
		       (SELECT count(*) FROM papers),
		       (SELECT count(*) FROM papers WHERE discovered_by IS NULL AND visibility = 'public'),
		       (SELECT count(*) FROM user_library),
		       (SELECT count(*) FROM paper_notes)`).Scan(&c.links, &c.papers, &c.shared, &c.libraries, &c.notes))
	return c
}

func TestTheInstanceSyncBringsGroupItemsAsInstanceDiscoveriesInNobodysLibrary(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	f.withGroups("groups/42")
	f.remote.put("AAAA1111", attention(), refmanager.Note{Key: "N1", HTML: "a group member's note", Version: 1})
	f.remote.put("BBBB2222", bert())

	reps, err := f.syncer.RunInstance(ctx)
	require.NoError(t, err)
	require.Equal(t, []Report{{LibraryID: "groups/42", Added: 2, Version: 2}}, reps)
	first := f.instanceCounts(t)
	require.Equal(t, instanceCounts{links: 2, papers: 2, shared: 2}, first,
		"two shared papers with discovered_by NULL; no library rows, no notes")

	visible, err := papers.New(f.pool).Visible(ctx, f.bob, f.instancePaperOf(t, "AAAA1111"))
	require.NoError(t, err)
	require.True(t, visible, "an instance-level discovery is everyone's to find")

	reps, err = f.syncer.RunInstance(ctx)
	require.NoError(t, err)
	require.Equal(t, []Report{{LibraryID: "groups/42", Version: 2}}, reps, "nothing changed, nothing done")
	require.Equal(t, first, f.instanceCounts(t))

	// Bob saves the attention paper; then it is deleted from the group.
	_, err = f.pool.Exec(ctx, `INSERT INTO user_library (user_id, paper_id, added_via) VALUES ($1, $2, 'search_save')`,
		f.bob, f.instancePaperOf(t, "AAAA1111"))
	require.NoError(t, err)
	f.remote.remove("AAAA1111")
	reps, err = f.syncer.RunInstance(ctx)
	require.NoError(t, err)
	require.Equal(t, 1, reps[0].Removed)
	require.EqualValues(t, 3, reps[0].Version)
	require.Equal(t, instanceCounts{links: 1, papers: 2, shared: 2, libraries: 1}, f.instanceCounts(t),
		"the group forgot the item; the shared paper stays, in Bob's library too")

	st, err := instanceStatuses(ctx, f.pool)
	require.NoError(t, err)
	require.Len(t, st, 1)
	require.EqualValues(t, 3, st[0].Version)
	require.NotNil(t, st[0].LastOKAt)
	require.Empty(t, st[0].Error)
}

func (f *fixture) instancePaperOf(t *testing.T, key string) uuid.UUID {
	t.Helper()
	var id uuid.UUID
	require.NoError(t, f.pool.QueryRow(context.Background(),
		`SELECT paper_id FROM refmanager_instance_links WHERE item_key = $1`, key).Scan(&id))
	return id
}

func TestTheInstanceSyncNeverMergesIntoAUsersPrivateUpload(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	f.withGroups("groups/42")
	var annsUpload uuid.UUID
	err := pgx.BeginFunc(ctx, f.pool, func(tx pgx.Tx) error {
		var err error
		annsUpload, _, err = papers.UpsertForUserTx(ctx, tx, papers.Input{DOI: "10.18653/v1/n19-1423",
			Title: "BERT (Ann's annotated copy)"}, f.ann, "upload")
		return err
	})
	require.NoError(t, err)
	f.remote.put("BBBB2222", bert())

	_, err = f.syncer.RunInstance(ctx)
	require.NoError(t, err)
	shared := f.instancePaperOf(t, "BBBB2222")
	require.NotEqual(t, annsUpload, shared, "the group's record is a shared paper of its own")
	var title, visibility string
	require.NoError(t, f.pool.QueryRow(ctx, `SELECT title, visibility FROM papers WHERE id = $1`, annsUpload).Scan(&title, &visibility))
	require.Equal(t, "BERT (Ann's annotated copy)", title)
	require.Equal(t, "private", visibility)
}

func TestTheInstanceSyncIsCappedPerRunAndGoesOnFromWhereItStopped(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	f.withGroups("groups/42")
	for i := range 5 {
		f.remote.put("ITEM000"+strconv.Itoa(i), paper.Paper{Title: "Group paper number " + strconv.Itoa(i)})
	}
	f.syncer.MaxNew = 2
	total := 0
	for run := range 3 {
		reps, err := f.syncer.RunInstance(ctx)
		require.NoError(t, err)
		require.LessOrEqual(t, reps[0].Added, 2)
		require.Equal(t, run < 2, reps[0].Capped, "run %d", run)
		total += reps[0].Added
	}
	require.Equal(t, 5, total)
	require.Equal(t, instanceCounts{links: 5, papers: 5, shared: 5}, f.instanceCounts(t))
}

// refusing fails every call for one library, as Zotero does for a group the key
// may not read.
type refusing struct {
	*remote
	lib string
}

func (r refusing) ItemsSince(ctx context.Context, req *refmanager.ItemsSinceRequest) (*refmanager.ItemsSinceResponse, error) {
	if req.LibraryID == r.lib {
		return nil, protocol.Unauthorized("forbidden")
	}
	return r.remote.ItemsSince(ctx, req)
}

func TestAGroupTheKeyMayNotReadDoesNotStopTheOthers(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	f.withGroups("groups/7", "groups/42")
	f.syncer.Manager = func() (refmanager.Manager, error) { return refusing{f.remote, "groups/7"}, nil }
	f.remote.put("AAAA1111", attention())

	reps, err := f.syncer.RunInstance(ctx)
	require.Error(t, err)
	require.ErrorContains(t, err, "groups/7")
	require.Len(t, reps, 2)
	require.Equal(t, 1, reps[1].Added, "groups/42 synced anyway")
	st, err := instanceStatuses(ctx, f.pool)
	require.NoError(t, err)
	require.Len(t, st, 2)
	require.Equal(t, "groups/42", st[0].LibraryID)
	require.Empty(t, st[0].Error)
	require.Equal(t, "groups/7", st[1].LibraryID)
	require.Equal(t, "Zotero refused the API key for this library: check in Zotero that the key may read it, then save it again.",
		st[1].Error, "the refusal is recorded for the admin, in words, without the plugin's own text")
	require.Nil(t, st[1].LastOKAt)
}

func TestTheInstanceSyncWithNothingSetUpSaysSo(t *testing.T) {
	f := newFixture(t)
	_, err := f.syncer.RunInstance(context.Background())
	require.ErrorIs(t, err, ErrInstanceNotConfigured)
	f.withGroups()
	_, err = f.syncer.RunInstance(context.Background())
	require.True(t, errors.Is(err, ErrInstanceNotConfigured))
}

func TestCleanGroups(t *testing.T) {
	t.Parallel()
	got, msg := cleanGroups([]string{" 42", "groups/7", "42"})
	require.Empty(t, msg)
	require.Equal(t, []string{"42", "7"}, got)
	for _, bad := range [][]string{{"abc"}, {"0"}, {"-3"}, {"042"}, {"1e3"}, {""}} {
		_, msg := cleanGroups(bad)
		require.NotEmpty(t, msg, "%q", bad)
	}
	many := make([]string, MaxInstanceLibraries+1)
	for i := range many {
		many[i] = strconv.Itoa(i + 1)
	}
	_, msg = cleanGroups(many)
	require.Contains(t, msg, "at most")
}
