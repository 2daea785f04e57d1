package benchhttp

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/lectern-research/lectern/host/internal/pgembed"
	"github.com/lectern-research/lectern/host/internal/store"
)

// Goals of the load test (issue 23 item 3), on the 2-core machine.
const (
	readGoal  = 150 * time.Millisecond
	writeGoal = 300 * time.Millisecond
)

// loadFixture is what the load test reads from the seeded database before it
// starts: the users' ids and Pulse decks, and papers for the paper pages.
type loadFixture struct {
	userIDs []uuid.UUID
	decks   [][]string
	papers  []string
}

// readLoadFixture reads users 0..n-1's ids and decks, and 2,000 papers of the
// shared corpus. It first moves each user's seeded Pulse deck to today (a cache
// seeded more than a month ago would no longer count as the user's deck).
func readLoadFixture(ctx context.Context, pool *pgxpool.Pool, n int) (*loadFixture, error) {
	if _, err := pool.Exec(ctx, `
		UPDATE pulse_decks d SET deck_date = current_date
		 WHERE d.deck_date < current_date
		   AND NOT EXISTS (SELECT 1 FROM pulse_decks o WHERE o.user_id = d.user_id AND o.deck_date = current_date)`); err != nil {
		return nil, fmt.Errorf("move the Pulse decks to today: %w", err)
	}
	f := &loadFixture{userIDs: make([]uuid.UUID, n), decks: make([][]string, n)}
	for i := range n {
		if err := pool.QueryRow(ctx, `SELECT id FROM users WHERE email = $1`, userEmail(i)).Scan(&f.userIDs[i]); err != nil {
			return nil, fmt.Errorf("read the id of %s: %w", userEmail(i), err)
		}
		rows, err := pool.Query(ctx, `SELECT paper_id::text FROM pulse_cards WHERE user_id = $1 ORDER BY rank`, f.userIDs[i])
		if err != nil {
			return nil, fmt.Errorf("read the Pulse deck of %s: %w", userEmail(i), err)
		}
		for rows.Next() {
			var p string
			if err := rows.Scan(&p); err != nil {
				rows.Close()
				return nil, err
			}
			f.decks[i] = append(f.decks[i], p)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, err
		}
		if len(f.decks[i]) == 0 {
			return nil, fmt.Errorf("%s has no Pulse deck: reseed (--reseed)", userEmail(i))
		}
	}
	rows, err := pool.Query(ctx, `SELECT id::text FROM papers WHERE source = 'bench' ORDER BY md5(id::text) LIMIT 2000`)
	if err != nil {
		return nil, fmt.Errorf("read papers for the paper pages: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var p string
		if err := rows.Scan(&p); err != nil {
			return nil, err
		}
		f.papers = append(f.papers, p)
	}
	return f, rows.Err()
}

// LoadLevel is one level of the load test: what its users got, and what the
// check after it found.
type LoadLevel struct {
	Users    int
	Duration time.Duration
	rec      *recorder
	Check    WriteCheck
}

// runUsers runs n virtual users for d (users beyond the signed-in sessions share
// a seeded user, each with its own loop) and returns what they got; the requests
// under way at the end are finished and counted.
func runUsers(ctx context.Context, pool *pgxpool.Pool, base string, fx *loadFixture, cookies []string, n int, d time.Duration, think func(*rand.Rand) time.Duration, seed uint64) *LoadLevel {
	env := &loadEnv{
		base: base,
		// One keep-alive connection per user at most, as a browser keeps a few.
		client: &http.Client{Timeout: 60 * time.Second, Transport: &http.Transport{
			MaxIdleConnsPerHost: n, MaxConnsPerHost: n, IdleConnTimeout: 90 * time.Second,
		}},
		corpus: newCorpus(),
		papers: fx.papers,
		nonce:  strconv.FormatInt(time.Now().UnixNano(), 36),
		ledger: newLedger(),
		rec:    newRecorder(),
		pool:   pool,
	}
	total := 0
	for _, a := range userActions {
		total += a.Weight
	}
	lctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	start := time.Now()
	var wg sync.WaitGroup
	for i := range n {
		user := i % len(cookies)
		u := &vuser{env: env, n: i, user: user, cookie: cookies[user], deck: fx.decks[user],
			rng: rand.New(rand.NewPCG(seed, uint64(i)))}
		wg.Go(func() { u.live(lctx, userActions, total, think) })
	}
	wg.Wait()
	lv := &LoadLevel{Users: n, Duration: time.Since(start), rec: env.rec}
	env.rec.close()
	lv.Check = checkWrites(ctx, env, fx)
	env.client.CloseIdleConnections()
	return lv
}

// uniformThink draws a think time uniformly from [lo, hi].
func uniformThink(lo, hi time.Duration) func(*rand.Rand) time.Duration {
	return func(rng *rand.Rand) time.Duration {
		return lo + time.Duration(rng.Int64N(int64(hi-lo)+1))
	}
}

// WriteCheck is what the check after a level found of the writes the host
// acknowledged.
type WriteCheck struct {
	Reviews, ReviewsStored int
	Ratings, RatingsStored int
	Uploads, UploadsRead   int
	// UploadTrouble says, for an upload whose ingest did not succeed, how it ended.
	UploadTrouble []string
	// Err is a check that could not run.
	Err error
}

// Lost is how many acknowledged writes the database does not hold.
func (c WriteCheck) Lost() int {
	return c.Reviews - c.ReviewsStored + c.Ratings - c.RatingsStored + c.Uploads - c.UploadsRead
}

// checkWrites looks for every acknowledged write: each review by its id in
// review_logs; each rating as the user's Pulse feedback on the paper, carrying a
// reason this run sent for that user and paper; each upload's ingest job, which
// must end succeeded (waited for up to 5 minutes).
func checkWrites(ctx context.Context, env *loadEnv, fx *loadFixture) WriteCheck {
	l := env.ledger
	c := WriteCheck{Reviews: len(l.reviews), Ratings: len(l.ratings), Uploads: len(l.uploads)}
	pool := env.pool
	if pool == nil {
		c.Err = fmt.Errorf("no database to check against")
		return c
	}
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM review_logs WHERE id = ANY($1::uuid[])`, l.reviews).Scan(&c.ReviewsStored); err != nil {
		c.Err = fmt.Errorf("count the stored reviews: %w", err)
		return c
	}
	users, papers := make([]uuid.UUID, 0, len(l.ratings)), make([]string, 0, len(l.ratings))
	for k := range l.ratings {
		users, papers = append(users, fx.userIDs[k.user]), append(papers, k.paper)
	}
	rows, err := pool.Query(ctx, `
		SELECT f.user_id, f.paper_id::text, coalesce(f.reason, '')
		  FROM recommendation_feedback f
		  JOIN unnest($1::uuid[], $2::uuid[]) AS k(u, p) ON f.user_id = k.u AND f.paper_id = k.p
		 WHERE f.source = 'pulse_thumbs'`, users, papers)
	if err != nil {
		c.Err = fmt.Errorf("read the stored ratings: %w", err)
		return c
	}
	index := map[uuid.UUID]int{}
	for i, id := range fx.userIDs {
		index[id] = i
	}
	for rows.Next() {
		var u uuid.UUID
		var paper, reason string
		if err := rows.Scan(&u, &paper, &reason); err != nil {
			rows.Close()
			c.Err = err
			return c
		}
		if slices.Contains(l.ratings[ratingKey{index[u], paper}], reason) {
			c.RatingsStored++
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		c.Err = err
		return c
	}
	c.UploadsRead, c.UploadTrouble = waitUploads(ctx, env, l.uploads)
	return c
}

// waitUploads waits for each acknowledged upload's ingest job to end and returns
// how many succeeded, and how the others ended.
func waitUploads(ctx context.Context, env *loadEnv, uploads []ackedUpload) (int, []string) {
	srv := &server{base: env.base}
	wctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	read := 0
	var trouble []string
	for _, up := range uploads {
		state, err := srv.waitJob(wctx, strconv.FormatInt(up.job, 10), up.cookie)
		switch {
		case err != nil:
			trouble = append(trouble, fmt.Sprintf("job %d: %v", up.job, err))
		case state != "succeeded":
			trouble = append(trouble, fmt.Sprintf("job %d ended %s", up.job, state))
		default:
			read++
		}
	}
	return read, trouble
}

// print writes the level as a table that can be pasted into docs/benchmarks.md:
// per route, then reads, writes and overall; the answers by status; and the
// check of the writes.
func (lv *LoadLevel) print(w io.Writer) {
	fmt.Fprintf(w, "\n%d users, %s:\n", lv.Users, lv.Duration.Round(time.Second))
	fmt.Fprintln(w, "| route | kind | weight | requests | req/s | p50 ms | p95 ms | p99 ms | 2xx | 4xx | 5xx | no answer |")
	fmt.Fprintln(w, "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	secs := lv.Duration.Seconds()
	row := func(name, kind, weight string, m *vegeta.Metrics, codes map[uint16]int) {
		var ok, c4, c5, none int
		for code, n := range codes {
			switch {
			case code >= 200 && code < 300:
				ok += n
			case code >= 400 && code < 500:
				c4 += n
			case code >= 500:
				c5 += n
			default:
				none += n
			}
		}
		fmt.Fprintf(w, "| %s | %s | %s | %d | %.1f | %.1f | %.1f | %.1f | %d | %d | %d | %d |\n", name, kind, weight,
			m.Requests, float64(m.Requests)/secs, ms(m.Latencies.P50), ms(m.Latencies.P95), ms(m.Latencies.P99), ok, c4, c5, none)
	}
	r := lv.rec
	readCodes, writeCodes, allCodes := map[uint16]int{}, map[uint16]int{}, map[uint16]int{}
	for _, a := range userActions {
		m, ok := r.routes[a.Name]
		if !ok {
			m = &vegeta.Metrics{}
		}
		kind := "read"
		if a.Write {
			kind = "write"
		}
		row(a.Name, kind, strconv.Itoa(a.Weight), m, r.statuses[a.Name])
		for code, n := range r.statuses[a.Name] {
			allCodes[code] += n
			if a.Write {
				writeCodes[code] += n
			} else {
				readCodes[code] += n
			}
		}
	}
	row("**reads**", "", "", r.reads, readCodes)
	row("**writes**", "", "", r.writes, writeCodes)
	row("**overall**", "", "100", r.all, allCodes)
	for _, key := range sortedKeys(r.errors) {
		fmt.Fprintf(w, "  %s, e.g. %q\n", key, r.errors[key])
	}
	c := lv.Check
	fmt.Fprintf(w, "writes acknowledged and found afterwards: reviews %d of %d, Pulse ratings %d of %d (user and paper pairs), uploads read %d of %d; lost: %d\n",
		c.ReviewsStored, c.Reviews, c.RatingsStored, c.Ratings, c.UploadsRead, c.Uploads, c.Lost())
	for _, t := range c.UploadTrouble {
		fmt.Fprintf(w, "  upload: %s\n", t)
	}
	if c.Err != nil {
		fmt.Fprintf(w, "  the check of the writes failed: %v\n", c.Err)
	}
	fmt.Fprintf(w, "goals: zero 5xx %s; zero lost writes %s; reads p95 %.1f ms < %d ms %s; writes p95 %.1f ms < %d ms %s\n",
		verdict(allCodes5xx(allCodes) == 0), verdict(c.Lost() == 0 && c.Err == nil),
		ms(r.reads.Latencies.P95), readGoal.Milliseconds(), verdict(r.reads.Latencies.P95 < readGoal),
		ms(r.writes.Latencies.P95), writeGoal.Milliseconds(), verdict(r.writes.Latencies.P95 < writeGoal))
}

// Failed5xx is how many answers of the level were 5xx.
func (lv *LoadLevel) Failed5xx() int {
	n := 0
	for _, codes := range lv.rec.statuses {
		n += allCodes5xx(codes)
	}
	return n
}

func allCodes5xx(codes map[uint16]int) int {
	n := 0
	for code, c := range codes {
		if code >= 500 {
			n += c
		}
	}
	return n
}

func verdict(ok bool) string {
	if ok {
		return "met"
	}
	return "NOT MET"
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// printKnee writes each level's overall, read and write p95 and names the knee:
// the first level whose overall p95 is at least twice the lowest level's.
func printKnee(w io.Writer, levels []*LoadLevel) {
	if len(levels) < 2 {
		return
	}
	fmt.Fprintln(w, "\n| users | req/s | reads p95 ms | writes p95 ms | overall p95 ms | × lowest level | 5xx |")
	fmt.Fprintln(w, "|---:|---:|---:|---:|---:|---:|---:|")
	base := levels[0].rec.all.Latencies.P95
	knee := 0
	for _, lv := range levels {
		r := lv.rec
		ratio := float64(r.all.Latencies.P95) / float64(max(base, 1))
		fmt.Fprintf(w, "| %d | %.1f | %.1f | %.1f | %.1f | %.2f | %d |\n", lv.Users, float64(r.all.Requests)/lv.Duration.Seconds(),
			ms(r.reads.Latencies.P95), ms(r.writes.Latencies.P95), ms(r.all.Latencies.P95), ratio, lv.Failed5xx())
		if knee == 0 && ratio >= 2 {
			knee = lv.Users
		}
	}
	if knee == 0 {
		fmt.Fprintf(w, "knee: not reached (no level's p95 doubled against %d users)\n", levels[0].Users)
		return
	}
	fmt.Fprintf(w, "knee: %d users (the first level whose p95 is twice or more that of %d users)\n", knee, levels[0].Users)
}

// runLoad is --mix load: it signs in as many seeded users as the largest level
// has virtual users (at most SeededUsers), warms up, then runs each level and
// checks its writes, printing a table per level and the knee.
func runLoad(ctx context.Context, o options, cluster *pgembed.Cluster, srv *server, stdout io.Writer, log *slog.Logger) error {
	n := min(slices.Max(o.users), SeededUsers)
	log.Info("signing the load test's users in", "users", n)
	cookies, err := srv.signIn(ctx, n)
	if err != nil {
		return err
	}
	pool, err := store.Open(ctx, cluster.ConnString("lectern"))
	if err != nil {
		return err
	}
	defer pool.Close()
	fx, err := readLoadFixture(ctx, pool, n)
	if err != nil {
		return err
	}
	printLoadHeader(stdout, o)
	// The first passage search loads the vector store's shared partition: start-up
	// work, not load.
	if err := srv.firstSearches(ctx, newCorpus(), cookies[:min(len(cookies), Users)]); err != nil {
		return err
	}
	think := uniformThink(o.thinkMin, o.thinkMax)
	if o.warmup > 0 {
		lv := runUsers(ctx, pool, srv.base, fx, cookies, o.users[0], o.warmup, think, 1)
		fmt.Fprintf(stdout, "warm-up: %d users for %s, %d requests, %d 5xx\n", o.users[0], o.warmup, lv.rec.all.Requests, lv.Failed5xx())
	}
	var levels []*LoadLevel
	for i, users := range o.users {
		fmt.Fprintf(stdout, "\nload average before: %s", loadAverage())
		lv := runUsers(ctx, pool, srv.base, fx, cookies, users, o.duration, think, uint64(i+2))
		lv.print(stdout)
		fmt.Fprintf(stdout, "load average after: %s", loadAverage())
		levels = append(levels, lv)
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
	printKnee(stdout, levels)
	return nil
}

// printLoadHeader says what the load test does on what.
func printLoadHeader(w io.Writer, o options) {
	version := "unknown"
	if out, err := exec.Command(o.binary, "version").Output(); err == nil {
		version = strings.TrimSpace(strings.SplitN(string(out), "\n", 2)[0])
	}
	fmt.Fprintf(w, "bench-http --mix load: %s\nhost: %s; %d CPUs (GOMAXPROCS %d, %s), %s of memory; the load generator runs on the same machine\n",
		seedVersion, version, runtime.NumCPU(), runtime.GOMAXPROCS(0), procField("/proc/cpuinfo", "model name"), memTotal())
	fmt.Fprintf(w, "virtual users: one action, then a think time uniform in [%s, %s]; %s per level; actions (weight):",
		o.thinkMin, o.thinkMax, o.duration)
	for _, a := range userActions {
		fmt.Fprintf(w, " %s %d;", a.Name, a.Weight)
	}
	fmt.Fprintln(w)
}

// procField is the value of the first "name: value" line of a /proc file named
// name, or "unknown".
func procField(path, name string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return "unknown"
	}
	for _, line := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if ok && strings.TrimSpace(k) == name {
			return strings.TrimSpace(v)
		}
	}
	return "unknown"
}

// memTotal is the machine's memory in GiB, from /proc/meminfo.
func memTotal() string {
	kb, err := strconv.ParseFloat(strings.TrimSuffix(procField("/proc/meminfo", "MemTotal"), " kB"), 64)
	if err != nil {
		return "unknown"
	}
	return fmt.Sprintf("%.0f GiB", kb/(1<<20))
}
