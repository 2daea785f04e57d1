package app

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lectern-research/lectern/host/internal/search"
	"github.com/lectern-research/lectern/sdk/protocol"
	"github.com/lectern-research/lectern/sdk/source"
)

// unreachableSource fails every lookup as a source does when its host's name
// cannot be resolved.
type unreachableSource struct{ staticSource }

func (unreachableSource) Get(context.Context, *source.GetRequest) (*source.GetResponse, error) {
	return nil, &net.OpError{Op: "dial", Net: "tcp", Err: &net.DNSError{
		Err: "no such host", Name: "api.crossref.org", Server: "10.255.255.53:53", IsNotFound: true}}
}

// Adding a paper by DOI while no source can be reached answers 503 with a sentence
// and Retry-After, not a 500 or a 404, and the resolver's text stays out of it.
func TestAddByDOIWithTheSourcesUnreachable(t *testing.T) {
	t.Parallel()
	b := setupWith(t, nil, func(o *Options) {
		o.Sources = func() []search.Named { return []search.Named{{Name: "crossref", Searcher: unreachableSource{}}} }
	})
	u := b.user(t, "ann@example.org", "user")
	cookie := b.insertSession(t, u.ID, timeIn(24))

	rec := b.do(t, req{method: http.MethodPost, path: "/api/library", cookie: cookie, body: obj{"doi": "10.1000/not-in-the-corpus"}})
	require.Equal(t, http.StatusServiceUnavailable, rec.Code, rec.Body.String())
	require.Equal(t, "sources_unreachable", errorCode(t, rec))
	require.Contains(t, rec.Body.String(), "The paper sources could not be reached; try again later.")
	require.Equal(t, "30", rec.Header().Get("Retry-After"))
	for _, raw := range []string{"lookup", "no such host", "10.255.255.53", "dial"} {
		require.NotContains(t, rec.Body.String(), raw)
	}
	var failures int
	require.NoError(t, b.pool.QueryRow(context.Background(),
		`SELECT failures FROM pulse_source_health WHERE user_id = $1 AND source = 'crossref'`, u.ID).Scan(&failures))
	require.Equal(t, 1, failures, "the failure is recorded in the source's health")
}

// unknowingSource answers every lookup that it does not know the paper, as arXiv
// does, without a request, for a DOI that is not an arXiv one.
type unknowingSource struct{ staticSource }

func (unknowingSource) Get(context.Context, *source.GetRequest) (*source.GetResponse, error) {
	return nil, protocol.NotFound("arxiv: no arXiv identifier")
}

// When one source does not know a DOI and the others cannot be reached, the paper
// is not "not found": a source that was down might know it. The answer says so.
func TestAddByDOIWithSomeSourcesUnreachable(t *testing.T) {
	t.Parallel()
	b := setupWith(t, nil, func(o *Options) {
		o.Sources = func() []search.Named {
			return []search.Named{{Name: "arxiv", Searcher: unknowingSource{}}, {Name: "crossref", Searcher: unreachableSource{}}}
		}
	})
	u := b.user(t, "ann@example.org", "user")
	cookie := b.insertSession(t, u.ID, timeIn(24))

	rec := b.do(t, req{method: http.MethodPost, path: "/api/library", cookie: cookie, body: obj{"doi": "10.1000/not-in-the-corpus"}})
	require.Equal(t, http.StatusServiceUnavailable, rec.Code, rec.Body.String())
	require.Equal(t, "sources_unreachable", errorCode(t, rec))
	require.Contains(t, rec.Body.String(), "Some paper sources could not be reached, and those that answered do not know this paper; try again later.")
	require.Equal(t, "30", rec.Header().Get("Retry-After"))
}

// A card may cite a passage only of a paper its author can see: another user's
// private passage and one that does not exist are both not found, and nothing is
// written.
func TestCardNamingAPassageTheCallerCannotSee(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	alice := seedTenant(t, b, "alice@example.org")
	bob := seedTenant(t, b, "bob@example.org")
	ctx := context.Background()
	chunkOf := func(tn *tenant) string {
		var id string
		require.NoError(t, b.pool.QueryRow(ctx, `SELECT id::text FROM paper_chunks WHERE paper_id = $1`, tn.ids["user_library"]).Scan(&id))
		return id
	}
	cards := func() int {
		var n int
		require.NoError(t, b.pool.QueryRow(ctx, `SELECT count(*) FROM cards WHERE user_id = $1`, bob.user).Scan(&n))
		return n
	}
	before := cards()

	for name, chunk := range map[string]string{
		"another user's private passage": chunkOf(alice),
		"a passage that does not exist":  "0b5f7a52-8d7e-4e0e-9c1a-2f3d4e5f6a7b",
	} {
		rec := b.do(t, req{method: http.MethodPost, path: "/api/cards", cookie: bob.cookie,
			body: obj{"deck_id": bob.ids["decks"], "front": "What?", "chunk_id": chunk}})
		require.Equal(t, http.StatusNotFound, rec.Code, "%s: %s", name, rec.Body.String())
		require.Contains(t, rec.Body.String(), `"field":"chunk_id"`)
	}
	require.Equal(t, before, cards(), "nothing was written")

	own := chunkOf(bob)
	rec := b.do(t, req{method: http.MethodPost, path: "/api/cards", cookie: bob.cookie,
		body: obj{"deck_id": bob.ids["decks"], "front": "What?", "chunk_id": own}})
	require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
	card := decode[obj](t, rec.Body.Bytes())
	require.Equal(t, bob.ids["user_library"], card["paper_id"], "the passage's paper is filled in")

	rec = b.do(t, req{method: http.MethodPost, path: "/api/cards", cookie: bob.cookie,
		body: obj{"deck_id": bob.ids["decks"], "front": "What?", "chunk_id": own, "paper_id": alice.ids["user_library"]}})
	require.Equal(t, http.StatusUnprocessableEntity, rec.Code, rec.Body.String())
}

// The ends of the documented retention range are accepted: the nearest reals to
// 0.70 and 0.99 lie just outside the column's check.
func TestDeckRetentionAtTheEndsOfTheRange(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	u := b.user(t, "ann@example.org", "user")
	cookie := b.insertSession(t, u.ID, timeIn(24))
	for i, ret := range []float64{0.7, 0.99} {
		rec := b.do(t, req{method: http.MethodPost, path: "/api/decks", cookie: cookie,
			body: obj{"name": "deck " + string(rune('a'+i)), "desired_retention": ret}})
		require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
	}
}

// The SMTP host check answers yes or no in words: never the addresses a name
// resolved to, nor the resolver's text.
func TestSMTPHostCheckEchoesNoAddresses(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	u := b.user(t, "ann@example.org", "user")
	cookie := b.insertSession(t, u.ID, timeIn(24))
	put := func(host string) *httptest.ResponseRecorder {
		return b.do(t, req{method: http.MethodPut, path: "/api/settings/config/smtp.host", cookie: cookie, body: obj{"value": host}})
	}

	rec := put("localhost")
	require.Equal(t, http.StatusUnprocessableEntity, rec.Code, rec.Body.String())
	require.Contains(t, rec.Body.String(), "This SMTP host is refused: it points at a loopback address")
	for _, addr := range []string{"127.0.0.1", "::1"} {
		require.NotContains(t, rec.Body.String(), addr)
	}

	rec = put("no-such-relay.invalid")
	require.Equal(t, http.StatusUnprocessableEntity, rec.Code, rec.Body.String())
	require.Contains(t, rec.Body.String(), "This SMTP host could not be found; check its name.")
	for _, raw := range []string{"lookup", "no such host", ":53"} {
		require.NotContains(t, rec.Body.String(), raw)
	}
}
