package main

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/lectern-research/lectern/sdk/protocol"
)

// maxBody bounds one response body.
const maxBody = 32 << 20

// toolName is sent as the tool parameter NCBI asks every E-utilities client for.
const toolName = "lectern"

// clientConfig is what Configure decides about talking to E-utilities.
type clientConfig struct {
	baseURL         *url.URL
	interval        time.Duration // least time between two requests without an API key
	intervalWithKey time.Duration // the same with an API key
	maxRetries      int           // retries after the first attempt on 429, 5xx and transport errors
	backoff         time.Duration // first retry delay, doubled per retry
	maxBackoff      time.Duration // bound on one computed retry delay
	maxRetryAfter   time.Duration // longest Retry-After waited for inside a call
	timeout         time.Duration // bound on one HTTP exchange
}

// credentials are the per-call E-utilities credentials.
type credentials struct {
	apiKey string
	email  string
}

func credentialsOf(m map[string]string) credentials {
	return credentials{apiKey: strings.TrimSpace(m["api_key"]), email: strings.TrimSpace(m["email"])}
}

// client is the thin HTTP client of NCBI E-utilities
// (eutils.ncbi.nlm.nih.gov/entrez/eutils). It spaces requests through a limiter
// shared by every call (NCBI allows 3 requests a second without an API key and 10
// with one), retries 429 and 5xx answers with exponential backoff honouring
// Retry-After, and turns failures into protocol errors. The api_key and email
// travel in the query string, so request URLs are never logged nor put in errors.
type client struct {
	cfg     clientConfig
	http    *http.Client
	limiter *limiter
	log     *slog.Logger
}

func newClient(cfg clientConfig, lim *limiter, log *slog.Logger) *client {
	return &client{cfg: cfg, http: &http.Client{Timeout: cfg.timeout}, limiter: lim, log: log}
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
	interval := c.cfg.interval
	if creds.apiKey != "" {
		interval = c.cfg.intervalWithKey
	}
	var lastErr error
	for attempt := 0; ; attempt++ {
		if err := c.limiter.wait(ctx, interval); err != nil {
			return nil, err
		}
		status, header, data, err := c.roundTrip(ctx, u.String())
		var wait time.Duration
		switch {
		case err != nil:
			if ctxErr := ctx.Err(); ctxErr != nil {
				return nil, ctxErr
			}
			lastErr = protocol.Unavailable(err, "pubmed %s: %v", utility, err)
			wait = c.backoffDelay(attempt)
		case status == http.StatusTooManyRequests, status == http.StatusOK && jsonError(data) == "API rate limit exceeded":
			ra := retryAfter(header)
			lastErr = protocol.RateLimited(ra, "pubmed %s: too many requests", utility)
			if ra > c.cfg.maxRetryAfter {
				return nil, lastErr
			}
			wait = max(ra, c.backoffDelay(attempt))
		case status >= 500:
			lastErr = protocol.Unavailable(nil, "pubmed %s: HTTP %d: %s", utility, status, message(data))
			wait = max(min(retryAfter(header), c.cfg.maxRetryAfter), c.backoffDelay(attempt))
		case status == http.StatusOK:
			if msg := jsonError(data); msg != "" {
				return nil, statusError(utility, http.StatusBadRequest, data)
			}
			return data, nil
		default:
			return nil, statusError(utility, status, data)
		}
		if attempt >= c.cfg.maxRetries {
			return nil, lastErr
		}
		c.log.DebugContext(ctx, "pubmed: retrying", "utility", utility, "attempt", attempt+1, "wait", wait, "error", lastErr)
		if err := sleep(ctx, wait); err != nil {
			return nil, err
		}
	}
}

// roundTrip sends one GET and reads the whole answer. Transport errors come back
// without the request URL, which holds the credentials.
func (c *client) roundTrip(ctx context.Context, rawURL string) (int, http.Header, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, rawURL, nil)
	if err != nil {
		return 0, nil, nil, errors.New("build request: invalid URL")
	}
	req.Header.Set("User-Agent", "lectern-pubmed/"+version)
	resp, err := c.http.Do(req)
	if err != nil {
		var uerr *url.Error
		if errors.As(err, &uerr) {
			err = uerr.Err
		}
		return 0, nil, nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	if err != nil {
		return 0, nil, nil, fmt.Errorf("read answer: %w", err)
	}
	return resp.StatusCode, resp.Header, data, nil
}

// backoffDelay is the exponential delay before retry attempt+1, with up to 20%
// jitter, bounded by maxBackoff.
func (c *client) backoffDelay(attempt int) time.Duration {
	d := c.cfg.backoff
	for range attempt {
		d *= 2
		if d >= c.cfg.maxBackoff {
			break
		}
	}
	d = min(d, c.cfg.maxBackoff)
	if d > 0 {
		d += time.Duration(rand.Int64N(int64(d)/5 + 1))
	}
	return d
}

// statusError maps a final non-retryable answer to a typed error. efetch answers an
// id list without one valid PMID with an error naming the id list: NotFound.
func statusError(utility string, status int, data []byte) error {
	msg := message(data)
	lower := strings.ToLower(msg)
	switch {
	case strings.Contains(lower, "api key"):
		return protocol.Unauthorized("pubmed %s: %s", utility, msg)
	case status == http.StatusNotFound,
		status == http.StatusBadRequest && (strings.Contains(lower, "id list is empty") || strings.Contains(lower, "no correct ids")):
		return protocol.NotFound("pubmed %s: %s", utility, msg)
	case status == http.StatusBadRequest || status == http.StatusUnprocessableEntity || status == http.StatusRequestURITooLong:
		return protocol.BadRequest("pubmed %s: %s", utility, msg)
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return protocol.Unauthorized("pubmed %s: HTTP %d: %s", utility, status, msg)
	}
	return protocol.Unavailable(nil, "pubmed %s: HTTP %d: %s", utility, status, msg)
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

// retryAfter reads a Retry-After header in seconds or as an HTTP date; 0 when
// absent or unreadable.
func retryAfter(h http.Header) time.Duration {
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0
	}
	if secs, err := strconv.Atoi(v); err == nil {
		if secs < 0 {
			return 0
		}
		return time.Duration(secs) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := time.Until(t); d > 0 {
			return d
		}
	}
	return 0
}

// sleep waits d or until ctx is done.
func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// limiter spaces requests at least an interval apart across concurrent calls: each
// request reserves the next free slot, then waits for it.
type limiter struct {
	mu   sync.Mutex
	next time.Time
}

// wait blocks until the caller's slot comes, or ctx is done.
func (l *limiter) wait(ctx context.Context, interval time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if interval <= 0 {
		return nil
	}
	l.mu.Lock()
	now := time.Now()
	at := l.next
	if at.Before(now) {
		at = now
	}
	l.next = at.Add(interval)
	l.mu.Unlock()
	return sleep(ctx, time.Until(at))
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
