package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/lectern-research/lectern/sdk/protocol"
	"github.com/lectern-research/lectern/sdk/sourcehttp"
)

// maxBody bounds one response body; the Graph API itself caps answers at 10 MB.
const maxBody = 16 << 20

// clientConfig is what Configure decides about talking to the Graph API.
type clientConfig struct {
	baseURL *url.URL
	policy  sourcehttp.Policy
}

// newHTTP returns the paced, retrying HTTP client of the Graph API, shared by every
// call and kept across Configure: it retries 429 and 5xx answers with exponential
// backoff honouring Retry-After, and turns failures into protocol errors.
func newHTTP(p sourcehttp.Policy, log *slog.Logger) *sourcehttp.Client {
	return sourcehttp.New(sourcehttp.Config{
		Name:      "semantic scholar",
		Policy:    p,
		Logger:    log,
		Header:    http.Header{"Accept": {"application/json"}, "User-Agent": {"lectern-semanticscholar/" + version}},
		MaxBody:   maxBody,
		CheckFunc: check,
	})
}

// client is the thin client of the Semantic Scholar Graph API
// (api.semanticscholar.org/graph/v1) for one set of settings.
type client struct {
	cfg  clientConfig
	http *sourcehttp.Client
}

func newClient(cfg clientConfig, h *sourcehttp.Client) *client {
	return &client{cfg: cfg, http: h}
}

// get fetches path (below the base URL) with query into out.
func (c *client) get(ctx context.Context, apiKey, path string, query url.Values, out any) error {
	return c.do(ctx, http.MethodGet, apiKey, path, query, nil, out)
}

// do runs one API request with rate limiting and retries, decoding a 200 answer
// into out.
func (c *client) do(ctx context.Context, method, apiKey, path string, query url.Values, body any, out any) error {
	u := *c.cfg.baseURL
	u.Path = strings.TrimRight(u.Path, "/") + path
	u.RawPath = ""
	u.RawQuery = query.Encode()
	req := &sourcehttp.Request{Method: method, URL: u.String(), Header: http.Header{}, Label: "semantic scholar " + method + " " + u.Path}
	if body != nil {
		payload, err := json.Marshal(body)
		if err != nil {
			return fmt.Errorf("semanticscholar: encode request: %w", err)
		}
		req.Body = payload
		req.Header.Set("Content-Type", "application/json")
	}
	if apiKey != "" {
		req.Header.Set("x-api-key", apiKey)
	}
	resp, err := c.http.Do(ctx, req)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(resp.Body, out); err != nil {
		return protocol.Unavailable(err, "%s: malformed answer: %v", req.Label, err)
	}
	return nil
}

// check accepts 200 answers, retries 429 and 5xx ones, and maps the rest with
// statusError.
func check(req *sourcehttp.Request, resp *sourcehttp.Response) error {
	switch {
	case resp.Status == http.StatusOK:
		return nil
	case resp.Status == http.StatusTooManyRequests:
		return protocol.RateLimited(0, "%s: too many requests", req.Label)
	case resp.Status >= 500:
		return protocol.Unavailable(nil, "%s: HTTP %d: %s", req.Label, resp.Status, apiMessage(resp.Body))
	}
	return statusError(req.Label, resp.Status, resp.Body)
}

// statusError maps a final non-retryable status to a typed error.
func statusError(endpoint string, status int, data []byte) error {
	msg := apiMessage(data)
	switch status {
	case http.StatusNotFound:
		return protocol.NotFound("%s: %s", endpoint, msg)
	case http.StatusBadRequest, http.StatusUnprocessableEntity:
		return protocol.BadRequest("%s: %s", endpoint, msg)
	case http.StatusUnauthorized, http.StatusForbidden:
		return protocol.Unauthorized("%s: HTTP %d: %s", endpoint, status, msg)
	}
	return protocol.Unavailable(nil, "%s: HTTP %d: %s", endpoint, status, msg)
}

// apiMessage pulls the error text out of a Graph API error body ({"error": "..."}
// or {"message": "..."}), else a short prefix of the body.
func apiMessage(data []byte) string {
	var e struct {
		Error   string `json:"error"`
		Message string `json:"message"`
	}
	if json.Unmarshal(data, &e) == nil {
		if e.Error != "" {
			return e.Error
		}
		if e.Message != "" {
			return e.Message
		}
	}
	s := strings.TrimSpace(string(data))
	if len(s) > 200 {
		s = s[:200] + "..."
	}
	if s == "" {
		return "no details"
	}
	return s
}

// The Graph API's answers, as far as Lectern reads them.

// s2Paper is a paper object.
type s2Paper struct {
	PaperID          string                     `json:"paperId"`
	ExternalIDs      map[string]json.RawMessage `json:"externalIds"`
	URL              string                     `json:"url"`
	Title            string                     `json:"title"`
	Abstract         string                     `json:"abstract"`
	Venue            string                     `json:"venue"`
	PublicationVenue *s2Venue                   `json:"publicationVenue"`
	Year             int                        `json:"year"`
	PublicationDate  string                     `json:"publicationDate"`
	Journal          *s2Journal                 `json:"journal"`
	Authors          []s2Author                 `json:"authors"`
	CitationCount    *int64                     `json:"citationCount"`
	IsOpenAccess     bool                       `json:"isOpenAccess"`
	OpenAccessPDF    *s2PDF                     `json:"openAccessPdf"`
	FieldsOfStudy    []string                   `json:"fieldsOfStudy"`
	S2FieldsOfStudy  []struct {
		Category string `json:"category"`
	} `json:"s2FieldsOfStudy"`
	PublicationTypes []string  `json:"publicationTypes"`
	References       []s2Paper `json:"references"`
}

// s2Venue is a publicationVenue object.
type s2Venue struct {
	Name string `json:"name"`
	Type string `json:"type"`
	ISSN string `json:"issn"`
}

// s2Journal is a journal object.
type s2Journal struct {
	Name   string `json:"name"`
	Pages  string `json:"pages"`
	Volume string `json:"volume"`
}

// s2PDF is an openAccessPdf object.
type s2PDF struct {
	URL     string `json:"url"`
	Status  string `json:"status"`
	License string `json:"license"`
}

// s2Author is an author object (in a paper or from the author endpoints).
type s2Author struct {
	AuthorID     string                     `json:"authorId"`
	Name         string                     `json:"name"`
	Affiliations []string                   `json:"affiliations"`
	ExternalIDs  map[string]json.RawMessage `json:"externalIds"`
	Papers       []s2Paper                  `json:"papers"`
}

// s2PaperPage is a paginated list of papers (/paper/search, /author/{id}/papers).
type s2PaperPage struct {
	Total  int64     `json:"total"`
	Offset int       `json:"offset"`
	Next   *int      `json:"next"`
	Data   []s2Paper `json:"data"`
}

// s2EdgePage is a page of /paper/{id}/citations or /references.
type s2EdgePage struct {
	Offset int  `json:"offset"`
	Next   *int `json:"next"`
	Data   []struct {
		CitingPaper *s2Paper `json:"citingPaper"`
		CitedPaper  *s2Paper `json:"citedPaper"`
	} `json:"data"`
}

// s2AuthorPage is a page of /author/search.
type s2AuthorPage struct {
	Total  int64      `json:"total"`
	Offset int        `json:"offset"`
	Next   *int       `json:"next"`
	Data   []s2Author `json:"data"`
}

// Field lists asked of each endpoint. Nested citations and references are only
// available on the single-paper and batch endpoints.
const (
	listFields   = "paperId,externalIds,url,title,abstract,venue,publicationVenue,year,publicationDate,journal,authors,citationCount,isOpenAccess,openAccessPdf,fieldsOfStudy,s2FieldsOfStudy,publicationTypes"
	detailFields = listFields + ",references.paperId,references.externalIds"
)

// searchParams are the inputs of /paper/search.
type searchParams struct {
	query         string
	offset, limit int
	dates         string // publicationDateOrYear, "2020-01-01:2020-12-31", either side optional
	venue         string
	fieldsOfStudy []string
	pubTypes      []string
	openAccessPDF bool
}

// searchPapers runs a relevance search (/paper/search).
func (c *client) searchPapers(ctx context.Context, apiKey string, p searchParams) (*s2PaperPage, error) {
	q := url.Values{}
	q.Set("query", p.query)
	q.Set("fields", listFields)
	q.Set("offset", strconv.Itoa(p.offset))
	q.Set("limit", strconv.Itoa(p.limit))
	if p.dates != "" {
		q.Set("publicationDateOrYear", p.dates)
	}
	if p.venue != "" {
		q.Set("venue", p.venue)
	}
	if len(p.fieldsOfStudy) > 0 {
		q.Set("fieldsOfStudy", strings.Join(p.fieldsOfStudy, ","))
	}
	if len(p.pubTypes) > 0 {
		q.Set("publicationTypes", strings.Join(p.pubTypes, ","))
	}
	if p.openAccessPDF {
		q.Set("openAccessPdf", "")
	}
	var page s2PaperPage
	if err := c.get(ctx, apiKey, "/paper/search", q, &page); err != nil {
		return nil, err
	}
	return &page, nil
}

// paper fetches one paper (/paper/{ref}) with its references. ref is an S2 paper id
// or a prefixed id (DOI:..., ARXIV:..., PMID:..., PMCID:...).
func (c *client) paper(ctx context.Context, apiKey, ref string) (*s2Paper, error) {
	var p s2Paper
	if err := c.get(ctx, apiKey, "/paper/"+ref, url.Values{"fields": {detailFields}}, &p); err != nil {
		return nil, err
	}
	return &p, nil
}

// paperBatch fetches several papers at once (POST /paper/batch); an id the API does
// not know comes back as nil in its place.
func (c *client) paperBatch(ctx context.Context, apiKey string, refs []string) ([]*s2Paper, error) {
	var out []*s2Paper
	body := map[string][]string{"ids": refs}
	if err := c.do(ctx, http.MethodPost, apiKey, "/paper/batch", url.Values{"fields": {detailFields}}, body, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// edges lists the citations or references of a paper (/paper/{ref}/citations or
// /references).
func (c *client) edges(ctx context.Context, apiKey, ref, kind string, offset, limit int) (*s2EdgePage, error) {
	q := url.Values{}
	q.Set("fields", listFields)
	q.Set("offset", strconv.Itoa(offset))
	q.Set("limit", strconv.Itoa(limit))
	var page s2EdgePage
	if err := c.get(ctx, apiKey, "/paper/"+ref+"/"+kind, q, &page); err != nil {
		return nil, err
	}
	return &page, nil
}

// searchAuthors finds authors by name (/author/search).
func (c *client) searchAuthors(ctx context.Context, apiKey, name string, limit int) (*s2AuthorPage, error) {
	q := url.Values{}
	q.Set("query", name)
	q.Set("fields", "name,paperCount")
	q.Set("offset", "0")
	q.Set("limit", strconv.Itoa(limit))
	var page s2AuthorPage
	if err := c.get(ctx, apiKey, "/author/search", q, &page); err != nil {
		return nil, err
	}
	return &page, nil
}

// authorPapers lists an author's papers (/author/{id}/papers).
func (c *client) authorPapers(ctx context.Context, apiKey, authorID string, offset, limit int) (*s2PaperPage, error) {
	q := url.Values{}
	q.Set("fields", listFields)
	q.Set("offset", strconv.Itoa(offset))
	q.Set("limit", strconv.Itoa(limit))
	var page s2PaperPage
	if err := c.get(ctx, apiKey, "/author/"+authorID+"/papers", q, &page); err != nil {
		return nil, err
	}
	return &page, nil
}
