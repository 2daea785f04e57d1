package search

import (
	"context"
	"errors"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/lectern-research/lectern/host/internal/dbtest"
	"github.com/lectern-research/lectern/sdk/paper"
	"github.com/lectern-research/lectern/sdk/protocol"
	"github.com/lectern-research/lectern/sdk/source"
)

func TestMain(m *testing.M) { dbtest.Main(m) }

// fake is a source answering from a fixed list, or failing, or hanging.
type fake struct {
	papers []paper.Paper
	last   atomic.Pointer[source.SearchRequest]
	err    error
	hang   bool
	delay  time.Duration
	calls  atomic.Int32
	took   atomic.Int64 // nanoseconds the last call really took
}

func (f *fake) Search(ctx context.Context, req *source.SearchRequest) (*source.Page, error) {
	f.calls.Add(1)
	f.last.Store(req)
	start := time.Now()
	defer func() { f.took.Store(int64(time.Since(start))) }()
	if f.hang {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	if f.delay > 0 {
		select {
		case <-time.After(f.delay):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	if f.err != nil {
		return nil, f.err
	}
	return &source.Page{Papers: f.papers}, nil
}

func cited(n int64) *int64 { return &n }

type bundle struct {
	svc  *Service
	pool *pgxpool.Pool
	user uuid.UUID
	srcs map[string]*fake
}

func setup(t *testing.T, srcs map[string]*fake) *bundle {
	t.Helper()
	pool := dbtest.NewDB(t)
	var user uuid.UUID
	require.NoError(t, pool.QueryRow(context.Background(), `INSERT INTO users (email) VALUES ('ann@example.org') RETURNING id`).Scan(&user))
	var names []Named
	for _, n := range []string{"alpha", "beta", "broken", "slow"} {
		if f, ok := srcs[n]; ok {
			names = append(names, Named{Name: n, Searcher: f})
		}
	}
	svc := New(pool, func() []Named { return names })
	svc.timeout = 300 * time.Millisecond
	return &bundle{svc: svc, pool: pool, user: user, srcs: srcs}
}

var (
	attention = paper.Paper{Title: "Attention Is All You Need", IDs: paper.IDs{ArXivID: "1706.03762v5"},
		Published: paper.Date{Year: 2017, Precision: paper.PrecisionYear}, Source: "alpha"}
	attentionOA = paper.Paper{Title: "Attention is all you need", IDs: paper.IDs{DOI: "10.48550/ARXIV.1706.03762", ArXivID: "1706.03762", OpenAlexID: "W2963403868"},
		Abstract: "The dominant sequence transduction models...", CitationCount: cited(100000),
		Published: paper.Date{Year: 2017, Month: 6, Day: 12, Precision: paper.PrecisionDay}, Source: "beta"}
	bert = paper.Paper{Title: "BERT: Pre-training of Deep Bidirectional Transformers", IDs: paper.IDs{DOI: "10.18653/v1/N19-1423"},
		Published: paper.Date{Year: 2019, Precision: paper.PrecisionYear}, Source: "beta"}
	transformerSurvey = paper.Paper{Title: "A Survey of Transformers", IDs: paper.IDs{ArXivID: "2106.04554"}, Source: "alpha",
		Published: paper.Date{Year: 2021, Precision: paper.PrecisionYear}}
)

func TestSearchMergesAndReportsFailedSources(t *testing.T) {
	t.Parallel()
	b := setup(t, map[string]*fake{
		"alpha":  {papers: []paper.Paper{transformerSurvey, attention}},
		"beta":   {papers: []paper.Paper{attentionOA, bert}},
		"broken": {err: &protocol.Error{Code: protocol.CodeUnavailable, Message: "upstream 503"}},
	})
	resp, err := b.svc.Search(context.Background(), b.user, Params{Query: "attention transformers"})
	require.NoError(t, err)
	require.True(t, resp.Partial)

	require.Len(t, resp.Results, 3, "the two copies of Attention are one result")
	top := resp.Results[0]
	require.Equal(t, "Attention Is All You Need", top.Title, "found by both sources, it ranks first")
	require.ElementsMatch(t, []string{"alpha", "beta"}, top.Sources)
	require.Equal(t, "10.48550/arxiv.1706.03762", top.DOI)
	require.Equal(t, "1706.03762", top.ArxivID)
	require.Equal(t, 5, top.ArxivVersion)
	require.Equal(t, "day", top.DatePrecision, "the more precise date wins")
	require.NotEmpty(t, top.Abstract)
	require.False(t, top.Overlay.InLibrary)

	reports := map[string]SourceReport{}
	for _, r := range resp.Sources {
		reports[r.Name] = r
	}
	require.Equal(t, StatusOK, reports["alpha"].Status)
	require.Equal(t, 2, reports["beta"].Results)
	require.Equal(t, StatusFailed, reports["broken"].Status)
	require.Equal(t, "the source could not be reached", reports["broken"].Error, "the plugin's own text stays out of the answer")

	var failures, successes int
	var lastErr string
	require.NoError(t, b.pool.QueryRow(context.Background(), `
		SELECT failures, successes, last_error FROM pulse_source_health WHERE user_id = $1 AND source = 'broken'`, b.user).
		Scan(&failures, &successes, &lastErr))
	require.Equal(t, 1, failures)
	require.Zero(t, successes)
	require.Equal(t, "the source could not be reached", lastErr)

	var n int
	require.NoError(t, b.pool.QueryRow(context.Background(), `SELECT count(*) FROM papers`).Scan(&n))
	require.Equal(t, 3, n, "results join the corpus once each")
}

func TestSearchAnswersWithinItsDeadline(t *testing.T) {
	t.Parallel()
	b := setup(t, map[string]*fake{"alpha": {papers: []paper.Paper{attention}}, "slow": {hang: true}})
	resp, err := b.svc.Search(context.Background(), b.user, Params{Query: "attention"})
	require.NoError(t, err)
	require.Len(t, resp.Results, 1, "the answer comes from the source that answered")
	for _, r := range resp.Sources {
		if r.Name == "slow" {
			require.Equal(t, StatusTimeout, r.Status)
		}
	}
	var status string
	require.NoError(t, b.pool.QueryRow(context.Background(), `SELECT last_status FROM pulse_source_health WHERE user_id = $1 AND source = 'slow'`, b.user).Scan(&status))
	require.Equal(t, "timeout", status)
}

func TestFailingSourceBacksOffAndRecovers(t *testing.T) {
	t.Parallel()
	b := setup(t, map[string]*fake{"alpha": {papers: []paper.Paper{attention}}, "broken": {err: errors.New("connection refused")}})
	ctx := context.Background()
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	b.svc.now = func() time.Time { return now }
	for range backoffAfter {
		_, err := b.svc.Search(ctx, b.user, Params{Query: "attention"})
		require.NoError(t, err)
	}
	require.EqualValues(t, backoffAfter, b.srcs["broken"].calls.Load())

	resp, err := b.svc.Search(ctx, b.user, Params{Query: "attention"})
	require.NoError(t, err)
	require.EqualValues(t, backoffAfter, b.srcs["broken"].calls.Load(), "a source in backoff is not asked")
	var skipped SourceReport
	for _, r := range resp.Sources {
		if r.Name == "broken" {
			skipped = r
		}
	}
	require.Equal(t, StatusBackoff, skipped.Status)
	require.Equal(t, now.Add(baseBackoff), skipped.BackoffUntil.UTC())

	now = now.Add(time.Minute)
	b.srcs["broken"].err = nil
	_, err = b.svc.Search(ctx, b.user, Params{Query: "attention"})
	require.NoError(t, err)
	var streak int
	var backoff *time.Time
	require.NoError(t, b.pool.QueryRow(ctx, `SELECT consecutive_failures, backoff_until FROM pulse_source_health WHERE user_id = $1 AND source = 'broken'`, b.user).Scan(&streak, &backoff))
	require.Zero(t, streak, "a success ends the streak")
	require.Nil(t, backoff)
}

func TestRateLimitBacksOffForRetryAfter(t *testing.T) {
	t.Parallel()
	b := setup(t, map[string]*fake{"broken": {err: &protocol.Error{Code: protocol.CodeRateLimited, RetryAfter: 90 * time.Second,
		Message: "openalex: 429 Too Many Requests from https://api.openalex.org/works?mailto=ann@example.org"}}})
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	b.svc.now = func() time.Time { return now }
	resp, err := b.svc.Search(context.Background(), b.user, Params{Query: "x"})
	require.NoError(t, err)
	require.Equal(t, StatusLimited, resp.Sources[0].Status)
	require.Equal(t, "the source is limiting requests", resp.Sources[0].Error, "in words, not the plugin's text")
	var until time.Time
	require.NoError(t, b.pool.QueryRow(context.Background(), `SELECT backoff_until FROM pulse_source_health WHERE user_id = $1`, b.user).Scan(&until))
	require.Equal(t, now.Add(90*time.Second), until.UTC())
}

func TestUnknownSourcesAndNoSources(t *testing.T) {
	t.Parallel()
	b := setup(t, map[string]*fake{"alpha": {papers: []paper.Paper{attention}}})
	resp, err := b.svc.Search(context.Background(), b.user, Params{Query: "x", Sources: []string{"alpha", "nosuch"}})
	require.NoError(t, err)
	require.True(t, resp.Partial)
	require.Len(t, resp.Results, 1)

	none := setup(t, map[string]*fake{})
	_, err = none.svc.Search(context.Background(), none.user, Params{Query: "x"})
	require.ErrorIs(t, err, ErrNoSources)
}

// BenchmarkFanOutOverhead measures what the fan-out, merge, health writes and corpus
// upsert add to the slowest source (80 ms here, four others at 20-60 ms, 25 papers
// each): the goal is under 10 ms.
func BenchmarkFanOutOverhead(b *testing.B) {
	pool := dbtest.NewDB(b)
	var user uuid.UUID
	require.NoError(b, pool.QueryRow(context.Background(), `INSERT INTO users (email) VALUES ('bench@example.org') RETURNING id`).Scan(&user))
	var names []Named
	var fakes []*fake
	for i, d := range []time.Duration{20, 35, 50, 60, 80} {
		var ps []paper.Paper
		for j := range 25 {
			ps = append(ps, paper.Paper{Title: "Benchmark paper number " + string(rune('a'+i)) + " " + time.Duration(j).String(),
				IDs:       paper.IDs{DOI: "10.9999/bench." + string(rune('a'+i)) + "." + time.Duration(j).String()},
				Published: paper.Date{Year: 2020, Precision: paper.PrecisionYear}})
		}
		f := &fake{papers: ps, delay: d * time.Millisecond}
		fakes = append(fakes, f)
		names = append(names, Named{Name: "s" + string(rune('a'+i)), Searcher: f})
	}
	svc := New(pool, func() []Named { return names })
	var overheads []time.Duration
	for b.Loop() {
		start := time.Now()
		if _, err := svc.Search(context.Background(), user, Params{Query: "benchmark paper", Limit: 25}); err != nil {
			b.Fatal(err)
		}
		total := time.Since(start)
		var slowest time.Duration
		for _, f := range fakes {
			slowest = max(slowest, time.Duration(f.took.Load()))
		}
		overheads = append(overheads, total-slowest)
	}
	slices.Sort(overheads)
	b.ReportMetric(float64(overheads[len(overheads)/2])/float64(time.Millisecond), "p50_overhead_ms")
	b.ReportMetric(float64(overheads[len(overheads)*95/100])/float64(time.Millisecond), "p95_overhead_ms")
}

// getter is a source that knows papers by DOI.
type getter struct {
	fake
	byDOI map[string]paper.Paper
	err   error
}

func (g *getter) Get(_ context.Context, req *source.GetRequest) (*source.GetResponse, error) {
	if g.err != nil {
		return nil, g.err
	}
	p, ok := g.byDOI[req.IDs.DOI]
	if !ok {
		return nil, &protocol.Error{Code: protocol.CodeNotFound}
	}
	return &source.GetResponse{Paper: p}, nil
}

func TestResolveAsksTheSourcesInTurn(t *testing.T) {
	t.Parallel()
	pool := dbtest.NewDB(t)
	ctx := context.Background()
	var user uuid.UUID
	require.NoError(t, pool.QueryRow(ctx, `INSERT INTO users (email) VALUES ('ann@example.org') RETURNING id`).Scan(&user))
	down := &getter{err: &protocol.Error{Code: protocol.CodeUnavailable, Message: "503"}}
	knows := &getter{byDOI: map[string]paper.Paper{"10.18653/v1/n19-1423": bert}}
	svc := New(pool, func() []Named {
		return []Named{{Name: "down", Searcher: down}, {Name: "plain", Searcher: &fake{}}, {Name: "knows", Searcher: knows}}
	})

	id, err := svc.Resolve(ctx, user, "10.18653/v1/n19-1423", "")
	require.NoError(t, err)
	var title, source string
	require.NoError(t, pool.QueryRow(ctx, `SELECT title, source FROM papers WHERE id = $1`, id).Scan(&title, &source))
	require.Equal(t, bert.Title, title)
	require.Equal(t, "knows", source)
	var failures int
	require.NoError(t, pool.QueryRow(ctx, `SELECT failures FROM pulse_source_health WHERE user_id = $1 AND source = 'down'`, user).Scan(&failures))
	require.Equal(t, 1, failures, "the failing source's health shows it")

	_, err = svc.Resolve(ctx, user, "10.1000/nobody-knows", "")
	require.ErrorIs(t, err, ErrUnresolved)
	require.ErrorIs(t, err, ErrSourcesUnreachable, "the source that was down might have known it")

	svc = New(pool, func() []Named { return []Named{{Name: "knows", Searcher: knows}} })
	_, err = svc.Resolve(ctx, user, "10.1000/nobody-knows", "")
	require.ErrorIs(t, err, ErrUnresolved)
	require.NotErrorIs(t, err, ErrSourcesUnreachable, "every source answered")
}

// hanging is a getter that answers only when its context ends.
type hanging struct{ fake }

func (h *hanging) Get(ctx context.Context, _ *source.GetRequest) (*source.GetResponse, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}

// A source that hangs makes Resolve answer at the search deadline that it could
// not reach the sources, and its health is written although that deadline has
// passed.
func TestResolveAnswersInTimeWhenTheSourcesHang(t *testing.T) {
	t.Parallel()
	pool := dbtest.NewDB(t)
	ctx := context.Background()
	var user uuid.UUID
	require.NoError(t, pool.QueryRow(ctx, `INSERT INTO users (email) VALUES ('ann@example.org') RETURNING id`).Scan(&user))
	svc := New(pool, func() []Named { return []Named{{Name: "stuck", Searcher: &hanging{}}} })
	svc.timeout = 300 * time.Millisecond

	start := time.Now()
	_, err := svc.Resolve(ctx, user, "10.1000/anything", "")
	require.ErrorIs(t, err, ErrSourcesUnreachable)
	require.NotErrorIs(t, err, ErrUnresolved, "nobody said the paper does not exist")
	require.Less(t, time.Since(start), 3*time.Second, "answers at the search deadline")

	var failures int
	var status string
	require.NoError(t, pool.QueryRow(ctx, `SELECT failures, last_status FROM pulse_source_health WHERE user_id = $1 AND source = 'stuck'`, user).Scan(&failures, &status))
	require.Equal(t, 1, failures)
	require.Equal(t, "timeout", status)
}

// Pulse's discovery: the filters and order reach the sources as they are, and the
// results are instance-level discoveries, in nobody's library and credited to
// nobody, while the source health is still the caller's.
func TestInstanceDiscoveryCreditsNobody(t *testing.T) {
	t.Parallel()
	b := setup(t, map[string]*fake{"alpha": {papers: []paper.Paper{transformerSurvey}}})
	ctx := context.Background()
	from := paper.Date{Year: 2026, Month: 11, Day: 20, Precision: paper.PrecisionDay}
	resp, err := b.svc.Search(ctx, b.user, Params{Query: "transformers", Instance: true, Sort: source.SortNewest,
		Filters: source.Filters{From: from, Categories: []string{"cs.CL"}}})
	require.NoError(t, err)
	require.Len(t, resp.Results, 1)
	req := b.srcs["alpha"].last.Load()
	require.Equal(t, source.SortNewest, req.Sort)
	require.Equal(t, from, req.Filters.From)
	require.Equal(t, []string{"cs.CL"}, req.Filters.Categories)
	var by *uuid.UUID
	var inLibrary bool
	require.NoError(t, b.pool.QueryRow(ctx, `SELECT discovered_by, EXISTS (SELECT 1 FROM user_library WHERE paper_id = p.id)
		FROM papers p WHERE id = $1`, resp.Results[0].ID).Scan(&by, &inLibrary))
	require.Nil(t, by)
	require.False(t, inLibrary)
	var ok int
	require.NoError(t, b.pool.QueryRow(ctx, `SELECT successes FROM pulse_source_health WHERE user_id = $1 AND source = 'alpha'`, b.user).Scan(&ok))
	require.Equal(t, 1, ok)
}
