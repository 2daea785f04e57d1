package main

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/lectern-research/lectern/sdk/paper"
	"github.com/lectern-research/lectern/sdk/protocol"
	"github.com/lectern-research/lectern/sdk/source"
	"github.com/lectern-research/lectern/sdk/sourcehttp"
)

// Identity of the plugin.
const (
	pluginName = "semanticscholar"
	version    = "0.1.0"
)

// Defaults of the settings.
const (
	defaultBaseURL       = "https://api.semanticscholar.org/graph/v1"
	defaultInterval      = 1050 * time.Millisecond
	defaultMaxRetries    = 4
	defaultBackoff       = time.Second
	defaultMaxBackoff    = 30 * time.Second
	defaultMaxRetryAfter = time.Minute
	defaultTimeout       = 30 * time.Second
)

// Pagination bounds of the Graph API.
const (
	// searchCap: /paper/search serves offset+limit up to 1,000 relevance-ranked results.
	searchCap = 1000
	// edgeCap: citations and references lists stop before offset 10,000.
	edgeCap = 9999
	// authorCap bounds the offset of /author/{id}/papers.
	authorCap = 9999
)

// fieldsOfStudy are the values /paper/search accepts in fieldsOfStudy.
var fieldsOfStudy = []string{
	"Computer Science", "Medicine", "Chemistry", "Biology", "Materials Science", "Physics", "Geology",
	"Psychology", "Art", "History", "Geography", "Sociology", "Business", "Political Science", "Economics",
	"Philosophy", "Mathematics", "Engineering", "Environmental Science", "Agricultural and Food Sciences",
	"Education", "Law", "Linguistics",
}

// publicationTypes maps Lectern work types to the Graph API's publicationTypes.
var publicationTypes = map[string]string{
	"article": "JournalArticle", "review": "Review", "book-chapter": "BookSection", "dataset": "Dataset",
	"conference": "Conference", "book": "Book", "case-report": "CaseReport", "clinical-trial": "ClinicalTrial",
	"editorial": "Editorial", "letter": "LettersAndComments", "meta-analysis": "MetaAnalysis", "news": "News", "study": "Study",
}

// SemanticScholar is the Semantic Scholar paper source, over the Academic Graph API.
// Its settings (all optional):
//
//	base_url         Graph API root (default https://api.semanticscholar.org/graph/v1)
//	rate_interval    least time between two requests, shared by all calls ("1.05s")
//	max_retries      retries on 429, 5xx and network errors (4)
//	backoff          first retry delay, doubled per retry ("1s")
//	max_backoff      bound on one retry delay ("30s")
//	max_retry_after  longest Retry-After waited for within a call; longer ones fail
//	                 at once with RateLimited ("60s")
//	timeout          bound on one HTTP exchange ("30s")
//
// Durations are Go duration strings or numbers of seconds. The optional credential
// "api_key" is sent as the x-api-key header.
type SemanticScholar struct {
	log    *slog.Logger
	http   *sourcehttp.Client
	client atomic.Pointer[client]
}

var _ source.WithCitations = (*SemanticScholar)(nil)

// New returns the source with its default settings.
func New(log *slog.Logger) *SemanticScholar {
	cfg, err := parseSettings(nil)
	if err != nil {
		panic(fmt.Sprintf("semanticscholar: default settings: %v", err))
	}
	s := &SemanticScholar{log: log, http: newHTTP(cfg.policy, log)}
	s.client.Store(newClient(cfg, s.http))
	return s
}

// Describe names the plugin.
func (s *SemanticScholar) Describe(context.Context, *protocol.DescribeRequest) (*protocol.DescribeResponse, error) {
	return &protocol.DescribeResponse{
		Name:        pluginName,
		Version:     version,
		Description: "Semantic Scholar Academic Graph: search, papers by DOI/arXiv/PMID, authors, citations and references.",
	}, nil
}

// Configure applies the settings; on a bad one it keeps the previous settings.
func (s *SemanticScholar) Configure(_ context.Context, req *protocol.ConfigureRequest) (*protocol.ConfigureResponse, error) {
	cfg, err := parseSettings(req.Settings)
	if err != nil {
		return nil, err
	}
	s.http.SetPolicy(cfg.policy)
	s.client.Store(newClient(cfg, s.http))
	return &protocol.ConfigureResponse{}, nil
}

func parseSettings(settings map[string]any) (clientConfig, error) {
	base, _ := url.Parse(defaultBaseURL)
	cfg := clientConfig{baseURL: base, policy: sourcehttp.Policy{
		Interval: defaultInterval, MaxAttempts: defaultMaxRetries + 1, Backoff: defaultBackoff, MaxBackoff: defaultMaxBackoff,
		Jitter: 0.2, MaxRetryAfter: defaultMaxRetryAfter, Timeout: defaultTimeout,
	}}
	for k, v := range settings {
		var err error
		switch k {
		case "base_url":
			cfg.baseURL, err = sourcehttp.URLSetting(k, v)
		case "rate_interval":
			cfg.policy.Interval, err = sourcehttp.DurationSetting(k, v)
		case "backoff":
			cfg.policy.Backoff, err = sourcehttp.DurationSetting(k, v)
		case "max_backoff":
			cfg.policy.MaxBackoff, err = sourcehttp.DurationSetting(k, v)
		case "max_retry_after":
			cfg.policy.MaxRetryAfter, err = sourcehttp.DurationSetting(k, v)
		case "timeout":
			cfg.policy.Timeout, err = sourcehttp.PositiveDurationSetting(k, v)
		case "max_retries":
			var n int
			n, err = sourcehttp.IntSetting(k, v, 0, 10)
			cfg.policy.MaxAttempts = n + 1
		default:
			return cfg, protocol.BadRequest("unknown setting %q (known: base_url, rate_interval, max_retries, backoff, max_backoff, max_retry_after, timeout)", k)
		}
		if err != nil {
			return cfg, err
		}
	}
	return cfg, nil
}

func (s *SemanticScholar) api() *client { return s.client.Load() }

func apiKey(creds map[string]string) string { return strings.TrimSpace(creds["api_key"]) }

// Search runs a relevance search on /paper/search. Filters map to the endpoint's
// filters: From/To to publicationDateOrYear, Venue, Categories to fieldsOfStudy,
// WorkTypes to publicationTypes, OpenAccessOnly to openAccessPdf; author names,
// which the endpoint cannot filter on, join the query text. The endpoint ranks by
// relevance only: SortNewest and SortMostCited order each page.
func (s *SemanticScholar) Search(ctx context.Context, req *source.SearchRequest) (*source.Page, error) {
	f := &req.Filters
	if strings.TrimSpace(req.Query) == "" && f.IsZero() {
		return nil, protocol.BadRequest("a search needs a query or a filter")
	}
	query := strings.Join(append(strings.Fields(req.Query), f.Authors...), " ")
	if query == "" {
		query = strings.TrimSpace(f.Venue)
	}
	if query == "" {
		return nil, protocol.BadRequest("semantic scholar searches need text: give a query, author names or a venue")
	}
	offset, err := source.ParseOffset(req.Cursor, searchCap)
	if err != nil {
		return nil, err
	}
	p := searchParams{
		query: query, offset: offset, limit: min(source.PageSize(req.PageSize), searchCap-offset),
		dates: dateRange(f.From, f.To), venue: strings.TrimSpace(f.Venue),
		fieldsOfStudy: knownFields(f.Categories), openAccessPDF: f.OpenAccessOnly,
	}
	for _, t := range f.WorkTypes {
		if mapped, ok := publicationTypes[strings.ToLower(t)]; ok {
			p.pubTypes = append(p.pubTypes, mapped)
		} else {
			p.pubTypes = append(p.pubTypes, t)
		}
	}
	res, err := s.api().searchPapers(ctx, apiKey(req.Credentials), p)
	if err != nil {
		return nil, fmt.Errorf("semanticscholar: search: %w", err)
	}
	page := &source.Page{Papers: toPapers(res.Data), TotalEstimate: min(res.Total, searchCap)}
	switch req.Sort {
	case source.SortNewest:
		sortNewest(page.Papers)
	case source.SortMostCited:
		slices.SortStableFunc(page.Papers, func(a, b paper.Paper) int { return cmp.Compare(cited(b), cited(a)) })
	}
	page.NextCursor = nextCursor(res.Next, offset, len(res.Data), searchCap)
	return page, nil
}

// Get finds a paper by its Semantic Scholar id, DOI, arXiv id, PMID or PMCID: one id
// through /paper/{id}, several at once through POST /paper/batch, the first found in
// that order winning.
func (s *SemanticScholar) Get(ctx context.Context, req *source.GetRequest) (*source.GetResponse, error) {
	if req.IDs.Empty() {
		return nil, protocol.BadRequest("no identifier given")
	}
	refs := paperRefs(req.IDs)
	if len(refs) == 0 {
		return nil, protocol.NotFound("semantic scholar cannot look up any of %+v", req.IDs)
	}
	key := apiKey(req.Credentials)
	if len(refs) == 1 {
		raw, err := s.api().paper(ctx, key, refs[0])
		if err != nil {
			return nil, fmt.Errorf("semanticscholar: get %s: %w", refs[0], err)
		}
		p, ok := toPaper(raw)
		if !ok {
			return nil, protocol.NotFound("semantic scholar has no usable record for %s", refs[0])
		}
		return &source.GetResponse{Paper: p}, nil
	}
	found, err := s.api().paperBatch(ctx, key, refs)
	if err != nil {
		return nil, fmt.Errorf("semanticscholar: get %v: %w", refs, err)
	}
	for _, raw := range found {
		if raw == nil {
			continue
		}
		if p, ok := toPaper(raw); ok {
			return &source.GetResponse{Paper: p}, nil
		}
	}
	return nil, protocol.NotFound("semantic scholar has no paper for %v", refs)
}

// Recent searches /paper/search for the topics (joined into one query, or the
// categories' names when there are no topics) with publicationDateOrYear from
// req.Since; categories that are Semantic Scholar fields of study filter. Each page
// is ordered newest first.
func (s *SemanticScholar) Recent(ctx context.Context, req *source.RecentRequest) (*source.Page, error) {
	query := strings.Join(req.Topics, " ")
	if strings.TrimSpace(query) == "" {
		query = strings.Join(req.Categories, " ")
	}
	if strings.TrimSpace(query) == "" {
		return nil, protocol.BadRequest("recent needs topics or categories")
	}
	offset, err := source.ParseOffset(req.Cursor, searchCap)
	if err != nil {
		return nil, err
	}
	p := searchParams{
		query: query, offset: offset, limit: min(source.PageSize(req.PageSize), searchCap-offset),
		fieldsOfStudy: knownFields(req.Categories),
	}
	if !req.Since.IsZero() {
		p.dates = req.Since.UTC().Format("2006-01-02") + ":"
	}
	res, err := s.api().searchPapers(ctx, apiKey(req.Credentials), p)
	if err != nil {
		return nil, fmt.Errorf("semanticscholar: recent: %w", err)
	}
	page := &source.Page{Papers: since(toPapers(res.Data), req.Since), TotalEstimate: min(res.Total, searchCap)}
	sortNewest(page.Papers)
	page.NextCursor = nextCursor(res.Next, offset, len(res.Data), searchCap)
	return page, nil
}

// AuthorPapers lists /author/{id}/papers, the id being req.Author.SourceAuthorID or
// else the best /author/search match for the name. Papers before req.Since are
// dropped and each page is ordered newest first. The cursor carries the resolved
// author id.
func (s *SemanticScholar) AuthorPapers(ctx context.Context, req *source.AuthorPapersRequest) (*source.Page, error) {
	a := req.Author
	if a.Name == "" && a.ORCID == "" && a.SourceAuthorID == "" {
		return nil, protocol.BadRequest("no author given")
	}
	key := apiKey(req.Credentials)
	authorID, offset := "", 0
	if req.Cursor != "" {
		id, off, ok := strings.Cut(req.Cursor, ":")
		n, err := source.ParseOffset(off, authorCap)
		if !ok || !authorIDRE.MatchString(id) || err != nil {
			return nil, protocol.BadRequest("cursor %q is not one this source issued", req.Cursor)
		}
		authorID, offset = id, n
	} else {
		switch {
		case a.SourceAuthorID != "":
			if !authorIDRE.MatchString(a.SourceAuthorID) {
				return nil, protocol.BadRequest("%q is not a Semantic Scholar author id", a.SourceAuthorID)
			}
			authorID = a.SourceAuthorID
		case strings.TrimSpace(a.Name) != "":
			found, err := s.api().searchAuthors(ctx, key, strings.TrimSpace(a.Name), 10)
			if err != nil {
				return nil, fmt.Errorf("semanticscholar: find author %q: %w", a.Name, err)
			}
			if len(found.Data) == 0 || !authorIDRE.MatchString(found.Data[0].AuthorID) {
				return &source.Page{}, nil
			}
			authorID = found.Data[0].AuthorID
		default:
			return nil, protocol.BadRequest("semantic scholar cannot look authors up by ORCID; give a name or a Semantic Scholar author id")
		}
	}
	res, err := s.api().authorPapers(ctx, key, authorID, offset, min(source.PageSize(req.PageSize), authorCap-offset))
	if err != nil {
		return nil, fmt.Errorf("semanticscholar: papers of author %s: %w", authorID, err)
	}
	page := &source.Page{Papers: since(toPapers(res.Data), req.Since)}
	sortNewest(page.Papers)
	if next := nextCursor(res.Next, offset, len(res.Data), authorCap); next != "" {
		page.NextCursor = authorID + ":" + next
	}
	return page, nil
}

// Citations lists the papers citing the paper (/paper/{id}/citations).
func (s *SemanticScholar) Citations(ctx context.Context, req *source.CitationsRequest) (*source.Page, error) {
	return s.edges(ctx, req, "citations")
}

// References lists the papers the paper cites (/paper/{id}/references).
func (s *SemanticScholar) References(ctx context.Context, req *source.CitationsRequest) (*source.Page, error) {
	return s.edges(ctx, req, "references")
}

func (s *SemanticScholar) edges(ctx context.Context, req *source.CitationsRequest, kind string) (*source.Page, error) {
	if req.IDs.Empty() {
		return nil, protocol.BadRequest("no identifier given")
	}
	refs := paperRefs(req.IDs)
	if len(refs) == 0 {
		return nil, protocol.NotFound("semantic scholar cannot look up any of %+v", req.IDs)
	}
	offset, err := source.ParseOffset(req.Cursor, edgeCap)
	if err != nil {
		return nil, err
	}
	res, err := s.api().edges(ctx, apiKey(req.Credentials), refs[0], kind, offset, min(source.PageSize(req.PageSize), edgeCap-offset))
	if err != nil {
		return nil, fmt.Errorf("semanticscholar: %s of %s: %w", kind, refs[0], err)
	}
	list := make([]s2Paper, 0, len(res.Data))
	for _, e := range res.Data {
		if e.CitingPaper != nil {
			list = append(list, *e.CitingPaper)
		}
		if e.CitedPaper != nil {
			list = append(list, *e.CitedPaper)
		}
	}
	return &source.Page{Papers: toPapers(list), NextCursor: nextCursor(res.Next, offset, len(res.Data), edgeCap)}, nil
}

// paperRefs renders the identifiers the Graph API resolves, best first.
func paperRefs(ids paper.IDs) []string {
	var refs []string
	if id := strings.ToLower(strings.TrimSpace(ids.SemanticScholarID)); s2IDRE.MatchString(id) {
		refs = append(refs, id)
	}
	if doi := paper.NormalizeDOI(ids.DOI); doi != "" {
		refs = append(refs, "DOI:"+doi)
	}
	if id, _, ok := paper.ParseArXivID(ids.ArXivID); ok {
		refs = append(refs, "ARXIV:"+id)
	}
	if pmid := strings.TrimSpace(ids.PubMedID); pmidRE.MatchString(pmid) {
		refs = append(refs, "PMID:"+pmid)
	}
	if pmc := strings.TrimPrefix(strings.ToUpper(strings.TrimSpace(ids.PMCID)), "PMC"); pmidRE.MatchString(pmc) {
		refs = append(refs, "PMCID:"+pmc)
	}
	return refs
}

// nextCursor turns the API's next offset into a cursor; "" at the end of the
// results or at the endpoint's cap.
func nextCursor(next *int, offset, got, limit int) string {
	if next == nil || *next <= offset || *next >= limit || got == 0 {
		return ""
	}
	return strconv.Itoa(*next)
}

// dateRange renders From/To as publicationDateOrYear ("2020-01-01:2020-06-30").
func dateRange(from, to paper.Date) string {
	if from.IsZero() && to.IsZero() {
		return ""
	}
	var b strings.Builder
	if !from.IsZero() {
		b.WriteString(from.Time().Format("2006-01-02"))
	}
	b.WriteString(":")
	if !to.IsZero() {
		b.WriteString(periodEnd(to).Format("2006-01-02"))
	}
	return b.String()
}

// knownFields keeps the categories that are Semantic Scholar fields of study.
func knownFields(categories []string) []string {
	var out []string
	for _, c := range categories {
		for _, f := range fieldsOfStudy {
			if strings.EqualFold(strings.TrimSpace(c), f) && !slices.Contains(out, f) {
				out = append(out, f)
			}
		}
	}
	return out
}

// since keeps papers that may have appeared at or after t (a year- or
// month-precision date counts until its period ends); unknown dates go when t is set.
func since(ps []paper.Paper, t time.Time) []paper.Paper {
	if t.IsZero() {
		return ps
	}
	return slices.DeleteFunc(ps, func(p paper.Paper) bool {
		return p.Published.IsZero() || periodEnd(p.Published).Before(t)
	})
}

func cited(p paper.Paper) int64 {
	if p.CitationCount == nil {
		return -1
	}
	return *p.CitationCount
}
