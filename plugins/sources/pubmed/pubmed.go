package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
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
	pluginName = "pubmed"
	version    = "0.1.0"
)

// Defaults of the settings.
const (
	defaultBaseURL         = "https://eutils.ncbi.nlm.nih.gov/entrez/eutils"
	defaultInterval        = 340 * time.Millisecond // 3 requests a second without a key
	defaultIntervalWithKey = 100 * time.Millisecond // 10 a second with one
	defaultMaxRetries      = 4
	defaultBackoff         = time.Second
	defaultMaxBackoff      = 30 * time.Second
	defaultMaxRetryAfter   = time.Minute
	defaultTimeout         = 30 * time.Second
)

// searchCap: esearch pages through the first 10,000 PMIDs of a search only.
const searchCap = 10000

// Open ends of date ranges, as esearch wants both mindate and maxdate.
const (
	earliestDate = "1000/01/01"
	latestDate   = "3000/12/31"
)

// Link names of elink for the citation graph inside PubMed.
const (
	linkCitedIn = "pubmed_pubmed_citedin"
	linkRefs    = "pubmed_pubmed_refs"
)

// publicationTypes maps Lectern work types to PubMed publication types.
var publicationTypes = map[string]string{
	"article": "Journal Article", "review": "Review", "preprint": "Preprint", "dataset": "Dataset",
	"meta-analysis": "Meta-Analysis", "clinical-trial": "Clinical Trial", "case-report": "Case Reports",
	"editorial": "Editorial", "letter": "Letter", "systematic-review": "Systematic Review",
}

// PubMed is the PubMed paper source, over NCBI E-utilities. Its settings (all
// optional):
//
//	base_url                E-utilities root (default https://eutils.ncbi.nlm.nih.gov/entrez/eutils)
//	rate_interval           least time between two requests without an API key ("340ms")
//	rate_interval_with_key  the same when the call carries an api_key ("100ms")
//	max_retries             retries on 429, 5xx and network errors (4)
//	backoff                 first retry delay, doubled per retry ("1s")
//	max_backoff             bound on one retry delay ("30s")
//	max_retry_after         longest Retry-After waited for within a call; longer ones
//	                        fail at once with RateLimited ("60s")
//	timeout                 bound on one HTTP exchange ("30s")
//
// Durations are Go duration strings or numbers of seconds. The optional credentials
// "api_key" and "email" go to NCBI with every request, with tool=lectern.
type PubMed struct {
	log    *slog.Logger
	tr     *transport
	client atomic.Pointer[client]
	now    func() time.Time
}

var _ source.WithCitations = (*PubMed)(nil)

// New returns the source with its default settings.
func New(log *slog.Logger) *PubMed {
	cfg, err := parseSettings(nil)
	if err != nil {
		panic(fmt.Sprintf("pubmed: default settings: %v", err))
	}
	s := &PubMed{log: log, tr: newTransport(cfg, log), now: time.Now}
	s.client.Store(newClient(cfg, s.tr))
	return s
}

// Describe names the plugin.
func (s *PubMed) Describe(context.Context, *protocol.DescribeRequest) (*protocol.DescribeResponse, error) {
	return &protocol.DescribeResponse{
		Name:        pluginName,
		Version:     version,
		Description: "PubMed through NCBI E-utilities: search, records by PMID, PMCID or DOI, authors, and PubMed's cited-by and reference links.",
	}, nil
}

// Configure applies the settings; on a bad one it keeps the previous settings.
func (s *PubMed) Configure(_ context.Context, req *protocol.ConfigureRequest) (*protocol.ConfigureResponse, error) {
	cfg, err := parseSettings(req.Settings)
	if err != nil {
		return nil, err
	}
	s.tr.setPolicies(cfg)
	s.client.Store(newClient(cfg, s.tr))
	return &protocol.ConfigureResponse{}, nil
}

func parseSettings(settings map[string]any) (clientConfig, error) {
	base, _ := url.Parse(defaultBaseURL)
	p := sourcehttp.Policy{
		Interval: defaultInterval, MaxAttempts: defaultMaxRetries + 1, Backoff: defaultBackoff, MaxBackoff: defaultMaxBackoff,
		Jitter: 0.2, MaxRetryAfter: defaultMaxRetryAfter, Timeout: defaultTimeout,
	}
	intervalWithKey := defaultIntervalWithKey
	for k, v := range settings {
		var err error
		switch k {
		case "base_url":
			base, err = sourcehttp.URLSetting(k, v)
		case "rate_interval":
			p.Interval, err = sourcehttp.DurationSetting(k, v)
		case "rate_interval_with_key":
			intervalWithKey, err = sourcehttp.DurationSetting(k, v)
		case "backoff":
			p.Backoff, err = sourcehttp.DurationSetting(k, v)
		case "max_backoff":
			p.MaxBackoff, err = sourcehttp.DurationSetting(k, v)
		case "max_retry_after":
			p.MaxRetryAfter, err = sourcehttp.DurationSetting(k, v)
		case "timeout":
			p.Timeout, err = sourcehttp.PositiveDurationSetting(k, v)
		case "max_retries":
			var n int
			n, err = sourcehttp.IntSetting(k, v, 0, 10)
			p.MaxAttempts = n + 1
		default:
			err = protocol.BadRequest("unknown setting %q (known: base_url, rate_interval, rate_interval_with_key, max_retries, backoff, max_backoff, max_retry_after, timeout)", k)
		}
		if err != nil {
			return clientConfig{}, err
		}
	}
	withKey := p
	withKey.Interval = intervalWithKey
	return clientConfig{baseURL: base, policy: p, policyWithKey: withKey}, nil
}

func (s *PubMed) api() *client { return s.client.Load() }

// Search runs esearch with the query and filters in PubMed's query syntax, then
// efetch for the page's records. From/To bound the publication date (pdat),
// Authors become [Author], Venue [Journal], Categories [MeSH Terms], WorkTypes
// [Publication Type] and OpenAccessOnly "free full text"[Filter]. SortNewest is
// esearch's pub_date order; PubMed has no citation order, so SortMostCited is
// relevance.
func (s *PubMed) Search(ctx context.Context, req *source.SearchRequest) (*source.Page, error) {
	f := &req.Filters
	if strings.TrimSpace(req.Query) == "" && f.IsZero() {
		return nil, protocol.BadRequest("a search needs a query or a filter")
	}
	offset, err := source.ParseOffset(req.Cursor, searchCap)
	if err != nil {
		return nil, err
	}
	p := searchParams{term: searchTerm(req.Query, f), retstart: offset, retmax: min(source.PageSize(req.PageSize), searchCap-offset), sort: "relevance"}
	if req.Sort == source.SortNewest {
		p.sort = "pub_date"
	}
	if !f.From.IsZero() || !f.To.IsZero() {
		p.datetype, p.mindate, p.maxdate = "pdat", earliestDate, latestDate
		if !f.From.IsZero() {
			p.mindate = f.From.Time().Format("2006/01/02")
		}
		if !f.To.IsZero() {
			p.maxdate = periodEnd(f.To).Format("2006/01/02")
		}
	}
	return s.searchPage(ctx, credentialsOf(req.Credentials), p, "search")
}

// Get returns the record for the PMID, else for the PMCID or DOI found through
// esearch, fetched with efetch.
func (s *PubMed) Get(ctx context.Context, req *source.GetRequest) (*source.GetResponse, error) {
	if req.IDs.Empty() {
		return nil, protocol.BadRequest("no identifier given")
	}
	creds := credentialsOf(req.Credentials)
	pmid, err := s.resolve(ctx, creds, req.IDs)
	if err != nil {
		return nil, err
	}
	papers, err := s.fetch(ctx, creds, []string{pmid})
	if err != nil {
		return nil, fmt.Errorf("pubmed: get %s: %w", pmid, err)
	}
	if len(papers) == 0 {
		return nil, protocol.NotFound("pubmed has no record %s", pmid)
	}
	return &source.GetResponse{Paper: papers[0]}, nil
}

// Recent lists records added to PubMed (Entrez date, edat) since req.Since on any of
// the topics or MeSH categories, most recently added first.
func (s *PubMed) Recent(ctx context.Context, req *source.RecentRequest) (*source.Page, error) {
	var alts []string
	for _, t := range req.Topics {
		if t = strings.TrimSpace(t); t != "" {
			alts = append(alts, "("+t+")")
		}
	}
	for _, c := range req.Categories {
		if c = quote(c); c != "" {
			alts = append(alts, `"`+c+`"[MeSH Terms]`)
		}
	}
	if len(alts) == 0 {
		return nil, protocol.BadRequest("recent needs topics or categories")
	}
	offset, err := source.ParseOffset(req.Cursor, searchCap)
	if err != nil {
		return nil, err
	}
	p := searchParams{term: strings.Join(alts, " OR "), retstart: offset, retmax: min(source.PageSize(req.PageSize), searchCap-offset)}
	if len(alts) > 1 {
		p.term = "(" + p.term + ")"
	}
	if !req.Since.IsZero() {
		p.datetype, p.mindate, p.maxdate = "edat", req.Since.UTC().Format("2006/01/02"), latestDate
	}
	return s.searchPage(ctx, credentialsOf(req.Credentials), p, "recent")
}

// AuthorPapers lists an author's records ("Name"[Author], or ORCID[auid] when no
// name is given) published since req.Since, newest first.
func (s *PubMed) AuthorPapers(ctx context.Context, req *source.AuthorPapersRequest) (*source.Page, error) {
	a := req.Author
	var term string
	switch {
	case quote(a.Name) != "":
		term = `"` + quote(a.Name) + `"[Author]`
	case quote(a.ORCID) != "":
		term = quote(a.ORCID) + "[auid]"
	case a.SourceAuthorID != "":
		return nil, protocol.BadRequest("pubmed has no author ids; give a name or an ORCID")
	default:
		return nil, protocol.BadRequest("no author given")
	}
	offset, err := source.ParseOffset(req.Cursor, searchCap)
	if err != nil {
		return nil, err
	}
	p := searchParams{term: term, retstart: offset, retmax: min(source.PageSize(req.PageSize), searchCap-offset), sort: "pub_date"}
	if !req.Since.IsZero() {
		p.datetype, p.mindate, p.maxdate = "pdat", req.Since.UTC().Format("2006/01/02"), latestDate
	}
	return s.searchPage(ctx, credentialsOf(req.Credentials), p, "author papers")
}

// Citations lists the PubMed records citing the paper (elink pubmed_pubmed_citedin,
// which knows citations made by PubMed Central articles).
func (s *PubMed) Citations(ctx context.Context, req *source.CitationsRequest) (*source.Page, error) {
	return s.linked(ctx, req, linkCitedIn)
}

// References lists the PubMed records the paper cites (elink pubmed_pubmed_refs).
func (s *PubMed) References(ctx context.Context, req *source.CitationsRequest) (*source.Page, error) {
	return s.linked(ctx, req, linkRefs)
}

func (s *PubMed) linked(ctx context.Context, req *source.CitationsRequest, linkName string) (*source.Page, error) {
	if req.IDs.Empty() {
		return nil, protocol.BadRequest("no identifier given")
	}
	offset, err := source.ParseOffset(req.Cursor, 1<<30)
	if err != nil {
		return nil, err
	}
	creds := credentialsOf(req.Credentials)
	pmid, err := s.resolve(ctx, creds, req.IDs)
	if err != nil {
		return nil, err
	}
	ids, err := s.api().links(ctx, creds, pmid, linkName)
	if err != nil {
		return nil, fmt.Errorf("pubmed: %s of %s: %w", linkName, pmid, err)
	}
	if offset > len(ids) {
		return nil, protocol.BadRequest("cursor %q is not one this source issued", req.Cursor)
	}
	end := min(offset+source.PageSize(req.PageSize), len(ids))
	papers, err := s.fetch(ctx, creds, ids[offset:end])
	if err != nil {
		return nil, fmt.Errorf("pubmed: %s of %s: %w", linkName, pmid, err)
	}
	page := &source.Page{Papers: papers, TotalEstimate: int64(len(ids))}
	if end < len(ids) {
		page.NextCursor = strconv.Itoa(end)
	}
	return page, nil
}

// searchPage runs esearch and fetches the page's records.
func (s *PubMed) searchPage(ctx context.Context, creds credentials, p searchParams, what string) (*source.Page, error) {
	res, err := s.api().esearch(ctx, creds, p)
	if err != nil {
		return nil, fmt.Errorf("pubmed: %s: %w", what, err)
	}
	if len(res.ErrorList.PhraseNotFound) > 0 || len(res.ErrorList.FieldNotFound) > 0 {
		s.log.DebugContext(ctx, "pubmed: esearch dropped terms", "phrases", res.ErrorList.PhraseNotFound, "fields", res.ErrorList.FieldNotFound)
	}
	papers, err := s.fetch(ctx, creds, res.IDs)
	if err != nil {
		return nil, fmt.Errorf("pubmed: %s: %w", what, err)
	}
	page := &source.Page{Papers: papers, TotalEstimate: res.Count}
	if end := p.retstart + len(res.IDs); len(res.IDs) > 0 && int64(end) < min(res.Count, searchCap) {
		page.NextCursor = strconv.Itoa(end)
	}
	return page, nil
}

// fetch returns the records of pmids in their order: efetch's full records, and
// esummary's short ones for ids efetch did not return. Ids PubMed does not know are
// left out.
func (s *PubMed) fetch(ctx context.Context, creds credentials, pmids []string) ([]paper.Paper, error) {
	if len(pmids) == 0 {
		return nil, nil
	}
	now := s.now()
	byID := map[string]paper.Paper{}
	set, err := s.api().efetch(ctx, creds, pmids)
	switch {
	case errors.Is(err, protocol.ErrNotFound):
		return nil, nil
	case err != nil:
		return nil, err
	}
	for i := range set.Articles {
		if p, ok := set.Articles[i].toPaper(now); ok {
			byID[p.IDs.PubMedID] = p
		}
	}
	for i := range set.Books {
		if p, ok := set.Books[i].toPaper(); ok {
			byID[p.IDs.PubMedID] = p
		}
	}
	var missing []string
	for _, id := range pmids {
		if _, ok := byID[id]; !ok {
			missing = append(missing, id)
		}
	}
	if len(missing) > 0 {
		sum, err := s.api().esummary(ctx, creds, missing)
		if err != nil && !errors.Is(err, protocol.ErrNotFound) && !errors.Is(err, protocol.ErrBadRequest) {
			return nil, err
		}
		if sum != nil {
			for i := range sum.DocSums {
				if p, ok := sum.DocSums[i].toPaper(); ok {
					byID[p.IDs.PubMedID] = p
				}
			}
		}
	}
	out := make([]paper.Paper, 0, len(pmids))
	for _, id := range pmids {
		if p, ok := byID[id]; ok {
			out = append(out, p)
			delete(byID, id) // an id listed twice is returned once
		}
	}
	return out, nil
}

// resolve finds the PMID of a paper: its PubMedID, else the record esearch finds
// for its PMCID or DOI.
func (s *PubMed) resolve(ctx context.Context, creds credentials, ids paper.IDs) (string, error) {
	if pmid := strings.TrimSpace(ids.PubMedID); pmidRE.MatchString(pmid) {
		return pmid, nil
	}
	var terms []string
	if pmc := normalizePMCID(ids.PMCID); pmc != "" {
		terms = append(terms, pmc+"[PMCID]")
	}
	if doi := paper.NormalizeDOI(ids.DOI); doi != "" {
		terms = append(terms, `"`+quote(doi)+`"[DOI]`)
	}
	for _, term := range terms {
		res, err := s.api().esearch(ctx, creds, searchParams{term: term, retmax: 1})
		if err != nil {
			return "", fmt.Errorf("pubmed: look up %s: %w", term, err)
		}
		if len(res.IDs) > 0 && pmidRE.MatchString(res.IDs[0]) {
			return res.IDs[0], nil
		}
	}
	if len(terms) == 0 {
		return "", protocol.NotFound("pubmed cannot look up any of %+v", ids)
	}
	return "", protocol.NotFound("pubmed has no record for %+v", ids)
}

// searchTerm renders a query and filters in PubMed's query syntax.
func searchTerm(query string, f *source.Filters) string {
	var parts []string
	if q := strings.TrimSpace(query); q != "" {
		parts = append(parts, "("+q+")")
	}
	anyOf := func(values []string, tag string, mapping map[string]string) {
		var alt []string
		for _, v := range values {
			if m, ok := mapping[strings.ToLower(strings.TrimSpace(v))]; ok {
				v = m
			}
			if v = quote(v); v != "" {
				alt = append(alt, `"`+v+`"[`+tag+`]`)
			}
		}
		switch len(alt) {
		case 0:
		case 1:
			parts = append(parts, alt[0])
		default:
			parts = append(parts, "("+strings.Join(alt, " OR ")+")")
		}
	}
	anyOf(f.Authors, "Author", nil)
	if v := quote(f.Venue); v != "" {
		parts = append(parts, `"`+v+`"[Journal]`)
	}
	anyOf(f.Categories, "MeSH Terms", nil)
	anyOf(f.WorkTypes, "Publication Type", publicationTypes)
	if f.OpenAccessOnly {
		parts = append(parts, `"free full text"[Filter]`)
	}
	if len(parts) == 0 {
		return "all[sb]"
	}
	return strings.Join(parts, " AND ")
}

// quote makes a value safe inside a quoted PubMed phrase.
func quote(s string) string {
	return strings.Join(strings.Fields(strings.NewReplacer(`"`, " ", "[", " ", "]", " ").Replace(s)), " ")
}
