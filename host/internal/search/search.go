// Package search asks every healthy paper source at once, under one deadline, merges
// what they return into one ranked list without duplicates, and says which sources
// failed, timed out or were skipped. Each call records the caller's per-source health
// (pulse_source_health); a source in backoff is skipped.
package search

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/lectern-research/lectern/host/internal/netguard"
	"github.com/lectern-research/lectern/host/internal/papers"
	"github.com/lectern-research/lectern/sdk/paper"
	"github.com/lectern-research/lectern/sdk/protocol"
	"github.com/lectern-research/lectern/sdk/source"
)

// Searcher is the one call search needs from a paper source.
type Searcher interface {
	Search(ctx context.Context, req *source.SearchRequest) (*source.Page, error)
}

// Getter looks one paper up by identifiers; sources that can, implement it.
type Getter interface {
	Get(ctx context.Context, req *source.GetRequest) (*source.GetResponse, error)
}

// Named is a source under its plugin name.
type Named struct {
	Name     string
	Searcher Searcher
}

// Defaults.
const (
	// DefaultTimeout is the one deadline all sources share.
	DefaultTimeout = 10 * time.Second
	// DefaultLimit is how many merged results a search returns.
	DefaultLimit = 25
	// MaxLimit bounds the limit a caller may ask for.
	MaxLimit = 100
	// rrfK is the reciprocal-rank-fusion constant (Cormack et al. use 60).
	rrfK = 60
	// maxBackoff caps the time a failing source is skipped.
	maxBackoff = time.Hour
	// baseBackoff is the first backoff after consecutive failures begin.
	baseBackoff = 30 * time.Second
	// backoffAfter is how many consecutive failures start a backoff.
	backoffAfter = 3
)

// Service runs searches.
type Service struct {
	pool    *pgxpool.Pool
	sources func() []Named
	timeout time.Duration
	now     func() time.Time
}

// New returns a Service asking the sources that sources() lists at each call.
func New(pool *pgxpool.Pool, sources func() []Named) *Service {
	return &Service{pool: pool, sources: sources, timeout: DefaultTimeout, now: time.Now}
}

// Status of one source in one search.
const (
	StatusOK      = "ok"
	StatusFailed  = "failed"
	StatusTimeout = "timeout"
	StatusLimited = "rate_limited"
	StatusBackoff = "skipped_backoff"
	StatusUnknown = "unknown_source"
	// StatusUnsupported: the source does not offer what was asked (the citation
	// graph); it is not a failure and leaves the source's health alone.
	StatusUnsupported = "unsupported"
)

// SourceReport says how one source did.
type SourceReport struct {
	Name         string     `json:"name"`
	Status       string     `json:"status"`
	Results      int        `json:"results"`
	DurationMS   int64      `json:"duration_ms"`
	Error        string     `json:"error,omitempty"`
	BackoffUntil *time.Time `json:"backoff_until,omitempty"`
}

// Result is one merged paper with where it came from.
type Result struct {
	papers.Item
	Sources []string `json:"sources"`
	Score   float64  `json:"score"`
}

// Response is a whole search answer.
type Response struct {
	Query   string         `json:"query"`
	Results []Result       `json:"results"`
	Sources []SourceReport `json:"sources"`
	Partial bool           `json:"partial"`
}

// Params of a search.
type Params struct {
	Query   string
	Sources []string // empty: every healthy source
	Limit   int
	// Filters and Sort are passed to every source as they are.
	Filters source.Filters
	Sort    source.Sort
	// Instance stores the results as instance-level discoveries (discovered_by
	// NULL, SPEC ownership rule 3): Pulse's nightly discovery, which puts a paper
	// in no one's library and credits no one with it. Source health is still
	// the caller's.
	Instance bool
	// CitingIDs, when set, asks for the papers citing that paper instead of a
	// query, of the sources that know the citation graph (Citer); Query and
	// Filters are then not used.
	CitingIDs *paper.IDs
}

// Citer is what a source that knows the citation graph offers
// (source.WithCitations).
type Citer interface {
	Citations(ctx context.Context, req *source.CitationsRequest) (*source.Page, error)
}

// ErrNoSources means no paper source is configured and running.
var ErrNoSources = errors.New("search: no paper source is running")

type outcome struct {
	report SourceReport
	papers []paper.Paper
	err    error
	retry  time.Duration
}

// Search runs p for userID: fan-out, health bookkeeping, merge, rank, and the
// results upserted into the corpus (public metadata, discovered by the caller) so
// each has an id the caller can save.
func (s *Service) Search(ctx context.Context, userID uuid.UUID, p Params) (Response, error) {
	if p.Limit <= 0 {
		p.Limit = DefaultLimit
	}
	p.Limit = min(p.Limit, MaxLimit)
	resp := Response{Query: p.Query, Results: []Result{}, Sources: []SourceReport{}}

	all := s.sources()
	byName := map[string]Named{}
	for _, n := range all {
		byName[n.Name] = n
	}
	var chosen []Named
	if len(p.Sources) == 0 {
		chosen = all
	} else {
		for _, name := range p.Sources {
			if n, ok := byName[name]; ok {
				chosen = append(chosen, n)
			} else {
				resp.Sources = append(resp.Sources, SourceReport{Name: name, Status: StatusUnknown, Error: "no such source is running"})
				resp.Partial = true
			}
		}
	}
	if len(chosen) == 0 && len(resp.Sources) == 0 {
		return resp, ErrNoSources
	}

	backoff, err := s.backoffs(ctx, userID)
	if err != nil {
		return resp, err
	}
	now := s.now()
	var ask []Named
	for _, n := range chosen {
		if until, ok := backoff[n.Name]; ok && until.After(now) {
			u := until
			resp.Sources = append(resp.Sources, SourceReport{Name: n.Name, Status: StatusBackoff, BackoffUntil: &u,
				Error: "skipped after repeated failures"})
			resp.Partial = true
			continue
		}
		ask = append(ask, n)
	}

	outcomes := s.fanOut(ctx, ask, p)
	for _, o := range outcomes {
		if o.report.Status != StatusOK && o.report.Status != StatusUnsupported {
			resp.Partial = true
		}
		resp.Sources = append(resp.Sources, o.report)
	}
	sort.SliceStable(resp.Sources, func(i, j int) bool { return resp.Sources[i].Name < resp.Sources[j].Name })

	// Health and results go to the database side by side, on two connections.
	healthErr := make(chan error, 1)
	go func() { healthErr <- s.recordHealth(ctx, userID, outcomes) }()
	merged := merge(outcomes, p.Query)
	if len(merged) > p.Limit {
		merged = merged[:p.Limit]
	}
	var discoveredBy *uuid.UUID
	if !p.Instance {
		discoveredBy = &userID
	}
	results, err := s.store(ctx, userID, discoveredBy, merged)
	if herr := <-healthErr; herr != nil {
		return resp, herr
	}
	if err != nil {
		return resp, err
	}
	resp.Results = results
	return resp, nil
}

// fanOut asks every source at once and waits for all of them, or the deadline.
func (s *Service) fanOut(ctx context.Context, ask []Named, p Params) []outcome {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	out := make([]outcome, len(ask))
	var wg sync.WaitGroup
	for i, n := range ask {
		wg.Add(1)
		go func() {
			defer wg.Done()
			start := time.Now()
			page, err := ask1(ctx, n.Searcher, p)
			o := outcome{report: SourceReport{Name: n.Name, DurationMS: time.Since(start).Milliseconds()}, err: err}
			var perr *protocol.Error
			switch {
			case errors.Is(err, protocol.ErrUnsupported):
				o.report.Status = StatusUnsupported
			case err == nil:
				o.report.Status, o.papers, o.report.Results = StatusOK, page.Papers, len(page.Papers)
			case errors.Is(err, context.DeadlineExceeded) || ctx.Err() != nil:
				o.report.Status, o.report.Error = StatusTimeout, fmt.Sprintf("no answer within %s", s.timeout)
			case errors.As(err, &perr) && perr.Code == protocol.CodeRateLimited:
				o.report.Status, o.report.Error, o.retry = StatusLimited, failureText(err), perr.RetryAfter
			default:
				o.report.Status, o.report.Error = StatusFailed, failureText(err)
			}
			out[i] = o
		}()
	}
	wg.Wait()
	return out
}

// ask1 asks one source: its search, or with p.CitingIDs the papers citing that
// paper (Unsupported from a source without the citation graph).
func ask1(ctx context.Context, src Searcher, p Params) (*source.Page, error) {
	if p.CitingIDs == nil {
		return src.Search(ctx, &source.SearchRequest{Query: p.Query, Filters: p.Filters, Sort: p.Sort,
			PageSize: min(p.Limit, source.MaxPageSize)})
	}
	c, ok := src.(Citer)
	if !ok {
		return nil, protocol.Unsupported("no citation graph")
	}
	return c.Citations(ctx, &source.CitationsRequest{IDs: *p.CitingIDs, PageSize: min(p.Limit, source.MaxPageSize)})
}

func (s *Service) backoffs(ctx context.Context, userID uuid.UUID) (map[string]time.Time, error) {
	rows, err := s.pool.Query(ctx, `SELECT source, backoff_until FROM pulse_source_health WHERE user_id = $1 AND backoff_until IS NOT NULL`, userID)
	if err != nil {
		return nil, fmt.Errorf("search: read source health: %w", err)
	}
	out := map[string]time.Time{}
	var name string
	var until time.Time
	_, err = pgx.ForEachRow(rows, []any{&name, &until}, func() error { out[name] = until; return nil })
	if err != nil {
		return nil, fmt.Errorf("search: read source health: %w", err)
	}
	return out, nil
}

// queueHealth adds to batch the update of the caller's row for the source: a
// success clears the failure streak and any backoff; a failure extends the streak,
// and from the third in a row the source is skipped for 30 s, doubling up to an hour,
// or for as long as a rate limit's Retry-After says (a minute when it says nothing).
func (s *Service) queueHealth(batch *pgx.Batch, userID uuid.UUID, o outcome) {
	now := s.now()
	if o.report.Status == StatusOK {
		batch.Queue(`
			INSERT INTO pulse_source_health (user_id, source, successes, last_status, last_request_at, last_success_at)
			VALUES ($1, $2, 1, 'ok', $3, $3)
			ON CONFLICT (user_id, source) DO UPDATE SET
			  successes = pulse_source_health.successes + 1, consecutive_failures = 0, last_status = 'ok',
			  last_request_at = $3, last_success_at = $3, backoff_until = NULL, updated_at = $3`, userID, o.report.Name, now)
		return
	}
	status := map[string]string{StatusTimeout: "timeout", StatusLimited: "rate_limited"}[o.report.Status]
	if status == "" {
		status = "error"
	}
	msg := o.report.Error
	if len(msg) > 2000 {
		msg = msg[:2000]
	}
	var wait *time.Duration
	switch {
	case o.retry > 0:
		w := min(o.retry, maxBackoff)
		wait = &w
	case o.report.Status == StatusLimited:
		w := time.Minute
		wait = &w
	}
	var until any
	if wait != nil {
		until = now.Add(*wait)
	}
	// $6 is a fixed backoff (rate limits); otherwise the streak decides.
	batch.Queue(`
		INSERT INTO pulse_source_health (user_id, source, failures, consecutive_failures, last_status, last_error, last_request_at, backoff_until)
		VALUES ($1, $2, 1, 1, $3, $4, $5, $6)
		ON CONFLICT (user_id, source) DO UPDATE SET
		  failures = pulse_source_health.failures + 1,
		  consecutive_failures = pulse_source_health.consecutive_failures + 1,
		  last_status = $3, last_error = $4, last_request_at = $5, updated_at = $5,
		  backoff_until = CASE
		      WHEN $6::timestamptz IS NOT NULL THEN $6::timestamptz
		      WHEN pulse_source_health.consecutive_failures + 1 >= $7 THEN $5 + least(
		          make_interval(secs => $8 * power(2, pulse_source_health.consecutive_failures + 1 - $7)),
		          make_interval(secs => $9))
		      ELSE NULL END`,
		userID, o.report.Name, status, msg, now, until, backoffAfter, baseBackoff.Seconds(), maxBackoff.Seconds())
}

// recordHealth writes every source's health in one round trip.
func (s *Service) recordHealth(ctx context.Context, userID uuid.UUID, outcomes []outcome) error {
	if len(outcomes) == 0 {
		return nil
	}
	batch := &pgx.Batch{}
	for _, o := range outcomes {
		if o.report.Status != StatusUnsupported {
			s.queueHealth(batch, userID, o)
		}
	}
	if batch.Len() == 0 {
		return nil
	}
	if err := s.pool.SendBatch(ctx, batch).Close(); err != nil {
		return fmt.Errorf("search: record source health: %w", err)
	}
	return nil
}

type mergedPaper struct {
	p       paper.Paper
	sources []string
	score   float64
}

var nonAlnum = regexp.MustCompile(`[^\p{L}\p{N}]+`)

// titleKey is a title reduced to lowercase letters and digits.
func titleKey(t string) string {
	return nonAlnum.ReplaceAllString(strings.ToLower(t), "")
}

// keys are the identities a paper may share with another source's copy: DOI, then
// arXiv id, then title and year.
func keys(p *paper.Paper) []string {
	var out []string
	if d := papers.NormalizeDOI(p.IDs.DOI); d != "" {
		out = append(out, "doi:"+d)
	}
	if id, _, ok := papers.NormalizeArxivID(p.IDs.ArXivID); ok {
		out = append(out, "arxiv:"+id)
	}
	if t := titleKey(p.Title); len(t) >= 12 {
		out = append(out, fmt.Sprintf("title:%s:%d", t, p.Published.Year))
	}
	return out
}

// merge folds every source's papers into one list without duplicates, ranked by
// reciprocal rank fusion of each source's own order, so agreement between sources
// lifts a paper; ties go to the closer title match, then to citations.
func merge(outcomes []outcome, query string) []*mergedPaper {
	var list []*mergedPaper
	index := map[string]*mergedPaper{}
	for _, o := range outcomes {
		for rank, p := range o.papers {
			if strings.TrimSpace(p.Title) == "" {
				continue
			}
			var m *mergedPaper
			for _, k := range keys(&p) {
				if m = index[k]; m != nil {
					break
				}
			}
			if m == nil {
				m = &mergedPaper{p: p}
				list = append(list, m)
			} else {
				fill(&m.p, &p)
			}
			if !slices.Contains(m.sources, o.report.Name) {
				m.sources = append(m.sources, o.report.Name)
				m.score += 1.0 / float64(rrfK+rank+1)
			}
			for _, k := range keys(&m.p) {
				index[k] = m
			}
		}
	}
	q := words(query)
	sort.SliceStable(list, func(i, j int) bool {
		a, b := list[i], list[j]
		if a.score != b.score {
			return a.score > b.score
		}
		if oa, ob := overlap(q, a.p.Title), overlap(q, b.p.Title); oa != ob {
			return oa > ob
		}
		return cites(a.p) > cites(b.p)
	})
	return list
}

func cites(p paper.Paper) int64 {
	if p.CitationCount == nil {
		return 0
	}
	return *p.CitationCount
}

func words(s string) map[string]bool {
	out := map[string]bool{}
	for _, w := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		out[w] = true
	}
	return out
}

func overlap(q map[string]bool, title string) int {
	n := 0
	for w := range words(title) {
		if q[w] {
			n++
		}
	}
	return n
}

// fill gives dst what src knows and dst does not.
func fill(dst, src *paper.Paper) {
	ids := &dst.IDs
	set := func(d *string, s string) {
		if *d == "" {
			*d = s
		}
	}
	set(&ids.DOI, src.IDs.DOI)
	set(&ids.ArXivID, src.IDs.ArXivID)
	set(&ids.OpenAlexID, src.IDs.OpenAlexID)
	set(&ids.SemanticScholarID, src.IDs.SemanticScholarID)
	set(&ids.PubMedID, src.IDs.PubMedID)
	if ids.ArXivVersion == 0 {
		ids.ArXivVersion = src.IDs.ArXivVersion
	}
	set(&dst.Abstract, src.Abstract)
	set(&dst.LandingURL, src.LandingURL)
	set(&dst.PDFURL, src.PDFURL)
	set(&dst.Venue.Name, src.Venue.Name)
	if len(dst.Authors) == 0 {
		dst.Authors = src.Authors
	}
	if src.Published.Precision > dst.Published.Precision {
		dst.Published = src.Published
	}
	if src.CitationCount != nil && (dst.CitationCount == nil || *src.CitationCount > *dst.CitationCount) {
		dst.CitationCount = src.CitationCount
	}
}

// failureText says in words why a source failed, for the search's source reports
// and the health table: the plugin's own text may carry addresses or resolver
// output, so only its error code is read.
func failureText(err error) string {
	var perr *protocol.Error
	if errors.As(err, &perr) {
		switch perr.Code {
		case protocol.CodeUnavailable:
			return "the source could not be reached"
		case protocol.CodeUnauthorized:
			return "the source refused its credentials"
		case protocol.CodeRateLimited:
			return "the source is limiting requests"
		case protocol.CodeBadRequest:
			return "the source refused the request"
		}
		return "the source answered with an error"
	}
	return "the source could not be reached: " + netguard.Reason(err)
}

// Health is how one source has done for a user (pulse_source_health), in the words
// of REFERENCE §4: ok, rate_limit (with the cooldown) or error (with the
// consecutive failures).
type Health struct {
	Source              string     `json:"source_type"`
	Status              string     `json:"last_status"`
	LastRequestAt       *time.Time `json:"last_request_at"`
	LastSuccessAt       *time.Time `json:"last_success_at"`
	CooldownUntil       *time.Time `json:"cooldown_until"`
	ConsecutiveFailures int        `json:"consecutive_failures"`
}

// HealthOf returns how each source has done for userID, by source name.
func (s *Service) HealthOf(ctx context.Context, userID uuid.UUID) ([]Health, error) {
	rows, err := s.pool.Query(ctx, `
		SELECT source, CASE last_status WHEN 'rate_limited' THEN 'rate_limit' WHEN 'timeout' THEN 'error'
		                                 ELSE coalesce(last_status, 'ok') END,
		       last_request_at, last_success_at, CASE WHEN backoff_until > now() THEN backoff_until END, consecutive_failures
		  FROM pulse_source_health WHERE user_id = $1 ORDER BY source`, userID)
	if err != nil {
		return nil, fmt.Errorf("search: source health: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Health, error) {
		var h Health
		err := r.Scan(&h.Source, &h.Status, &h.LastRequestAt, &h.LastSuccessAt, &h.CooldownUntil, &h.ConsecutiveFailures)
		return h, err
	})
	if err != nil {
		return nil, fmt.Errorf("search: source health: %w", err)
	}
	if out == nil {
		out = []Health{}
	}
	return out, nil
}
