package main

import (
	"context"
	"encoding/json"
	"html"
	"log/slog"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/lectern-research/lectern/sdk/paper"
	"github.com/lectern-research/lectern/sdk/protocol"
	"github.com/lectern-research/lectern/sdk/source"
	"github.com/lectern-research/lectern/sdk/sourcehttp"
)

// version is the Crossref plugin's own version.
const version = "0.1.0"

// Defaults of the settings.
const (
	defaultBaseURL        = "https://api.crossref.org"
	defaultInterval       = 100 * time.Millisecond
	defaultMaxConcurrency = 3
	defaultMaxAttempts    = 4
	defaultBackoffBase    = time.Second
	defaultMaxBackoff     = 60 * time.Second
	defaultTimeout        = 30 * time.Second
)

// settings are the plugin's Configure settings.
type settings struct {
	baseURL string
	policy  sourcehttp.Policy
}

func defaultSettings() settings {
	return settings{
		baseURL: defaultBaseURL,
		policy:  policy(defaultInterval, defaultMaxConcurrency, defaultMaxAttempts, defaultBackoffBase, defaultMaxBackoff, defaultTimeout),
	}
}

// Crossref is the Crossref paper source over api.crossref.org/works. Its settings
// (all optional):
//
//	base_url         the API root (default https://api.crossref.org)
//	rate_interval    least time between two requests, e.g. "100ms" (default 100ms: the polite pool's 10/s)
//	max_concurrency  requests in flight at once (default 3, the polite pool's limit)
//	max_attempts     tries per request on 429, 5xx and network errors (default 4)
//	backoff_base     first retry wait, doubled per retry (default 1s)
//	max_backoff      cap of one wait; a longer Retry-After is returned to the caller (default 60s)
//	timeout          bound of one HTTP attempt (default 30s)
//
// Credentials (per call, optional): mailto (sent as mailto= and in the User-Agent,
// for the polite pool) and api_key (a Metadata Plus token, sent as
// Crossref-Plus-API-Token).
type Crossref struct {
	log    *slog.Logger
	client *sourcehttp.Client

	mu  sync.RWMutex
	set settings
}

var _ source.Source = (*Crossref)(nil)

// New returns the Crossref source with its default settings.
func New(log *slog.Logger) *Crossref {
	s := defaultSettings()
	return &Crossref{log: log, client: newClient(log, s.policy), set: s}
}

// Describe names the plugin.
func (c *Crossref) Describe(context.Context, *protocol.DescribeRequest) (*protocol.DescribeResponse, error) {
	return &protocol.DescribeResponse{
		Name:        "crossref",
		Version:     version,
		Description: "Crossref works: DOI metadata, search, recent publications and author listings.",
	}, nil
}

// Configure applies the settings; unknown keys and bad values are refused with a
// BadRequest and the previous settings stay.
func (c *Crossref) Configure(_ context.Context, req *protocol.ConfigureRequest) (*protocol.ConfigureResponse, error) {
	s := defaultSettings()
	for k, v := range req.Settings {
		var err error
		switch k {
		case "base_url":
			s.baseURL, err = urlSetting(k, v)
		case "max_concurrency":
			s.policy.MaxInFlight, err = sourcehttp.IntSetting(k, v, 1, 100)
		default:
			var known bool
			if known, err = sourcehttp.ApplyPolicySetting(&s.policy, k, v); known {
				break
			}
			err = protocol.BadRequest("unknown setting %q (known: base_url, rate_interval, max_concurrency, max_attempts, backoff_base, max_backoff, timeout)", k)
		}
		if err != nil {
			return nil, err
		}
	}
	c.mu.Lock()
	c.set = s
	c.client.SetPolicy(s.policy)
	c.mu.Unlock()
	c.log.Info("configured", "base_url", s.baseURL, "rate_interval", s.policy.Interval.String(), "max_concurrency", s.policy.MaxInFlight)
	return &protocol.ConfigureResponse{}, nil
}

// call is one request's settings and credentials.
type call struct {
	s         settings
	mailto    string
	plusToken string
	userAgent string
}

func (c *Crossref) call(creds map[string]string) call {
	c.mu.RLock()
	s := c.set
	c.mu.RUnlock()
	cl := call{s: s, mailto: strings.TrimSpace(creds["mailto"]), plusToken: strings.TrimSpace(creds["api_key"])}
	ua := "lectern-crossref/" + version + " (https://github.com/lectern-research/lectern"
	if cl.mailto != "" {
		ua += "; mailto:" + cl.mailto
	}
	cl.userAgent = ua + ")"
	return cl
}

// Search runs /works?query= with the filters as Crossref filters and field
// queries, cursor-paged.
func (c *Crossref) Search(ctx context.Context, req *source.SearchRequest) (*source.Page, error) {
	q := strings.TrimSpace(req.Query)
	f := &req.Filters
	if q == "" && f.IsZero() {
		return nil, protocol.BadRequest("crossref: a search needs a query or a filter")
	}
	params := url.Values{}
	if q != "" {
		params.Set("query", q)
	}
	var filters []string
	if !f.From.IsZero() {
		filters = append(filters, "from-pub-date:"+f.From.String())
	}
	if !f.To.IsZero() {
		filters = append(filters, "until-pub-date:"+f.To.String())
	}
	for _, t := range f.WorkTypes {
		if ct := crossrefType(t); ct != "" {
			filters = append(filters, "type:"+ct)
		}
	}
	if len(f.Authors) > 0 {
		params.Set("query.author", strings.Join(f.Authors, " "))
	}
	if f.Venue != "" {
		params.Set("query.container-title", f.Venue)
	}
	if len(f.Categories) > 0 {
		params.Set("query.bibliographic", strings.Join(f.Categories, " "))
	}
	switch req.Sort {
	case source.SortNewest:
		params.Set("sort", "published")
		params.Set("order", "desc")
	case source.SortMostCited:
		params.Set("sort", "is-referenced-by-count")
		params.Set("order", "desc")
	}
	return c.list(ctx, req.Credentials, params, filters, req.Cursor, req.PageSize)
}

// Get fetches /works/{doi}. Crossref knows works by DOI only; other identifiers
// give NotFound.
func (c *Crossref) Get(ctx context.Context, req *source.GetRequest) (*source.GetResponse, error) {
	if req.IDs.Empty() {
		return nil, protocol.BadRequest("crossref: no identifier given")
	}
	doi := paper.TrimDOI(req.IDs.DOI)
	if doi == "" {
		return nil, protocol.NotFound("crossref: no DOI among %+v", req.IDs)
	}
	var env struct {
		Message item `json:"message"`
	}
	if err := c.getJSON(ctx, c.call(req.Credentials), "/works/"+doi, url.Values{}, &env); err != nil {
		return nil, err
	}
	p, ok := itemPaper(&env.Message)
	if !ok {
		return nil, protocol.NotFound("crossref: %s has no title", doi)
	}
	return &source.GetResponse{Paper: p}, nil
}

// Recent lists works on the topics (or, lacking topics, the categories as
// bibliographic terms) published since req.Since, newest first.
func (c *Crossref) Recent(ctx context.Context, req *source.RecentRequest) (*source.Page, error) {
	terms := nonEmpty(req.Topics)
	if len(terms) == 0 {
		terms = nonEmpty(req.Categories)
	}
	if len(terms) == 0 {
		return nil, protocol.BadRequest("crossref: recent needs topics or categories")
	}
	params := url.Values{"query": {strings.Join(terms, " ")}, "sort": {"published"}, "order": {"desc"}}
	var filters []string
	if !req.Since.IsZero() {
		filters = append(filters, "from-pub-date:"+req.Since.UTC().Format(time.DateOnly))
	}
	return c.list(ctx, req.Credentials, params, filters, req.Cursor, req.PageSize)
}

// AuthorPapers lists an author's works since req.Since, newest first: by ORCID when
// given (filter orcid:), else by name (query.author).
func (c *Crossref) AuthorPapers(ctx context.Context, req *source.AuthorPapersRequest) (*source.Page, error) {
	params := url.Values{"sort": {"published"}, "order": {"desc"}}
	var filters []string
	switch {
	case bareORCID(req.Author.ORCID) != "":
		filters = append(filters, "orcid:"+bareORCID(req.Author.ORCID))
	case strings.TrimSpace(req.Author.Name) != "":
		params.Set("query.author", strings.TrimSpace(req.Author.Name))
	default:
		return nil, protocol.BadRequest("crossref: author papers need an ORCID or a name")
	}
	if !req.Since.IsZero() {
		filters = append(filters, "from-pub-date:"+req.Since.UTC().Format(time.DateOnly))
	}
	return c.list(ctx, req.Credentials, params, filters, req.Cursor, req.PageSize)
}

// list runs one cursor-paged /works query. The plugin's cursor is
// "c:<items seen so far>:<Crossref next-cursor>"; Crossref hands out a next-cursor
// even on the last page, so the listing ends on a short page or at total-results.
func (c *Crossref) list(ctx context.Context, creds map[string]string, params url.Values, filters []string, cursor string, size int) (*source.Page, error) {
	seen, upstream, err := source.ParseUpstreamCursor(cursor)
	if err != nil {
		return nil, err
	}
	size = source.PageSize(size)
	params.Set("rows", strconv.Itoa(size))
	params.Set("cursor", upstream)
	if len(filters) > 0 {
		params.Set("filter", strings.Join(filters, ","))
	}
	var env struct {
		Message struct {
			TotalResults int64  `json:"total-results"`
			NextCursor   string `json:"next-cursor"`
			Items        []item `json:"items"`
		} `json:"message"`
	}
	if err := c.getJSON(ctx, c.call(creds), "/works", params, &env); err != nil {
		return nil, err
	}
	m := env.Message
	page := &source.Page{TotalEstimate: m.TotalResults}
	for i := range m.Items {
		if p, ok := itemPaper(&m.Items[i]); ok {
			page.Papers = append(page.Papers, p)
		}
	}
	if len(page.Papers) > size {
		page.Papers = page.Papers[:size]
	}
	seen += len(m.Items)
	page.NextCursor = source.NextUpstreamCursor(seen, len(m.Items), size, m.TotalResults, m.NextCursor)
	return page, nil
}

// getJSON fetches base_url+path with the credentials and decodes a 200 answer.
func (c *Crossref) getJSON(ctx context.Context, cl call, path string, q url.Values, into any) error {
	u, err := url.Parse(cl.s.baseURL)
	if err != nil {
		return protocol.BadRequest("crossref: base_url %q: %v", cl.s.baseURL, err)
	}
	u.Path = strings.TrimRight(u.Path, "/") + path
	if cl.mailto != "" {
		q.Set("mailto", cl.mailto)
	}
	u.RawQuery = q.Encode()
	resp, err := c.get(ctx, cl, u.String())
	if err != nil {
		return err
	}
	if resp.Status != 200 {
		return errStatus(resp.Status, resp.Body)
	}
	if err := json.Unmarshal(resp.Body, into); err != nil {
		return protocol.Unavailable(err, "crossref: unreadable answer: %v", err)
	}
	return nil
}

// item is the Crossref work shape the plugin reads.
type item struct {
	DOI            string   `json:"DOI"`
	Title          []string `json:"title"`
	ContainerTitle []string `json:"container-title"`
	Author         []struct {
		Given       string `json:"given"`
		Family      string `json:"family"`
		Name        string `json:"name"`
		ORCID       string `json:"ORCID"`
		Affiliation []struct {
			Name string `json:"name"`
		} `json:"affiliation"`
	} `json:"author"`
	Abstract        string    `json:"abstract"`
	Issued          dateParts `json:"issued"`
	Published       dateParts `json:"published"`
	PublishedPrint  dateParts `json:"published-print"`
	PublishedOnline dateParts `json:"published-online"`
	Volume          string    `json:"volume"`
	Issue           string    `json:"issue"`
	Page            string    `json:"page"`
	Publisher       string    `json:"publisher"`
	ISSN            []string  `json:"ISSN"`
	URL             string    `json:"URL"`
	Link            []struct {
		URL         string `json:"URL"`
		ContentType string `json:"content-type"`
	} `json:"link"`
	IsReferencedByCount *int64 `json:"is-referenced-by-count"`
	Reference           []struct {
		DOI string `json:"DOI"`
	} `json:"reference"`
	Type    string   `json:"type"`
	Subject []string `json:"subject"`
	License []struct {
		URL string `json:"URL"`
	} `json:"license"`
	Language string `json:"language"`
	Indexed  struct {
		DateTime string `json:"date-time"`
	} `json:"indexed"`
}

// dateParts is Crossref's partial date: {"date-parts": [[2024, 5, 8]]}, with one,
// two or three parts, or [[null]] when unknown.
type dateParts struct {
	DateParts [][]*int `json:"date-parts"`
}

// date converts to a paper.Date with the precision the parts give.
func (d dateParts) date() paper.Date {
	if len(d.DateParts) == 0 {
		return paper.Date{}
	}
	var parts []int
	for _, p := range d.DateParts[0] {
		if p == nil {
			break
		}
		parts = append(parts, *p)
	}
	var out paper.Date
	switch {
	case len(parts) >= 3:
		out = paper.Date{Year: parts[0], Month: parts[1], Day: parts[2], Precision: paper.PrecisionDay}
	case len(parts) == 2:
		out = paper.Date{Year: parts[0], Month: parts[1], Precision: paper.PrecisionMonth}
	case len(parts) == 1:
		out = paper.Date{Year: parts[0], Precision: paper.PrecisionYear}
	}
	if out.Validate() != nil {
		return paper.Date{}
	}
	return out
}

// itemPaper normalizes one Crossref work; one without DOI or any title is dropped.
func itemPaper(it *item) (paper.Paper, bool) {
	doi := paper.NormalizeDOI(it.DOI)
	title := plain(first(it.Title))
	container := plain(first(it.ContainerTitle))
	if title == "" && container != "" && (it.Type == "journal-issue" || it.Type == "journal-volume") {
		title = container
		if it.Volume != "" {
			title += " " + it.Volume
		}
		if it.Issue != "" {
			title += " (" + it.Issue + ")"
		}
	}
	if doi == "" || title == "" {
		return paper.Paper{}, false
	}
	p := paper.Paper{
		IDs:           paper.IDs{DOI: doi, ArXivID: paper.ArXivFromDOI(doi)},
		Title:         title,
		Abstract:      jatsText(it.Abstract),
		Source:        "crossref",
		CitationCount: it.IsReferencedByCount,
		Categories:    it.Subject,
		WorkType:      workType(it.Type),
		Language:      it.Language,
		LandingURL:    "https://doi.org/" + doi,
		Venue: paper.Venue{
			Name: container, Type: venueType(it.Type), Volume: it.Volume, Issue: it.Issue, Pages: it.Page,
			Publisher: it.Publisher, ISSN: it.ISSN,
		},
	}
	for _, d := range []dateParts{it.Issued, it.Published, it.PublishedPrint, it.PublishedOnline} {
		if p.Published = d.date(); !p.Published.IsZero() {
			break
		}
	}
	if t, err := time.Parse(time.RFC3339, it.Indexed.DateTime); err == nil {
		p.UpdatedAt = t.UTC()
	}
	for _, l := range it.Link {
		if strings.EqualFold(l.ContentType, "application/pdf") && httpURL(l.URL) != "" {
			p.PDFURL = l.URL
			break
		}
	}
	if len(it.License) > 0 {
		p.License = it.License[0].URL
		p.OpenAccess = strings.Contains(p.License, "creativecommons.org")
	}
	for _, a := range it.Author {
		given, family := collapse(a.Given), collapse(a.Family)
		name := collapse(strings.TrimSpace(given + " " + family))
		if name == "" {
			name = collapse(a.Name)
		}
		if name == "" {
			continue
		}
		au := paper.Author{Name: name, GivenName: given, FamilyName: family, ORCID: bareORCID(a.ORCID)}
		for _, af := range a.Affiliation {
			if n := collapse(af.Name); n != "" {
				au.Affiliations = append(au.Affiliations, paper.Affiliation{Name: n})
			}
		}
		p.Authors = append(p.Authors, au)
	}
	for _, r := range it.Reference {
		if d := paper.NormalizeDOI(r.DOI); d != "" {
			p.References = append(p.References, paper.IDs{DOI: d})
		}
	}
	return p, true
}

func first(ss []string) string {
	if len(ss) > 0 {
		return ss[0]
	}
	return ""
}

func nonEmpty(ss []string) []string {
	var out []string
	for _, s := range ss {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

var (
	tagRE       = regexp.MustCompile(`<[^>]*>`)
	leadTitleRE = regexp.MustCompile(`(?is)^\s*<(?:jats:)?title>\s*abstract\s*</(?:jats:)?title>`)
	titleRE     = regexp.MustCompile(`(?is)<(?:jats:)?title>(.*?)</(?:jats:)?title>`)
	blockEndRE  = regexp.MustCompile(`(?i)</(?:jats:)?(?:p|sec)>`)
	spaceRE     = regexp.MustCompile(`\s+`)
	orcidRE     = regexp.MustCompile(`\d{4}-\d{4}-\d{4}-\d{3}[\dX]`)
)

// crossrefType maps a Lectern work type to Crossref's; "" when Crossref has none.
func crossrefType(t string) string {
	switch t {
	case "article":
		return "journal-article"
	case "preprint":
		return "posted-content"
	case "book-chapter", "dataset", "book", "dissertation", "report":
		return t
	case "review":
		return "peer-review"
	}
	return ""
}

// jatsText turns a JATS abstract into plain text: a leading "Abstract" heading
// goes, section headings become "Heading." sentences, tags go, entities decode.
func jatsText(s string) string {
	if strings.TrimSpace(s) == "" {
		return ""
	}
	s = leadTitleRE.ReplaceAllString(s, "")
	s = titleRE.ReplaceAllString(s, " $1. ")
	s = blockEndRE.ReplaceAllString(s, " ")
	return collapse(html.UnescapeString(tagRE.ReplaceAllString(s, "")))
}

// plain strips markup (titles carry <i>, <sub>, ...) and decodes entities.
func plain(s string) string {
	return collapse(html.UnescapeString(tagRE.ReplaceAllString(s, "")))
}

func workType(t string) string {
	switch t {
	case "journal-article", "proceedings-article":
		return "article"
	case "posted-content":
		return "preprint"
	case "book-chapter", "dataset":
		return t
	case "peer-review":
		return "review"
	case "":
		return ""
	}
	return "other"
}

func venueType(t string) string {
	switch t {
	case "journal-article", "journal-issue", "journal-volume":
		return "journal"
	case "proceedings-article":
		return "conference"
	case "book-chapter", "book", "reference-entry", "monograph", "edited-book":
		return "book"
	case "posted-content":
		return "repository"
	case "":
		return ""
	}
	return "other"
}

// bareORCID returns "0000-0003-3902-2613" from the iD or its https://orcid.org URL.
func bareORCID(s string) string {
	return orcidRE.FindString(strings.ToUpper(s))
}

func httpURL(u string) string {
	u = strings.TrimSpace(u)
	if strings.HasPrefix(u, "https://") || strings.HasPrefix(u, "http://") {
		return u
	}
	return ""
}

func collapse(s string) string {
	return strings.TrimSpace(spaceRE.ReplaceAllString(s, " "))
}

// urlSetting reads an absolute http(s) URL, without trailing slashes.
func urlSetting(k string, v any) (string, error) {
	if _, err := sourcehttp.URLSetting(k, v); err != nil {
		return "", err
	}
	return strings.TrimRight(v.(string), "/"), nil
}
