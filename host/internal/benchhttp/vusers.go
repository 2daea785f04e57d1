package benchhttp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"mime/multipart"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	vegeta "github.com/tsenart/vegeta/v12/lib"
)

// A virtual user of the load test (--mix load) is one signed-in person: their own
// session, their own cards and Pulse deck. It does one action, reads the answer,
// then thinks for a time drawn uniformly from [ThinkMin, ThinkMax] (as Locust's
// between(1, 5) or a k6 script's sleep), and so on until the level ends. The
// load is the number of users, not of connections: a slow answer slows its own
// user down, as it does a person.

// action is one thing a user does, and how often, out of 100.
type action struct {
	Name   string
	Weight int
	// Write is true for actions that change what the host stores; their latency
	// goal is the writes' (docs/benchmarks.md).
	Write bool
	// do sends the action's request(s) and returns what each gave.
	do func(ctx context.Context, u *vuser) []sent
}

// sent is one request a user sent: the route it is counted under and its result.
type sent struct {
	route string
	res   vegeta.Result
}

// userActions is the load test's mix (docs/benchmarks.md, "Load test (issue 23)"):
// reviewing takes the most requests (a review session fetches the due queue and
// answers cards), then reading (paper pages, passage search, feed and library,
// projects), Pulse ratings, questions (within the per-user limit of
// rag.AsksPerMinute) and uploads (within ingest.UploadsPerWindow).
var userActions = []action{
	{"due cards", 20, false, func(ctx context.Context, u *vuser) []sent { return u.dueCards(ctx) }},
	{"review", 20, true, func(ctx context.Context, u *vuser) []sent { return u.review(ctx) }},
	{"paper page", 10, false, func(ctx context.Context, u *vuser) []sent {
		return u.get(ctx, "paper page", "/api/papers/"+u.env.papers[u.rng.IntN(len(u.env.papers))])
	}},
	{"passage search", 12, false, func(ctx context.Context, u *vuser) []sent {
		return u.get(ctx, "passage search", "/api/search/chunks?limit=20&q="+url.QueryEscape(u.env.corpus.query(u.rng)))
	}},
	{"feed page", 8, false, func(ctx context.Context, u *vuser) []sent {
		return u.get(ctx, "feed page", "/api/papers?scope=corpus&limit=20")
	}},
	{"library page", 8, false, func(ctx context.Context, u *vuser) []sent {
		return u.get(ctx, "library page", "/api/papers?scope=library&limit=20&view=all_non_trash")
	}},
	{"projects", 5, false, func(ctx context.Context, u *vuser) []sent {
		return u.get(ctx, "projects", "/api/projects")
	}},
	{"Pulse rating", 10, true, func(ctx context.Context, u *vuser) []sent { return u.rate(ctx) }},
	{"RAG ask", 4, false, func(ctx context.Context, u *vuser) []sent { return u.ask(ctx) }},
	{"upload", 3, true, func(ctx context.Context, u *vuser) []sent { return u.upload(ctx) }},
}

// loadEnv is what every user of a run shares.
type loadEnv struct {
	base   string
	client *http.Client
	corpus *corpus
	// papers are ids of the shared corpus, for paper pages.
	papers []string
	// nonce makes this run's client ids, reasons and uploads its own.
	nonce  string
	ledger *ledger
	rec    *recorder
	// pool is the bench's own connection to the database, for the check of the
	// writes after the level.
	pool *pgxpool.Pool
}

// vuser is one virtual user.
type vuser struct {
	env    *loadEnv
	n      int // the virtual user's number
	user   int // the seeded user it signs in as
	cookie string
	rng    *rand.Rand
	// due are the cards of the last due queue this user fetched, not yet reviewed.
	due []string
	// deck is the user's Pulse deck (paper ids).
	deck []string
	seq  int
}

// live runs the user until ctx ends: a think time first (so users start spread
// over the first think interval, not all at once), then an action, and again.
// A request under way when the level ends is finished and counted.
func (u *vuser) live(ctx context.Context, m []action, total int, think func(*rand.Rand) time.Duration) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(think(u.rng)):
		}
		if ctx.Err() != nil {
			return
		}
		a := pickAction(m, total, u.rng)
		// The request is not cancelled at the level's end: it is finished, as
		// a person's is, and counted.
		for _, s := range a.do(context.WithoutCancel(ctx), u) {
			u.env.rec.add(a, s)
		}
	}
}

func pickAction(m []action, total int, rng *rand.Rand) action {
	n := rng.IntN(total)
	for _, a := range m {
		if n < a.Weight {
			return a
		}
		n -= a.Weight
	}
	return m[len(m)-1]
}

// dueCards fetches the user's due queue and keeps its cards for the reviews.
func (u *vuser) dueCards(ctx context.Context) []sent {
	var page struct {
		Items []struct {
			ID string `json:"id"`
		} `json:"items"`
	}
	s := u.send(ctx, "due cards", http.MethodGet, "/api/reviews/due", "", nil, &page)
	if s.res.Code == http.StatusOK {
		u.due = u.due[:0]
		for _, c := range page.Items {
			u.due = append(u.due, c.ID)
		}
		u.rng.Shuffle(len(u.due), func(i, j int) { u.due[i], u.due[j] = u.due[j], u.due[i] })
	}
	return []sent{s}
}

// review answers the next card of the last due queue (mostly Good, as people
// do); with none left, it fetches the queue first, as the dashboard does.
func (u *vuser) review(ctx context.Context) []sent {
	var out []sent
	if len(u.due) == 0 {
		out = u.dueCards(ctx)
		if len(u.due) == 0 {
			return out
		}
	}
	card := u.due[len(u.due)-1]
	u.due = u.due[:len(u.due)-1]
	rating := []int{3, 3, 3, 3, 3, 3, 2, 4, 1, 3}[u.rng.IntN(10)]
	u.seq++
	clientID := fmt.Sprintf("load-%s-%d-%d", u.env.nonce, u.n, u.seq)
	body, _ := json.Marshal(map[string]any{"card_id": card, "rating": rating, "duration_ms": 2000 + u.rng.IntN(8000), "client_id": clientID})
	var res struct {
		ReviewID string `json:"review_id"`
	}
	s := u.send(ctx, "review", http.MethodPost, "/api/reviews", "application/json", body, &res)
	if s.res.Code >= 200 && s.res.Code < 300 {
		u.env.ledger.review(res.ReviewID)
	}
	return append(out, s)
}

// rate gives a thumb up or down to a paper of the user's Pulse deck, with a
// reason unique to this run, so the check can tell this run's rating from an
// earlier one.
func (u *vuser) rate(ctx context.Context) []sent {
	paper := u.deck[u.rng.IntN(len(u.deck))]
	act := []string{"up", "down"}[u.rng.IntN(2)]
	u.seq++
	reason := fmt.Sprintf("load %s %d %d", u.env.nonce, u.n, u.seq)
	body, _ := json.Marshal(map[string]string{"paper_id": paper, "action": act, "reason": reason})
	s := u.send(ctx, "Pulse rating", http.MethodPost, "/api/pulse/rate", "application/json", body, nil)
	if s.res.Code >= 200 && s.res.Code < 300 {
		u.env.ledger.rating(u.user, paper, reason)
	}
	return []sent{s}
}

// ask asks a question of the whole corpus and reads the answer's stream to its
// end; a stream that ends with an error event counts as failed (status 0).
func (u *vuser) ask(ctx context.Context) []sent {
	q := "What is known about " + u.env.corpus.query(u.rng) + "?"
	body, _ := json.Marshal(map[string]string{"question": q, "scope": "corpus"})
	return []sent{u.send(ctx, "RAG ask", http.MethodPost, "/api/rag/ask", "application/json", body, nil)}
}

// upload sends a small generated PDF, different on every upload.
func (u *vuser) upload(ctx context.Context) []sent {
	u.seq++
	title := fmt.Sprintf("Load test paper %s %d %d", u.env.nonce, u.n, u.seq)
	lines := make([]string, 12)
	for i := range lines {
		lines[i] = u.env.corpus.query(u.rng) + " " + u.env.corpus.query(u.rng)
	}
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	fw, _ := mw.CreateFormFile("file", strings.ReplaceAll(title, " ", "-")+".pdf")
	_, _ = fw.Write(smallPDF(title, lines))
	_ = mw.Close()
	var res struct {
		Job *struct {
			ID int64 `json:"id"`
		} `json:"job"`
	}
	s := u.send(ctx, "upload", http.MethodPost, "/api/papers/upload", mw.FormDataContentType(), body.Bytes(), &res)
	if s.res.Code >= 200 && s.res.Code < 300 && res.Job != nil {
		u.env.ledger.upload(u.cookie, res.Job.ID)
	}
	return []sent{s}
}

func (u *vuser) get(ctx context.Context, route, path string) []sent {
	return []sent{u.send(ctx, route, http.MethodGet, path, "", nil, nil)}
}

// send sends one request as the user and times it to the last byte of the
// answer. A 2xx answer is decoded into v when v is not nil; an answer that is
// not what the route promises counts as failed (status 0), as does an answer
// stream that carries an error event.
func (u *vuser) send(ctx context.Context, route, method, path, contentType string, body []byte, v any) sent {
	res := vegeta.Result{Method: method, URL: u.env.base + path, Timestamp: time.Now()}
	req, err := http.NewRequestWithContext(ctx, method, res.URL, bytes.NewReader(body))
	if err != nil {
		res.Error = err.Error()
		return sent{route, res}
	}
	req.Header.Set("Cookie", sessionCookie+"="+u.cookie)
	req.Header.Set("Accept", "application/json")
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := u.env.client.Do(req)
	if err != nil {
		res.Latency = time.Since(res.Timestamp)
		res.Error = err.Error()
		return sent{route, res}
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	res.Latency = time.Since(res.Timestamp)
	res.Code = uint16(resp.StatusCode)
	res.BytesIn = uint64(len(b))
	switch {
	case err != nil:
		res.Code, res.Error = 0, "read the answer: "+err.Error()
	case resp.StatusCode >= 300:
		res.Error = firstLine(b)
	case strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream"):
		if bytes.Contains(b, []byte("event: error")) {
			res.Code, res.Error = 0, "the answer's stream ended with an error event: "+firstLine(b)
		}
	case v != nil:
		if err := json.Unmarshal(b, v); err != nil {
			res.Code, res.Error = 0, "decode the answer: "+err.Error()
		}
	}
	return sent{route, res}
}

func firstLine(b []byte) string {
	s, _, _ := strings.Cut(string(b), "\n")
	if len(s) > 200 {
		s = s[:200]
	}
	return s
}

// recorder counts each request under its route and, separately, reads and writes
// overall.
type recorder struct {
	mu     sync.Mutex
	routes map[string]*vegeta.Metrics
	reads  *vegeta.Metrics
	writes *vegeta.Metrics
	all    *vegeta.Metrics
	// statuses counts each route's answers by status (0: no answer, or not what
	// was promised).
	statuses map[string]map[uint16]int
	// errors keeps the first error text of each route and status.
	errors map[string]string
}

func newRecorder() *recorder {
	return &recorder{routes: map[string]*vegeta.Metrics{}, reads: &vegeta.Metrics{}, writes: &vegeta.Metrics{},
		all: &vegeta.Metrics{}, statuses: map[string]map[uint16]int{}, errors: map[string]string{}}
}

func (r *recorder) add(a action, s sent) {
	r.mu.Lock()
	defer r.mu.Unlock()
	m, ok := r.routes[s.route]
	if !ok {
		m = &vegeta.Metrics{}
		r.routes[s.route] = m
		r.statuses[s.route] = map[uint16]int{}
	}
	res := s.res
	m.Add(&res)
	r.all.Add(&res)
	// A review that had to fetch the due queue first counts that fetch as a read.
	if a.Write && s.route == a.Name {
		r.writes.Add(&res)
	} else {
		r.reads.Add(&res)
	}
	r.statuses[s.route][res.Code]++
	if res.Code < 200 || res.Code > 299 {
		key := fmt.Sprintf("%s %d", s.route, res.Code)
		if _, seen := r.errors[key]; !seen {
			r.errors[key] = res.Error
		}
	}
}

func (r *recorder) close() {
	for _, m := range r.routes {
		m.Close()
	}
	r.reads.Close()
	r.writes.Close()
	r.all.Close()
}

// ledger remembers every write the host acknowledged, to look for each in the
// database after the run.
type ledger struct {
	mu      sync.Mutex
	reviews []string
	// ratings are the reasons of the ratings acknowledged for each user and paper.
	ratings map[ratingKey][]string
	uploads []ackedUpload
}

type ratingKey struct {
	user  int
	paper string
}

type ackedUpload struct {
	cookie string
	job    int64
}

func newLedger() *ledger { return &ledger{ratings: map[ratingKey][]string{}} }

func (l *ledger) review(id string) {
	l.mu.Lock()
	l.reviews = append(l.reviews, id)
	l.mu.Unlock()
}

func (l *ledger) rating(user int, paper, reason string) {
	l.mu.Lock()
	k := ratingKey{user, paper}
	l.ratings[k] = append(l.ratings[k], reason)
	l.mu.Unlock()
}

func (l *ledger) upload(cookie string, job int64) {
	l.mu.Lock()
	l.uploads = append(l.uploads, ackedUpload{cookie, job})
	l.mu.Unlock()
}
