package main

import (
	"context"
	"encoding/xml"
	"fmt"
	"log/slog"
	"math"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/lectern-research/lectern/sdk/paper"
	"github.com/lectern-research/lectern/sdk/protocol"
	"github.com/lectern-research/lectern/sdk/source"
	"github.com/lectern-research/lectern/sdk/sourcehttp"
)

// version is the arXiv plugin's own version.
const version = "0.1.0"

// Defaults of the settings.
const (
	defaultBaseURL     = "https://export.arxiv.org/api/query"
	defaultOAIBaseURL  = "https://export.arxiv.org/oai2"
	defaultRecentAPI   = recentOAI
	defaultInterval    = 3 * time.Second
	defaultMaxAttempts = 4
	defaultBackoffBase = 3 * time.Second
	defaultMaxBackoff  = 60 * time.Second
	defaultTimeout     = 30 * time.Second
)

// The APIs Recent can use (setting recent_api).
const (
	recentOAI   = "oai"
	recentQuery = "query"
)

// settings are the plugin's Configure settings.
type settings struct {
	baseURL    string
	oaiBaseURL string
	recentAPI  string
	policy     sourcehttp.Policy
	// userAgent is set per call, from the call's credentials.
	userAgent string
}

func defaultSettings() settings {
	return settings{
		baseURL:    defaultBaseURL,
		oaiBaseURL: defaultOAIBaseURL,
		recentAPI:  defaultRecentAPI,
		policy:     policy(defaultInterval, defaultMaxAttempts, defaultBackoffBase, defaultMaxBackoff, defaultTimeout),
	}
}

// policy is the client policy of the settings: max_backoff also caps the
// Retry-After a call waits through, and a rate limit holds back every call.
func policy(interval time.Duration, maxAttempts int, backoff, maxBackoff, timeout time.Duration) sourcehttp.Policy {
	return sourcehttp.Policy{
		Interval: interval, MaxAttempts: maxAttempts, Backoff: backoff, MaxBackoff: maxBackoff, Jitter: 0.1,
		MaxRetryAfter: maxBackoff, Timeout: timeout, HoldOnRateLimit: true,
	}
}

// Arxiv is the arXiv paper source, over the export.arxiv.org Atom query API and,
// for Recent (and as the fallback of Get), arXiv's OAI-PMH interface. Its settings
// (all optional):
//
//	base_url       the query endpoint (default https://export.arxiv.org/api/query)
//	oai_base_url   the OAI-PMH endpoint (default https://export.arxiv.org/oai2)
//	recent_api     "oai" (default) harvests Recent's categories through OAI-PMH
//	               ListRecords; "query" searches them through the query API
//	rate_interval  least time between two requests, e.g. "3s" (default 3s, arXiv's ask)
//	max_attempts   tries per request on 429, 5xx and network errors (default 4)
//	backoff_base   first retry wait, doubled per retry (default 3s)
//	max_backoff    cap of one wait; a longer Retry-After is returned to the caller (default 60s)
//	timeout        bound of one HTTP attempt (default 30s)
//
// Credentials (per call, optional): mailto, added to the User-Agent.
type Arxiv struct {
	log    *slog.Logger
	pacer  *sourcehttp.Pacer // the client's, which paces (and holds) every call
	client *sourcehttp.Client
	chunks chunkCache

	mu  sync.RWMutex
	set settings
}

var _ source.Source = (*Arxiv)(nil)

// New returns the arXiv source with its default settings.
func New(log *slog.Logger) *Arxiv {
	s := defaultSettings()
	pacer := &sourcehttp.Pacer{}
	return &Arxiv{log: log, pacer: pacer, client: newClient(log, s.policy, pacer), set: s}
}

// Describe names the plugin.
func (a *Arxiv) Describe(context.Context, *protocol.DescribeRequest) (*protocol.DescribeResponse, error) {
	return &protocol.DescribeResponse{
		Name:        "arxiv",
		Version:     version,
		Description: "arXiv preprints through the export.arxiv.org query API and OAI-PMH (arXivRaw).",
	}, nil
}

// Configure applies the settings; unknown keys and bad values are refused with a
// BadRequest and the previous settings stay.
func (a *Arxiv) Configure(_ context.Context, req *protocol.ConfigureRequest) (*protocol.ConfigureResponse, error) {
	s := defaultSettings()
	for k, v := range req.Settings {
		var err error
		switch k {
		case "base_url":
			s.baseURL, err = urlSetting(k, v)
		case "oai_base_url":
			s.oaiBaseURL, err = urlSetting(k, v)
		case "recent_api":
			api, ok := v.(string)
			if !ok || (api != recentOAI && api != recentQuery) {
				err = protocol.BadRequest("setting recent_api must be %q or %q, got %v", recentOAI, recentQuery, v)
			}
			s.recentAPI = api
		default:
			var known bool
			if known, err = sourcehttp.ApplyPolicySetting(&s.policy, k, v); known {
				break
			}
			err = protocol.BadRequest("unknown setting %q (known: base_url, oai_base_url, recent_api, rate_interval, max_attempts, backoff_base, max_backoff, timeout)", k)
		}
		if err != nil {
			return nil, err
		}
	}
	a.mu.Lock()
	a.set = s
	a.client.SetPolicy(s.policy)
	a.mu.Unlock()
	a.log.Info("configured", "base_url", s.baseURL, "oai_base_url", s.oaiBaseURL, "recent_api", s.recentAPI, "rate_interval", s.policy.Interval.String(), "max_attempts", s.policy.MaxAttempts)
	return &protocol.ConfigureResponse{}, nil
}

func (a *Arxiv) settings(creds map[string]string) settings {
	a.mu.RLock()
	s := a.set
	a.mu.RUnlock()
	s.userAgent = userAgent(creds)
	return s
}

func userAgent(creds map[string]string) string {
	ua := "lectern-arxiv/" + version + " (+https://github.com/lectern-research/lectern"
	if m := strings.TrimSpace(creds["mailto"]); m != "" {
		ua += "; mailto:" + m
	}
	return ua + ")"
}

// Search runs a free-text query through search_query, with the filters as arXiv
// field clauses (cat:, au:, jr:, submittedDate:[...]). The cursor is the start
// offset of the next page.
func (a *Arxiv) Search(ctx context.Context, req *source.SearchRequest) (*source.Page, error) {
	q := strings.TrimSpace(req.Query)
	if q == "" && req.Filters.IsZero() {
		return nil, protocol.BadRequest("arxiv: a search needs a query or a filter")
	}
	start, err := source.ParseOffset(req.Cursor, math.MaxInt)
	if err != nil {
		return nil, err
	}
	if len(req.Filters.WorkTypes) > 0 && !slices.ContainsFunc(req.Filters.WorkTypes, func(t string) bool {
		return t == "preprint" || t == "article"
	}) {
		return &source.Page{}, nil // arXiv holds preprints only
	}
	var clauses []string
	if q != "" {
		clauses = append(clauses, freeText(q))
	}
	clauses = append(clauses, filterClauses(&req.Filters, time.Now())...)
	sortBy := "relevance"
	if req.Sort == source.SortNewest {
		sortBy = "submittedDate"
	}
	return a.query(ctx, req.Credentials, strings.Join(clauses, " AND "), sortBy, start, source.PageSize(req.PageSize))
}

// Get looks a paper up by arXiv id (with its version when given) through id_list.
// A DOI of arXiv's own (10.48550/arXiv.<id>) counts as an arXiv id; other
// identifiers cannot be resolved here and give NotFound.
//
// When the query API answers a well-formed id with an empty feed, Get asks OAI-PMH
// GetRecord before saying NotFound: the query API's empty answer also comes from a
// lagging or failing search index, while GetRecord reads the metadata store and
// says idDoesNotExist only for ids that truly do not exist. The extra paced request
// is spent on would-be NotFounds only.
func (a *Arxiv) Get(ctx context.Context, req *source.GetRequest) (*source.GetResponse, error) {
	if req.IDs.Empty() {
		return nil, protocol.BadRequest("arxiv: no identifier given")
	}
	raw := paper.TrimArXivID(req.IDs.ArXivID)
	id, v, _ := paper.ParseArXivID(raw)
	if req.IDs.ArXivVersion > 0 && id != "" {
		v = req.IDs.ArXivVersion
	}
	if id == "" && raw == "" {
		id, v, _ = paper.ParseArXivID(paper.ArXivFromDOI(paper.NormalizeDOI(req.IDs.DOI)))
	}
	idList := id
	switch {
	case id != "" && v > 0:
		idList += "v" + strconv.Itoa(v)
	case id == "" && raw != "":
		idList = raw // not an arXiv id as far as we can tell: arXiv's error feed says why
	case id == "":
		return nil, protocol.NotFound("arxiv: no arXiv identifier among %+v", req.IDs)
	}
	s := a.settings(req.Credentials)
	q := url.Values{"id_list": {idList}, "start": {"0"}, "max_results": {"1"}}
	feed, err := a.fetch(ctx, s, q)
	if err != nil {
		return nil, err
	}
	papers := feedPapers(feed)
	if len(papers) > 0 {
		return &source.GetResponse{Paper: papers[0]}, nil
	}
	if id == "" {
		return nil, protocol.NotFound("arxiv: no paper %s", idList)
	}
	p, err := a.getRecord(ctx, s, id, v)
	if err != nil {
		return nil, fmt.Errorf("arxiv: query API found no %s; OAI-PMH GetRecord: %w", idList, err)
	}
	return &source.GetResponse{Paper: p}, nil
}

// Recent lists papers in the categories or on the topics since req.Since. With
// recent_api "oai" and categories given it harvests their OAI sets (recentOAI);
// otherwise, and for topics alone (OAI-PMH has no text search), it searches the
// query API, newest first (sortBy=submittedDate).
func (a *Arxiv) Recent(ctx context.Context, req *source.RecentRequest) (*source.Page, error) {
	if s := a.settings(req.Credentials); s.recentAPI == recentOAI && slices.ContainsFunc(req.Categories, func(c string) bool {
		return strings.TrimSpace(c) != ""
	}) {
		return a.recentOAI(ctx, s, req)
	}
	var alts []string
	for _, c := range req.Categories {
		if c = strings.TrimSpace(c); c != "" {
			alts = append(alts, "cat:"+quoteTerm(c))
		}
	}
	for _, t := range req.Topics {
		if t = strings.TrimSpace(t); t != "" {
			alts = append(alts, "all:"+quoteTerm(t))
		}
	}
	if len(alts) == 0 {
		return nil, protocol.BadRequest("arxiv: recent needs topics or categories")
	}
	start, err := source.ParseOffset(req.Cursor, math.MaxInt)
	if err != nil {
		return nil, err
	}
	clauses := []string{group(alts)}
	if !req.Since.IsZero() {
		clauses = append(clauses, dateRange(req.Since, time.Now().Add(24*time.Hour)))
	}
	return a.query(ctx, req.Credentials, strings.Join(clauses, " AND "), "submittedDate", start, source.PageSize(req.PageSize))
}

// AuthorPapers lists papers by an author name (au:"name") since req.Since, newest
// first. arXiv knows neither ORCID iDs nor author ids, so a name is required.
func (a *Arxiv) AuthorPapers(ctx context.Context, req *source.AuthorPapersRequest) (*source.Page, error) {
	name := strings.TrimSpace(req.Author.Name)
	if name == "" {
		return nil, protocol.BadRequest("arxiv: author papers need an author name (arXiv has no ORCID or author ids)")
	}
	start, err := source.ParseOffset(req.Cursor, math.MaxInt)
	if err != nil {
		return nil, err
	}
	clauses := []string{"au:" + quoteTerm(name)}
	if !req.Since.IsZero() {
		clauses = append(clauses, dateRange(req.Since, time.Now().Add(24*time.Hour)))
	}
	return a.query(ctx, req.Credentials, strings.Join(clauses, " AND "), "submittedDate", start, source.PageSize(req.PageSize))
}

func (a *Arxiv) query(ctx context.Context, creds map[string]string, searchQuery, sortBy string, start, size int) (*source.Page, error) {
	s := a.settings(creds)
	q := url.Values{
		"search_query": {searchQuery},
		"start":        {strconv.Itoa(start)},
		"max_results":  {strconv.Itoa(size)},
		"sortBy":       {sortBy},
		"sortOrder":    {"descending"},
	}
	feed, err := a.fetch(ctx, s, q)
	if err != nil {
		return nil, err
	}
	return feedPage(feed, start, size), nil
}

// fetch calls the query API and decodes the Atom feed, turning arXiv's error feed
// into a BadRequest.
func (a *Arxiv) fetch(ctx context.Context, s settings, q url.Values) (*atomFeed, error) {
	u, err := url.Parse(s.baseURL)
	if err != nil {
		return nil, protocol.BadRequest("arxiv: base_url %q: %v", s.baseURL, err)
	}
	u.RawQuery = q.Encode()
	resp, err := a.get(ctx, s, u.String())
	if err != nil {
		return nil, err
	}
	feed, perr := parseFeed(resp.Body)
	if perr == nil {
		if msg, isErr := feed.errorMessage(); isErr {
			return nil, protocol.BadRequest("arxiv: %s", msg)
		}
	}
	if resp.Status != 200 {
		return nil, errStatus(resp.Status, resp.Body)
	}
	if perr != nil {
		return nil, protocol.Unavailable(perr, "arxiv: unreadable feed: %v", perr)
	}
	return feed, nil
}

// feedPage turns one feed into a page; the next cursor is the next start offset,
// empty once the feed's total is reached or a page comes back empty.
func feedPage(feed *atomFeed, start, size int) *source.Page {
	papers := feedPapers(feed)
	page := &source.Page{Papers: papers, TotalEstimate: int64(feed.TotalResults)}
	if len(papers) > size {
		page.Papers = papers[:size]
	}
	next := start + len(feed.Entries)
	if len(feed.Entries) > 0 && next < feed.TotalResults {
		page.NextCursor = source.OffsetCursor(next)
	}
	return page
}

// fieldSyntax spots a query already written in arXiv's field syntax.
var fieldSyntax = regexp.MustCompile(`\b(ti|au|abs|co|jr|cat|rn|id|all|submittedDate|lastUpdatedDate):`)

// freeText turns a free-text query into arXiv syntax: every word must occur
// (all:word AND ...). A query already in field syntax passes unchanged.
func freeText(q string) string {
	if fieldSyntax.MatchString(q) {
		return "(" + q + ")"
	}
	var terms []string
	for _, w := range strings.Fields(q) {
		w = strings.Trim(w, `"()[]{}:,;`)
		if w == "" || w == "AND" || w == "OR" || w == "ANDNOT" {
			continue
		}
		terms = append(terms, "all:"+quoteTerm(w))
	}
	if len(terms) == 0 {
		return "all:" + quoteTerm(q)
	}
	return strings.Join(terms, " AND ")
}

// quoteTerm quotes a value holding spaces.
func quoteTerm(v string) string {
	v = strings.ReplaceAll(strings.TrimSpace(v), `"`, "")
	if strings.ContainsAny(v, " \t") {
		return `"` + v + `"`
	}
	return v
}

func group(alts []string) string {
	if len(alts) == 1 {
		return alts[0]
	}
	return "(" + strings.Join(alts, " OR ") + ")"
}

func filterClauses(f *source.Filters, now time.Time) []string {
	var out []string
	if len(f.Categories) > 0 {
		var alts []string
		for _, c := range f.Categories {
			alts = append(alts, "cat:"+quoteTerm(c))
		}
		out = append(out, group(alts))
	}
	if len(f.Authors) > 0 {
		var alts []string
		for _, n := range f.Authors {
			alts = append(alts, "au:"+quoteTerm(n))
		}
		out = append(out, group(alts))
	}
	if f.Venue != "" {
		out = append(out, "jr:"+quoteTerm(f.Venue))
	}
	if !f.From.IsZero() || !f.To.IsZero() {
		from := time.Date(1991, 1, 1, 0, 0, 0, 0, time.UTC)
		if !f.From.IsZero() {
			from = f.From.Time()
		}
		to := now.Add(24 * time.Hour)
		if !f.To.IsZero() {
			to = endOf(f.To)
		}
		out = append(out, dateRange(from, to))
	}
	return out
}

// endOf is the last minute a partial date can mean.
func endOf(d paper.Date) time.Time {
	t := d.Time()
	switch d.Precision {
	case paper.PrecisionYear:
		t = t.AddDate(1, 0, 0)
	case paper.PrecisionMonth:
		t = t.AddDate(0, 1, 0)
	default:
		t = t.AddDate(0, 0, 1)
	}
	return t.Add(-time.Minute)
}

func dateRange(from, to time.Time) string {
	const layout = "200601021504"
	return "submittedDate:[" + from.UTC().Format(layout) + " TO " + to.UTC().Format(layout) + "]"
}

// errorsID marks the id of an entry in arXiv's error feed.
const errorsID = "arxiv.org/api/errors"

// The Atom feed of the query API (namespaces Atom, OpenSearch and arXiv's own).

type atomFeed struct {
	XMLName      xml.Name    `xml:"http://www.w3.org/2005/Atom feed"`
	TotalResults int         `xml:"http://a9.com/-/spec/opensearch/1.1/ totalResults"`
	StartIndex   int         `xml:"http://a9.com/-/spec/opensearch/1.1/ startIndex"`
	ItemsPerPage int         `xml:"http://a9.com/-/spec/opensearch/1.1/ itemsPerPage"`
	Entries      []atomEntry `xml:"http://www.w3.org/2005/Atom entry"`
}

type atomEntry struct {
	ID              string         `xml:"http://www.w3.org/2005/Atom id"`
	Title           string         `xml:"http://www.w3.org/2005/Atom title"`
	Summary         string         `xml:"http://www.w3.org/2005/Atom summary"`
	Published       string         `xml:"http://www.w3.org/2005/Atom published"`
	Updated         string         `xml:"http://www.w3.org/2005/Atom updated"`
	Links           []atomLink     `xml:"http://www.w3.org/2005/Atom link"`
	Authors         []atomAuthor   `xml:"http://www.w3.org/2005/Atom author"`
	Categories      []atomCategory `xml:"http://www.w3.org/2005/Atom category"`
	PrimaryCategory atomCategory   `xml:"http://arxiv.org/schemas/atom primary_category"`
	DOI             string         `xml:"http://arxiv.org/schemas/atom doi"`
	JournalRef      string         `xml:"http://arxiv.org/schemas/atom journal_ref"`
	Comment         string         `xml:"http://arxiv.org/schemas/atom comment"`
}

type atomLink struct {
	Href  string `xml:"href,attr"`
	Rel   string `xml:"rel,attr"`
	Type  string `xml:"type,attr"`
	Title string `xml:"title,attr"`
}

type atomAuthor struct {
	Name         string   `xml:"http://www.w3.org/2005/Atom name"`
	Affiliations []string `xml:"http://arxiv.org/schemas/atom affiliation"`
}

type atomCategory struct {
	Term string `xml:"term,attr"`
}

func parseFeed(body []byte) (*atomFeed, error) {
	var f atomFeed
	if err := xml.Unmarshal(body, &f); err != nil {
		return nil, fmt.Errorf("arxiv: decode atom feed: %w", err)
	}
	return &f, nil
}

// errorMessage reports arXiv's error feed: one entry whose id points into
// arxiv.org/api/errors and whose summary says what was wrong.
func (f *atomFeed) errorMessage() (string, bool) {
	for _, e := range f.Entries {
		if strings.Contains(e.ID, errorsID) {
			msg := collapse(e.Summary)
			if msg == "" {
				msg = collapse(e.Title)
			}
			return msg, true
		}
	}
	return "", false
}

func feedPapers(f *atomFeed) []paper.Paper {
	out := make([]paper.Paper, 0, len(f.Entries))
	for i := range f.Entries {
		if p, ok := entryPaper(&f.Entries[i]); ok {
			out = append(out, p)
		}
	}
	return out
}

// entryPaper normalizes one Atom entry. Entries without an arXiv id or a title
// (arXiv's placeholder for an unknown id) are dropped.
func entryPaper(e *atomEntry) (paper.Paper, bool) {
	id, v, _ := paper.ParseArXivID(e.ID)
	title := collapse(e.Title)
	if id == "" || title == "" || strings.Contains(e.ID, errorsID) {
		return paper.Paper{}, false
	}
	p := paper.Paper{
		IDs:        paper.IDs{ArXivID: id, ArXivVersion: v, DOI: paper.NormalizeDOI(firstField(e.DOI))},
		Title:      title,
		Abstract:   collapse(e.Summary),
		Source:     "arxiv",
		OpenAccess: true,
		WorkType:   "preprint",
		Venue:      paper.Venue{Name: "arXiv", Type: "preprint", Publisher: "arXiv"},
	}
	if jr := collapse(e.JournalRef); jr != "" {
		p.Venue = paper.Venue{Name: jr, Type: "journal"}
	}
	if t, err := time.Parse(time.RFC3339, strings.TrimSpace(e.Published)); err == nil {
		p.Published = paper.DayDate(t.UTC())
	}
	if t, err := time.Parse(time.RFC3339, strings.TrimSpace(e.Updated)); err == nil {
		p.UpdatedAt = t.UTC()
	}
	for _, l := range e.Links {
		switch {
		case l.Rel == "alternate" && p.LandingURL == "":
			p.LandingURL = httpsURL(l.Href)
		case (l.Title == "pdf" || l.Type == "application/pdf") && p.PDFURL == "":
			p.PDFURL = httpsURL(l.Href)
		}
	}
	if p.LandingURL == "" {
		p.LandingURL = "https://arxiv.org/abs/" + id
	}
	if p.PDFURL == "" {
		p.PDFURL = "https://arxiv.org/pdf/" + id
	}
	for _, au := range e.Authors {
		name := collapse(au.Name)
		if name == "" {
			continue
		}
		a := paper.Author{Name: name}
		for _, aff := range au.Affiliations {
			if aff = collapse(aff); aff != "" {
				a.Affiliations = append(a.Affiliations, paper.Affiliation{Name: aff})
			}
		}
		p.Authors = append(p.Authors, a)
	}
	if c := strings.TrimSpace(e.PrimaryCategory.Term); c != "" {
		p.Categories = append(p.Categories, c)
	}
	for _, c := range e.Categories {
		if t := strings.TrimSpace(c.Term); t != "" && !slices.Contains(p.Categories, t) {
			p.Categories = append(p.Categories, t)
		}
	}
	return p, true
}

var (
	spaceRE = regexp.MustCompile(`\s+`)
)

func firstField(s string) string {
	if f := strings.Fields(s); len(f) > 0 {
		return f[0]
	}
	return ""
}

func collapse(s string) string {
	return strings.TrimSpace(spaceRE.ReplaceAllString(s, " "))
}

// httpsURL upgrades arXiv's http links to https.
func httpsURL(u string) string {
	u = strings.TrimSpace(u)
	if strings.HasPrefix(u, "http://arxiv.org/") || strings.HasPrefix(u, "http://export.arxiv.org/") {
		return "https://" + strings.TrimPrefix(u, "http://")
	}
	return u
}

// urlSetting reads an absolute http(s) URL, without trailing slashes.
func urlSetting(k string, v any) (string, error) {
	if _, err := sourcehttp.URLSetting(k, v); err != nil {
		return "", err
	}
	return strings.TrimRight(v.(string), "/"), nil
}
