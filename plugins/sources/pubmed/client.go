package main

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/lectern-research/lectern/sdk/protocol"
	"github.com/lectern-research/lectern/sdk/sourcehttp"
)

// toolName is sent as the tool parameter NCBI asks every E-utilities client for.
const toolName = "lectern"

// clientConfig is what Configure decides about talking to E-utilities.
type clientConfig struct {
	baseURL *url.URL
	// policy paces calls without an API key; policyWithKey those with one.
	policy, policyWithKey sourcehttp.Policy
}

// credentials are the per-call E-utilities credentials.
type credentials struct {
	apiKey string
	email  string
}

func credentialsOf(m map[string]string) credentials {
	return credentials{apiKey: strings.TrimSpace(m["api_key"]), email: strings.TrimSpace(m["email"])}
}

// transport holds the two paced, retrying HTTP clients of E-utilities, kept across
// Configure: one for calls without an API key and one for calls with one (NCBI
// allows 3 requests a second without a key and 10 with one), sharing one pacer.
type transport struct {
	keyless, keyed *sourcehttp.Client
}

func newTransport(cfg clientConfig, log *slog.Logger) *transport {
	pacer := &sourcehttp.Pacer{}
	mk := func(p sourcehttp.Policy) *sourcehttp.Client {
		return sourcehttp.New(sourcehttp.Config{
			Name: "pubmed", Policy: p, Pacer: pacer, Logger: log,
			Header: http.Header{"User-Agent": {"lectern-pubmed/" + version}}, CheckFunc: check,
		})
	}
	return &transport{keyless: mk(cfg.policy), keyed: mk(cfg.policyWithKey)}
}

func (t *transport) setPolicies(cfg clientConfig) {
	t.keyless.SetPolicy(cfg.policy)
	t.keyed.SetPolicy(cfg.policyWithKey)
}

// client is the thin client of NCBI E-utilities
// (eutils.ncbi.nlm.nih.gov/entrez/eutils) for one set of settings. Its transport
// retries 429 and 5xx answers with exponential backoff honouring Retry-After, and
// turns failures into protocol errors. The api_key and email travel in the query
// string, so request URLs are never logged nor put in errors.
type client struct {
	cfg clientConfig
	tr  *transport
}

func newClient(cfg clientConfig, tr *transport) *client {
	return &client{cfg: cfg, tr: tr}
}

// call runs one E-utility (esearch, efetch, esummary, elink) and returns the body of
// its 200 answer.
func (c *client) call(ctx context.Context, creds credentials, utility string, params url.Values) ([]byte, error) {
	q := url.Values{}
	for k, v := range params {
		q[k] = v
	}
	q.Set("tool", toolName)
	if creds.email != "" {
		q.Set("email", creds.email)
	}
	if creds.apiKey != "" {
		q.Set("api_key", creds.apiKey)
	}
	u := *c.cfg.baseURL
	u.Path = strings.TrimRight(u.Path, "/") + "/" + utility + ".fcgi"
	u.RawPath = ""
	u.RawQuery = q.Encode()
	h := c.tr.keyless
	if creds.apiKey != "" {
		h = c.tr.keyed
	}
	resp, err := h.Do(ctx, &sourcehttp.Request{URL: u.String(), Label: "pubmed " + utility})
	if err != nil {
		return nil, err
	}
	return resp.Body, nil
}

// check retries 429 answers and NCBI's 200 answers saying the rate limit was
// exceeded, and 5xx answers; it accepts other 200 answers unless they carry a JSON
// error, and maps the rest with statusError.
func check(req *sourcehttp.Request, resp *sourcehttp.Response) error {
	switch {
	case resp.Status == http.StatusTooManyRequests, resp.Status == http.StatusOK && jsonError(resp.Body) == "API rate limit exceeded":
		return protocol.RateLimited(0, "%s: too many requests", req.Label)
	case resp.Status >= 500:
		return protocol.Unavailable(nil, "%s: HTTP %d: %s", req.Label, resp.Status, message(resp.Body))
	case resp.Status == http.StatusOK:
		if jsonError(resp.Body) != "" {
			return statusError(req.Label, http.StatusBadRequest, resp.Body)
		}
		return nil
	}
	return statusError(req.Label, resp.Status, resp.Body)
}

// statusError maps a final non-retryable answer to a typed error. efetch answers an
// id list without one valid PMID with an error naming the id list: NotFound.
func statusError(label string, status int, data []byte) error {
	msg := message(data)
	lower := strings.ToLower(msg)
	switch {
	case strings.Contains(lower, "api key"):
		return protocol.Unauthorized("%s: %s", label, msg)
	case status == http.StatusNotFound,
		status == http.StatusBadRequest && (strings.Contains(lower, "id list is empty") || strings.Contains(lower, "no correct ids")):
		return protocol.NotFound("%s: %s", label, msg)
	case status == http.StatusBadRequest || status == http.StatusUnprocessableEntity || status == http.StatusRequestURITooLong:
		return protocol.BadRequest("%s: %s", label, msg)
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return protocol.Unauthorized("%s: HTTP %d: %s", label, status, msg)
	}
	return protocol.Unavailable(nil, "%s: HTTP %d: %s", label, status, msg)
}

// jsonError is the message of a JSON error body ({"error": "API key invalid"}); ""
// for anything else.
func jsonError(data []byte) string {
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return ""
	}
	var e struct {
		Error string `json:"error"`
	}
	if json.Unmarshal(trimmed, &e) != nil {
		return ""
	}
	return e.Error
}

// message extracts a readable error from an answer: a JSON error, an XML <ERROR>,
// else a short prefix of the body.
func message(data []byte) string {
	if msg := jsonError(data); msg != "" {
		return msg
	}
	if i := bytes.Index(data, []byte("<ERROR>")); i >= 0 {
		rest := data[i+len("<ERROR>"):]
		if j := bytes.Index(rest, []byte("</ERROR>")); j >= 0 {
			return strings.TrimSpace(string(rest[:j]))
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

// decodeXML parses an E-utilities XML answer (DOCTYPE and HTML entities allowed).
func decodeXML(utility string, data []byte, v any) error {
	d := xml.NewDecoder(bytes.NewReader(data))
	d.Entity = xml.HTMLEntity
	if err := d.Decode(v); err != nil {
		return protocol.Unavailable(err, "pubmed %s: malformed answer: %v", utility, err)
	}
	return nil
}

// searchParams are the inputs of esearch.
type searchParams struct {
	term             string
	retstart, retmax int
	sort             string // "", "relevance" or "pub_date"
	datetype         string // "edat" or "pdat" with mindate/maxdate
	mindate, maxdate string // YYYY/MM/DD
}

// eSearchResult is esearch's answer.
type eSearchResult struct {
	Count     int64    `xml:"Count"`
	RetMax    int      `xml:"RetMax"`
	RetStart  int      `xml:"RetStart"`
	QueryKey  string   `xml:"QueryKey"`
	WebEnv    string   `xml:"WebEnv"`
	IDs       []string `xml:"IdList>Id"`
	Error     string   `xml:"ERROR"`
	ErrorList struct {
		PhraseNotFound []string `xml:"PhraseNotFound"`
		FieldNotFound  []string `xml:"FieldNotFound"`
	} `xml:"ErrorList"`
	Warnings []string `xml:"WarningList>OutputMessage"`
}

// esearch runs a PubMed search. A search that matches nothing (Count 0, possibly with
// an ErrorList naming phrases not found) is an empty result, not an error; an
// <ERROR> answer is a BadRequest.
func (c *client) esearch(ctx context.Context, creds credentials, p searchParams) (*eSearchResult, error) {
	q := url.Values{}
	q.Set("db", "pubmed")
	q.Set("term", p.term)
	q.Set("retstart", strconv.Itoa(p.retstart))
	q.Set("retmax", strconv.Itoa(p.retmax))
	if p.sort != "" {
		q.Set("sort", p.sort)
	}
	if p.datetype != "" {
		q.Set("datetype", p.datetype)
		q.Set("mindate", p.mindate)
		q.Set("maxdate", p.maxdate)
	}
	data, err := c.call(ctx, creds, "esearch", q)
	if err != nil {
		return nil, err
	}
	var res eSearchResult
	if err := decodeXML("esearch", data, &res); err != nil {
		return nil, err
	}
	if res.Error != "" {
		return nil, protocol.BadRequest("pubmed esearch: %s", strings.TrimSpace(res.Error))
	}
	return &res, nil
}

// efetch fetches PubMed records as XML.
func (c *client) efetch(ctx context.Context, creds credentials, pmids []string) (*articleSet, error) {
	q := url.Values{}
	q.Set("db", "pubmed")
	q.Set("id", strings.Join(pmids, ","))
	q.Set("retmode", "xml")
	data, err := c.call(ctx, creds, "efetch", q)
	if err != nil {
		return nil, err
	}
	if bytes.Contains(data, []byte("<ERROR>")) {
		msg := message(data)
		if lower := strings.ToLower(msg); strings.Contains(lower, "id list is empty") || strings.Contains(lower, "no correct ids") {
			return nil, protocol.NotFound("pubmed efetch: %s", msg)
		}
		return nil, protocol.BadRequest("pubmed efetch: %s", msg)
	}
	var set articleSet
	if err := decodeXML("efetch", data, &set); err != nil {
		return nil, err
	}
	return &set, nil
}

// eSummaryResult is esummary's answer (version 1 XML).
type eSummaryResult struct {
	DocSums []docSum `xml:"DocSum"`
	Error   string   `xml:"ERROR"`
}

// docSum is one esummary record: an id and named items, some of them lists.
type docSum struct {
	ID    string    `xml:"Id"`
	Items []docItem `xml:"Item"`
}

type docItem struct {
	Name  string    `xml:"Name,attr"`
	Type  string    `xml:"Type,attr"`
	Value string    `xml:",chardata"`
	Items []docItem `xml:"Item"`
}

// esummary fetches the short summaries of PubMed records.
func (c *client) esummary(ctx context.Context, creds credentials, pmids []string) (*eSummaryResult, error) {
	q := url.Values{}
	q.Set("db", "pubmed")
	q.Set("id", strings.Join(pmids, ","))
	q.Set("retmode", "xml")
	data, err := c.call(ctx, creds, "esummary", q)
	if err != nil {
		return nil, err
	}
	var res eSummaryResult
	if err := decodeXML("esummary", data, &res); err != nil {
		return nil, err
	}
	return &res, nil
}

// eLinkResult is elink's answer.
type eLinkResult struct {
	LinkSets []struct {
		DbFrom string   `xml:"DbFrom"`
		IDs    []string `xml:"IdList>Id"`
		Dbs    []struct {
			DbTo     string   `xml:"DbTo"`
			LinkName string   `xml:"LinkName"`
			IDs      []string `xml:"Link>Id"`
		} `xml:"LinkSetDb"`
		Error string `xml:"ERROR"`
	} `xml:"LinkSet"`
	Error string `xml:"ERROR"`
}

// links lists the PubMed records linked to pmid under linkName
// (pubmed_pubmed_citedin, pubmed_pubmed_refs, ...).
func (c *client) links(ctx context.Context, creds credentials, pmid, linkName string) ([]string, error) {
	q := url.Values{}
	q.Set("dbfrom", "pubmed")
	q.Set("db", "pubmed")
	q.Set("id", pmid)
	q.Set("linkname", linkName)
	q.Set("cmd", "neighbor")
	data, err := c.call(ctx, creds, "elink", q)
	if err != nil {
		return nil, err
	}
	var res eLinkResult
	if err := decodeXML("elink", data, &res); err != nil {
		return nil, err
	}
	if res.Error != "" {
		return nil, protocol.BadRequest("pubmed elink: %s", strings.TrimSpace(res.Error))
	}
	var out []string
	for _, set := range res.LinkSets {
		if set.Error != "" {
			return nil, protocol.NotFound("pubmed elink: %s", strings.TrimSpace(set.Error))
		}
		for _, db := range set.Dbs {
			if db.LinkName == linkName {
				for _, id := range db.IDs {
					if id = strings.TrimSpace(id); id != "" && id != pmid {
						out = append(out, id)
					}
				}
			}
		}
	}
	return out, nil
}
