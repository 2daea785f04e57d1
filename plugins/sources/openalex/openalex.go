package main

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/lectern-research/lectern/sdk/paper"
	"github.com/lectern-research/lectern/sdk/protocol"
	"github.com/lectern-research/lectern/sdk/source"
	"github.com/lectern-research/lectern/sdk/sourcehttp"
)

// version is the OpenAlex plugin's own version.
const version = "0.1.0"

// Defaults of the settings.
const (
	defaultBaseURL     = "https://api.openalex.org"
	defaultInterval    = 100 * time.Millisecond
	defaultMaxAttempts = 4
	defaultBackoffBase = time.Second
	defaultMaxBackoff  = 60 * time.Second
	defaultTimeout     = 30 * time.Second
	// maxORValues is how many ids one OR filter (openalex:W1|W2|...) carries.
	maxORValues = 50
)

// selectFields are the Work fields the plugin reads; asking only for them keeps
// responses small.
var selectFields = strings.Join([]string{
	"id", "doi", "title", "display_name", "publication_year", "publication_date", "ids", "language",
	"primary_location", "best_oa_location", "open_access", "authorships", "biblio", "cited_by_count",
	"referenced_works", "abstract_inverted_index", "type", "primary_topic", "topics", "updated_date",
}, ",")

// settings are the plugin's Configure settings.
type settings struct {
	baseURL string
	policy  sourcehttp.Policy
}

func defaultSettings() settings {
	return settings{
		baseURL: defaultBaseURL,
		policy:  policy(defaultInterval, defaultMaxAttempts, defaultBackoffBase, defaultMaxBackoff, defaultTimeout),
	}
}

// OpenAlex is the OpenAlex paper source over api.openalex.org/works. Its settings
// (all optional):
//
//	base_url       the API root (default https://api.openalex.org)
//	rate_interval  least time between two requests, e.g. "100ms" (default 100ms: 10/s)
//	max_attempts   tries per request on 429, 5xx and network errors (default 4)
//	backoff_base   first retry wait, doubled per retry (default 1s)
//	max_backoff    cap of one wait; a longer Retry-After is returned to the caller (default 60s)
//	timeout        bound of one HTTP attempt (default 30s)
//
// Credentials (per call, optional): api_key (sent as api_key=) and mailto (sent as
// mailto= and in the User-Agent).
type OpenAlex struct {
	log    *slog.Logger
	client *sourcehttp.Client

	mu  sync.RWMutex
	set settings
}

var _ source.WithCitations = (*OpenAlex)(nil)

// New returns the OpenAlex source with its default settings.
func New(log *slog.Logger) *OpenAlex {
	s := defaultSettings()
	return &OpenAlex{log: log, client: newClient(log, s.policy), set: s}
}

// Describe names the plugin.
func (o *OpenAlex) Describe(context.Context, *protocol.DescribeRequest) (*protocol.DescribeResponse, error) {
	return &protocol.DescribeResponse{
		Name:        "openalex",
		Version:     version,
		Description: "OpenAlex works: search, look-ups by DOI, PMID or OpenAlex id, and the citation graph.",
	}, nil
}

// Configure applies the settings; unknown keys and bad values are refused with a
// BadRequest and the previous settings stay.
func (o *OpenAlex) Configure(_ context.Context, req *protocol.ConfigureRequest) (*protocol.ConfigureResponse, error) {
	s := defaultSettings()
	for k, v := range req.Settings {
		var err error
		switch k {
		case "base_url":
			s.baseURL, err = urlSetting(k, v)
		default:
			var known bool
			if known, err = sourcehttp.ApplyPolicySetting(&s.policy, k, v); known {
				break
			}
			err = protocol.BadRequest("unknown setting %q (known: base_url, rate_interval, max_attempts, backoff_base, max_backoff, timeout)", k)
		}
		if err != nil {
			return nil, err
		}
	}
	o.mu.Lock()
	o.set = s
	o.client.SetPolicy(s.policy)
	o.mu.Unlock()
	o.log.Info("configured", "base_url", s.baseURL, "rate_interval", s.policy.Interval.String(), "max_attempts", s.policy.MaxAttempts)
	return &protocol.ConfigureResponse{}, nil
}

// call is one request's settings and credentials.
type call struct {
	s         settings
	mailto    string
	apiKey    string
	userAgent string
}

func (o *OpenAlex) call(creds map[string]string) call {
	o.mu.RLock()
	s := o.set
	o.mu.RUnlock()
	c := call{s: s, mailto: strings.TrimSpace(creds["mailto"]), apiKey: strings.TrimSpace(creds["api_key"])}
	ua := "lectern-openalex/" + version + " (+https://github.com/lectern-research/lectern"
	if c.mailto != "" {
		ua += "; mailto:" + c.mailto
	}
	c.userAgent = ua + ")"
	return c
}

// Search runs /works?search= with the filters as OpenAlex filters, cursor-paged.
func (o *OpenAlex) Search(ctx context.Context, req *source.SearchRequest) (*source.Page, error) {
	q := strings.TrimSpace(req.Query)
	if q == "" && req.Filters.IsZero() {
		return nil, protocol.BadRequest("openalex: a search needs a query or a filter")
	}
	f := &req.Filters
	var filters []string
	search := q
	if !f.From.IsZero() {
		filters = append(filters, "from_publication_date:"+f.From.Time().Format(time.DateOnly))
	}
	if !f.To.IsZero() {
		filters = append(filters, "to_publication_date:"+endOf(f.To).Format(time.DateOnly))
	}
	for _, a := range f.Authors {
		if a = filterValue(a); a != "" {
			filters = append(filters, "raw_author_name.search:"+a)
		}
	}
	if ids, names := splitCategories(f.Categories); len(ids) > 0 || len(names) > 0 {
		if len(ids) > 0 {
			filters = append(filters, "topics.id:"+strings.Join(ids, "|"))
		}
		if len(names) > 0 {
			search = strings.TrimSpace(search + " " + orTerms(names))
		}
	}
	if f.Venue != "" {
		search = strings.TrimSpace(search + " " + quote(f.Venue))
	}
	if f.OpenAccessOnly {
		filters = append(filters, "open_access.is_oa:true")
	}
	if len(f.WorkTypes) > 0 {
		var ts []string
		for _, t := range f.WorkTypes {
			if t = filterValue(t); t != "" {
				ts = append(ts, t)
			}
		}
		filters = append(filters, "type:"+strings.Join(ts, "|"))
	}
	sortBy := ""
	switch req.Sort {
	case source.SortNewest:
		sortBy = "publication_date:desc"
	case source.SortMostCited:
		sortBy = "cited_by_count:desc"
	}
	return o.list(ctx, req.Credentials, search, filters, sortBy, req.Cursor, req.PageSize)
}

// Get looks a work up by OpenAlex id, DOI, PMID, PMCID or arXiv id (through
// arXiv's DataCite DOI), trying each identifier given until one is found.
func (o *OpenAlex) Get(ctx context.Context, req *source.GetRequest) (*source.GetResponse, error) {
	if req.IDs.Empty() {
		return nil, protocol.BadRequest("openalex: no identifier given")
	}
	w, err := o.getWork(ctx, o.call(req.Credentials), req.IDs)
	if err != nil {
		return nil, err
	}
	p, ok := workPaper(w)
	if !ok {
		return nil, protocol.NotFound("openalex: work for %+v has no title", req.IDs)
	}
	return &source.GetResponse{Paper: p}, nil
}

func (o *OpenAlex) getWork(ctx context.Context, c call, ids paper.IDs) (*work, error) {
	var keys []string
	if id := openAlexID(ids.OpenAlexID); id != "" {
		keys = append(keys, id)
	}
	if doi := paper.TrimDOI(ids.DOI); doi != "" {
		keys = append(keys, "doi:"+doi)
	}
	if ids.PubMedID != "" {
		keys = append(keys, "pmid:"+strings.TrimSpace(ids.PubMedID))
	}
	if ids.PMCID != "" {
		keys = append(keys, "pmcid:"+strings.TrimSpace(ids.PMCID))
	}
	if ids.ArXivID != "" {
		keys = append(keys, "doi:10.48550/arxiv."+strings.ToLower(strings.TrimSpace(ids.ArXivID)))
	}
	for _, key := range keys {
		var w work
		err := o.getJSON(ctx, c, "/works/"+key, url.Values{"select": {selectFields}}, &w)
		if protocol.CodeOf(err) == protocol.CodeNotFound {
			continue
		}
		if err != nil {
			return nil, err
		}
		return &w, nil
	}
	return nil, protocol.NotFound("openalex: no work for %+v", ids)
}

// Recent lists works on the topics or in the categories published since req.Since,
// newest first.
func (o *OpenAlex) Recent(ctx context.Context, req *source.RecentRequest) (*source.Page, error) {
	ids, names := splitCategories(req.Categories)
	for _, t := range req.Topics {
		if t = strings.TrimSpace(t); t != "" {
			names = append(names, t)
		}
	}
	if len(ids) == 0 && len(names) == 0 {
		return nil, protocol.BadRequest("openalex: recent needs topics or categories")
	}
	var filters []string
	if !req.Since.IsZero() {
		filters = append(filters, "from_publication_date:"+req.Since.UTC().Format(time.DateOnly))
	}
	search := orTerms(names)
	if len(ids) > 0 {
		if search != "" {
			// OpenAlex ANDs a search and a filter; topics on their own keep the OR.
			names = append(names, ids...)
			search = orTerms(names)
		} else {
			filters = append(filters, "topics.id:"+strings.Join(ids, "|"))
		}
	}
	return o.list(ctx, req.Credentials, search, filters, "publication_date:desc", req.Cursor, req.PageSize)
}

// AuthorPapers lists an author's works since req.Since, newest first: by OpenAlex
// author id, else ORCID, else raw author name.
func (o *OpenAlex) AuthorPapers(ctx context.Context, req *source.AuthorPapersRequest) (*source.Page, error) {
	a := req.Author
	var filters []string
	switch {
	case openAlexAuthorID(a.SourceAuthorID) != "":
		filters = append(filters, "authorships.author.id:"+openAlexAuthorID(a.SourceAuthorID))
	case bareORCID(a.ORCID) != "":
		filters = append(filters, "authorships.author.orcid:"+bareORCID(a.ORCID))
	case filterValue(a.Name) != "":
		filters = append(filters, "raw_author_name.search:"+filterValue(a.Name))
	default:
		return nil, protocol.BadRequest("openalex: author papers need an author id, ORCID or name")
	}
	if !req.Since.IsZero() {
		filters = append(filters, "from_publication_date:"+req.Since.UTC().Format(time.DateOnly))
	}
	return o.list(ctx, req.Credentials, "", filters, "publication_date:desc", req.Cursor, req.PageSize)
}

// Citations lists the works citing the paper (filter cites:W...).
func (o *OpenAlex) Citations(ctx context.Context, req *source.CitationsRequest) (*source.Page, error) {
	id, err := o.resolveID(ctx, req.Credentials, req.IDs)
	if err != nil {
		return nil, err
	}
	return o.list(ctx, req.Credentials, "", []string{"cites:" + id}, "", req.Cursor, req.PageSize)
}

// References lists the works the paper cites (its referenced_works), in the order
// OpenAlex gives them. The cursor is the offset into that list.
func (o *OpenAlex) References(ctx context.Context, req *source.CitationsRequest) (*source.Page, error) {
	if req.IDs.Empty() {
		return nil, protocol.BadRequest("openalex: no identifier given")
	}
	offset := 0
	if req.Cursor != "" {
		n, err := strconv.Atoi(strings.TrimPrefix(req.Cursor, "r:"))
		if err != nil || n < 0 || !strings.HasPrefix(req.Cursor, "r:") {
			return nil, protocol.BadRequest("openalex: cursor %q is not one this source issued", req.Cursor)
		}
		offset = n
	}
	c := o.call(req.Credentials)
	w, err := o.getWork(ctx, c, req.IDs)
	if err != nil {
		return nil, err
	}
	refs := w.ReferencedWorks
	if offset > len(refs) {
		return nil, protocol.BadRequest("openalex: cursor %q is past the references", req.Cursor)
	}
	end := min(offset+min(source.PageSize(req.PageSize), maxORValues), len(refs))
	batch := make([]string, 0, end-offset)
	for _, r := range refs[offset:end] {
		if id := openAlexID(r); id != "" {
			batch = append(batch, id)
		}
	}
	page := &source.Page{TotalEstimate: int64(len(refs))}
	if end < len(refs) {
		page.NextCursor = "r:" + strconv.Itoa(end)
	}
	if len(batch) == 0 {
		return page, nil
	}
	var lr listResponse
	q := url.Values{"filter": {"openalex:" + strings.Join(batch, "|")}, "per_page": {strconv.Itoa(len(batch))}, "select": {selectFields}}
	if err := o.getJSON(ctx, c, "/works", q, &lr); err != nil {
		return nil, err
	}
	byID := map[string]paper.Paper{}
	for i := range lr.Results {
		if p, ok := workPaper(&lr.Results[i]); ok {
			byID[p.IDs.OpenAlexID] = p
		}
	}
	for _, id := range batch {
		if p, ok := byID[id]; ok {
			page.Papers = append(page.Papers, p)
		}
	}
	return page, nil
}

func (o *OpenAlex) resolveID(ctx context.Context, creds map[string]string, ids paper.IDs) (string, error) {
	if ids.Empty() {
		return "", protocol.BadRequest("openalex: no identifier given")
	}
	if id := openAlexID(ids.OpenAlexID); id != "" {
		return id, nil
	}
	w, err := o.getWork(ctx, o.call(creds), ids)
	if err != nil {
		return "", err
	}
	return openAlexID(w.ID), nil
}

// list runs one cursor-paged /works query. The plugin's cursor is
// "c:<works seen so far>:<OpenAlex next_cursor>"; the page ends the listing when
// OpenAlex has no next cursor, gives a short page, or the count is reached.
func (o *OpenAlex) list(ctx context.Context, creds map[string]string, search string, filters []string, sortBy, cursor string, size int) (*source.Page, error) {
	seen, upstream, err := source.ParseUpstreamCursor(cursor)
	if err != nil {
		return nil, err
	}
	size = source.PageSize(size)
	q := url.Values{"per_page": {strconv.Itoa(size)}, "cursor": {upstream}, "select": {selectFields}}
	if search != "" {
		q.Set("search", search)
	}
	if len(filters) > 0 {
		q.Set("filter", strings.Join(filters, ","))
	}
	if sortBy != "" {
		q.Set("sort", sortBy)
	}
	var lr listResponse
	if err := o.getJSON(ctx, o.call(creds), "/works", q, &lr); err != nil {
		return nil, err
	}
	page := &source.Page{TotalEstimate: lr.Meta.Count}
	for i := range lr.Results {
		if p, ok := workPaper(&lr.Results[i]); ok {
			page.Papers = append(page.Papers, p)
		}
	}
	if len(page.Papers) > size {
		page.Papers = page.Papers[:size]
	}
	seen += len(lr.Results)
	if lr.Meta.NextCursor != nil {
		page.NextCursor = source.NextUpstreamCursor(seen, len(lr.Results), size, lr.Meta.Count, *lr.Meta.NextCursor)
	}
	return page, nil
}

// getJSON fetches base_url+path with the credentials and decodes a 200 answer.
func (o *OpenAlex) getJSON(ctx context.Context, c call, path string, q url.Values, into any) error {
	u, err := url.Parse(c.s.baseURL)
	if err != nil {
		return protocol.BadRequest("openalex: base_url %q: %v", c.s.baseURL, err)
	}
	u.Path = strings.TrimRight(u.Path, "/") + path
	if c.mailto != "" {
		q.Set("mailto", c.mailto)
	}
	if c.apiKey != "" {
		q.Set("api_key", c.apiKey)
	}
	u.RawQuery = q.Encode()
	resp, err := o.get(ctx, c, u.String())
	if err != nil {
		return err
	}
	if resp.Status != 200 {
		return errStatus(resp.Status, resp.Body)
	}
	if err := json.Unmarshal(resp.Body, into); err != nil {
		return protocol.Unavailable(err, "openalex: unreadable answer: %v", err)
	}
	return nil
}

// The OpenAlex JSON shapes the plugin reads.
type listResponse struct {
	Meta struct {
		Count      int64   `json:"count"`
		NextCursor *string `json:"next_cursor"`
	} `json:"meta"`
	Results []work `json:"results"`
}

type work struct {
	ID              string         `json:"id"`
	DOI             string         `json:"doi"`
	Title           string         `json:"title"`
	DisplayName     string         `json:"display_name"`
	PublicationYear int            `json:"publication_year"`
	PublicationDate string         `json:"publication_date"`
	IDs             map[string]any `json:"ids"`
	Language        string         `json:"language"`
	PrimaryLocation *location      `json:"primary_location"`
	BestOALocation  *location      `json:"best_oa_location"`
	OpenAccess      struct {
		IsOA  bool   `json:"is_oa"`
		OAURL string `json:"oa_url"`
	} `json:"open_access"`
	Authorships []struct {
		Author struct {
			ID          string `json:"id"`
			DisplayName string `json:"display_name"`
			ORCID       string `json:"orcid"`
		} `json:"author"`
		RawAuthorName string `json:"raw_author_name"`
		Institutions  []struct {
			DisplayName string `json:"display_name"`
			ROR         string `json:"ror"`
			CountryCode string `json:"country_code"`
		} `json:"institutions"`
	} `json:"authorships"`
	Biblio struct {
		Volume    string `json:"volume"`
		Issue     string `json:"issue"`
		FirstPage string `json:"first_page"`
		LastPage  string `json:"last_page"`
	} `json:"biblio"`
	CitedByCount          *int64           `json:"cited_by_count"`
	ReferencedWorks       []string         `json:"referenced_works"`
	AbstractInvertedIndex map[string][]int `json:"abstract_inverted_index"`
	Type                  string           `json:"type"`
	PrimaryTopic          *topic           `json:"primary_topic"`
	Topics                []topic          `json:"topics"`
	UpdatedDate           string           `json:"updated_date"`
}

type location struct {
	IsOA           bool   `json:"is_oa"`
	LandingPageURL string `json:"landing_page_url"`
	PDFURL         string `json:"pdf_url"`
	License        string `json:"license"`
	Source         *struct {
		DisplayName          string   `json:"display_name"`
		ISSN                 []string `json:"issn"`
		Type                 string   `json:"type"`
		HostOrganizationName string   `json:"host_organization_name"`
	} `json:"source"`
}

type topic struct {
	ID          string `json:"id"`
	DisplayName string `json:"display_name"`
}

// workPaper normalizes one Work; a work without a title or identifiers is
// dropped.
func workPaper(w *work) (paper.Paper, bool) {
	title := collapse(w.Title)
	if title == "" {
		title = collapse(w.DisplayName)
	}
	p := paper.Paper{
		IDs: paper.IDs{
			OpenAlexID: openAlexID(w.ID),
			DOI:        paper.NormalizeDOI(w.DOI),
			PubMedID:   trimURL(idString(w.IDs, "pmid"), "pubmed.ncbi.nlm.nih.gov/"),
			PMCID:      pmcid(idString(w.IDs, "pmcid")),
		},
		Title:         title,
		Abstract:      invertedAbstract(w.AbstractInvertedIndex),
		Published:     publicationDate(w.PublicationDate, w.PublicationYear),
		Source:        "openalex",
		CitationCount: w.CitedByCount,
		OpenAccess:    w.OpenAccess.IsOA,
		WorkType:      w.Type,
		Language:      w.Language,
		UpdatedAt:     updatedAt(w.UpdatedDate),
	}
	if !pmidRE.MatchString(p.IDs.PubMedID) {
		p.IDs.PubMedID = ""
	}
	if p.IDs.DOI == "" {
		p.IDs.DOI = paper.NormalizeDOI(idString(w.IDs, "doi"))
	}
	p.IDs.ArXivID = paper.ArXivFromDOI(p.IDs.DOI)
	if title == "" || p.IDs.Empty() {
		return paper.Paper{}, false
	}
	if pl := w.PrimaryLocation; pl != nil {
		p.LandingURL = httpURL(pl.LandingPageURL)
		if pl.Source != nil {
			p.Venue = paper.Venue{
				Name: collapse(pl.Source.DisplayName), Type: venueType(pl.Source.Type),
				Publisher: pl.Source.HostOrganizationName, ISSN: pl.Source.ISSN,
			}
		}
		if p.IDs.ArXivID == "" {
			p.IDs.ArXivID = arxivFromURL(pl.LandingPageURL)
		}
	}
	p.Venue.Volume, p.Venue.Issue, p.Venue.Pages = w.Biblio.Volume, w.Biblio.Issue, pages(w.Biblio.FirstPage, w.Biblio.LastPage)
	if p.LandingURL == "" && p.IDs.DOI != "" {
		p.LandingURL = "https://doi.org/" + p.IDs.DOI
	}
	if p.LandingURL == "" && strings.HasPrefix(w.ID, "https://") {
		p.LandingURL = w.ID
	}
	for _, l := range []*location{w.BestOALocation, w.PrimaryLocation} {
		if l == nil {
			continue
		}
		if p.PDFURL == "" {
			p.PDFURL = httpURL(l.PDFURL)
		}
		if p.License == "" {
			p.License = l.License
		}
	}
	if p.PDFURL == "" && looksLikePDF(w.OpenAccess.OAURL) {
		p.PDFURL = httpURL(w.OpenAccess.OAURL)
	}
	if p.PDFURL == "" && p.IDs.ArXivID != "" {
		p.PDFURL = "https://arxiv.org/pdf/" + p.IDs.ArXivID
	}
	for _, a := range w.Authorships {
		name := collapse(a.Author.DisplayName)
		if name == "" {
			name = collapse(a.RawAuthorName)
		}
		if name == "" {
			continue
		}
		au := paper.Author{Name: name, ORCID: bareORCID(a.Author.ORCID), SourceAuthorID: openAlexAuthorID(a.Author.ID)}
		for _, in := range a.Institutions {
			if n := collapse(in.DisplayName); n != "" {
				au.Affiliations = append(au.Affiliations, paper.Affiliation{Name: n, ROR: in.ROR, Country: in.CountryCode})
			}
		}
		p.Authors = append(p.Authors, au)
	}
	for _, r := range w.ReferencedWorks {
		if id := openAlexID(r); id != "" {
			p.References = append(p.References, paper.IDs{OpenAlexID: id})
		}
	}
	if w.PrimaryTopic != nil && w.PrimaryTopic.DisplayName != "" {
		p.Categories = append(p.Categories, w.PrimaryTopic.DisplayName)
	}
	for _, t := range w.Topics {
		if t.DisplayName != "" && !slices.Contains(p.Categories, t.DisplayName) {
			p.Categories = append(p.Categories, t.DisplayName)
		}
	}
	return p, true
}

// invertedAbstract rebuilds the abstract text from OpenAlex's inverted index (word
// to positions). A position holds one word (the first, in word order, when the
// index repeats one), and the text is at most four times the index as JSON: a
// long word listed at thousands of positions once made 10 MB of abstract out of
// 21 kB of answer, 1.6 GB out of the 32 MB a client reads.
func invertedAbstract(idx map[string][]int) string {
	if len(idx) == 0 {
		return ""
	}
	type wp struct {
		pos  int
		word string
	}
	var words []wp
	size := 0 // the index's size as JSON, at least: each word, and two bytes a position
	for w, ps := range idx {
		size += len(w) + 2*len(ps)
		for _, p := range ps {
			if p >= 0 {
				words = append(words, wp{p, w})
			}
		}
	}
	sort.Slice(words, func(i, j int) bool {
		if words[i].pos != words[j].pos {
			return words[i].pos < words[j].pos
		}
		return words[i].word < words[j].word
	})
	var b strings.Builder
	for i, w := range words {
		if i > 0 && w.pos == words[i-1].pos {
			continue
		}
		if b.Len()+len(w.word)+1 > 4*size {
			break
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(w.word)
	}
	return collapse(b.String())
}

// publicationDate prefers publication_date (day precision), else the year.
func publicationDate(date string, year int) paper.Date {
	if t, err := time.Parse(time.DateOnly, strings.TrimSpace(date)); err == nil {
		return paper.DayDate(t)
	}
	if year >= 1000 && year <= 9999 {
		return paper.Date{Year: year, Precision: paper.PrecisionYear}
	}
	return paper.Date{}
}

func updatedAt(s string) time.Time {
	for _, layout := range []string{"2006-01-02T15:04:05.999999999", time.RFC3339Nano, time.DateOnly} {
		if t, err := time.Parse(layout, strings.TrimSpace(s)); err == nil {
			return t.UTC()
		}
	}
	return time.Time{}
}

func venueType(t string) string {
	switch t {
	case "journal", "conference", "repository", "book":
		return t
	case "ebook platform", "book series":
		return "book"
	case "":
		return ""
	}
	return "other"
}

func pages(first, last string) string {
	first, last = strings.TrimSpace(first), strings.TrimSpace(last)
	if last == "" || last == first {
		return first
	}
	if first == "" {
		return last
	}
	return first + "-" + last
}

var (
	openAlexIDRE = regexp.MustCompile(`^W\d+$`)
	authorIDRE   = regexp.MustCompile(`^A\d+$`)
	topicIDRE    = regexp.MustCompile(`^T\d+$`)
	orcidRE      = regexp.MustCompile(`\d{4}-\d{4}-\d{4}-\d{3}[\dX]`)
	pmidRE       = regexp.MustCompile(`^\d{1,9}$`)
	pmcidRE      = regexp.MustCompile(`PMC\d+`)
	arxivAbsRE   = regexp.MustCompile(`arxiv\.org/(?:abs|pdf)/(\d{4}\.\d{4,5}|[a-z\-]+(?:\.[A-Z]{2})?/\d{7})`)
	spaceRE      = regexp.MustCompile(`\s+`)
)

// openAlexID returns the bare work id of "https://openalex.org/W123" or "W123".
func openAlexID(s string) string {
	s = strings.ToUpper(trimURL(strings.TrimSpace(s), "openalex.org/"))
	if openAlexIDRE.MatchString(s) {
		return s
	}
	return ""
}

func openAlexAuthorID(s string) string {
	s = strings.ToUpper(trimURL(strings.TrimSpace(s), "openalex.org/"))
	if authorIDRE.MatchString(s) {
		return s
	}
	return ""
}

// trimURL keeps what follows marker in s (the whole s when marker is absent).
func trimURL(s, marker string) string {
	if i := strings.Index(s, marker); i >= 0 {
		return s[i+len(marker):]
	}
	return s
}

func idString(ids map[string]any, k string) string {
	s, _ := ids[k].(string)
	return s
}

func pmcid(s string) string {
	return pmcidRE.FindString(strings.ToUpper(s))
}

// bareORCID returns "0000-0002-5390-2695" from the iD or its https://orcid.org URL.
func bareORCID(s string) string {
	return orcidRE.FindString(strings.ToUpper(s))
}

func arxivFromURL(u string) string {
	if m := arxivAbsRE.FindStringSubmatch(u); m != nil {
		return m[1]
	}
	return ""
}

func looksLikePDF(u string) bool {
	l := strings.ToLower(u)
	return strings.HasSuffix(l, ".pdf") || strings.Contains(l, "/pdf/") || strings.Contains(l, "-pdf/")
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

// splitCategories separates OpenAlex topic ids (T123, or their URL) from
// free-text category names.
func splitCategories(cats []string) (ids, names []string) {
	for _, c := range cats {
		c = strings.TrimSpace(c)
		if id := strings.ToUpper(trimURL(c, "openalex.org/")); topicIDRE.MatchString(id) {
			ids = append(ids, id)
		} else if c != "" {
			names = append(names, c)
		}
	}
	return ids, names
}

// filterValue makes a value safe inside a filter (commas separate filters, pipes
// alternatives).
func filterValue(s string) string {
	return collapse(strings.NewReplacer(",", " ", "|", " ", ":", " ").Replace(s))
}

func quote(s string) string {
	s = collapse(strings.ReplaceAll(s, `"`, " "))
	if strings.Contains(s, " ") {
		return `"` + s + `"`
	}
	return s
}

// orTerms joins terms into an OpenAlex boolean search: "a b" OR c.
func orTerms(terms []string) string {
	var qs []string
	for _, t := range terms {
		if t = quote(t); t != "" {
			qs = append(qs, t)
		}
	}
	return strings.Join(qs, " OR ")
}

// endOf is the last day a partial date can mean.
func endOf(d paper.Date) time.Time {
	t := d.Time()
	switch d.Precision {
	case paper.PrecisionYear:
		return t.AddDate(1, 0, -1)
	case paper.PrecisionMonth:
		return t.AddDate(0, 1, -1)
	}
	return t
}

// urlSetting reads an absolute http(s) URL, without trailing slashes.
func urlSetting(k string, v any) (string, error) {
	if _, err := sourcehttp.URLSetting(k, v); err != nil {
		return "", err
	}
	return strings.TrimRight(v.(string), "/"), nil
}
