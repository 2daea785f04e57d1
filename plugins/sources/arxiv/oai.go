package main

import (
	"context"
	"encoding/xml"
	"fmt"
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
)

// arXiv's OAI-PMH interface (https://info.arxiv.org/help/oa/index.html): each
// article is one item, harvested here in the arXivRaw format, which carries the
// version history. Sets are archives (cs, math, q-bio, ...); the physics archives
// are sub-sets of physics (physics:hep-th). Flow control is HTTP 503 with
// Retry-After, which the client honours.

const (
	// oaiIDPrefix turns an arXiv id into its OAI identifier.
	oaiIDPrefix = "oai:arXiv.org:"
	// oaiCursorPrefix marks a Recent cursor issued by the OAI path.
	oaiCursorPrefix = "oai:"
	// maxOAIFetches bounds the ListRecords requests one Recent call makes while
	// every record it sees is filtered out (each request waits for the pacing slot).
	maxOAIFetches = 4
	// oaiCacheSize and oaiCacheTTL bound the cache of harvested chunks. arXiv
	// answers up to a thousand records per request, more than a page holds, so the
	// following pages of one chunk are served from memory.
	oaiCacheSize = 4
	oaiCacheTTL  = 15 * time.Minute
)

// OAI error codes (OAI-PMH 2.0, section 3.6).
const (
	oaiBadArgument             = "badArgument"
	oaiBadResumptionToken      = "badResumptionToken"
	oaiBadVerb                 = "badVerb"
	oaiCannotDisseminateFormat = "cannotDisseminateFormat"
	oaiIDDoesNotExist          = "idDoesNotExist"
	oaiNoRecordsMatch          = "noRecordsMatch"
	oaiNoMetadataFormats       = "noMetadataFormats"
	oaiNoSetHierarchy          = "noSetHierarchy"
)

type oaiResponse struct {
	XMLName      xml.Name        `xml:"http://www.openarchives.org/OAI/2.0/ OAI-PMH"`
	ResponseDate string          `xml:"responseDate"`
	Errors       []oaiError      `xml:"error"`
	GetRecord    *oaiGetRecord   `xml:"GetRecord"`
	ListRecords  *oaiListRecords `xml:"ListRecords"`
}

type oaiError struct {
	Code    string `xml:"code,attr"`
	Message string `xml:",chardata"`
}

type oaiGetRecord struct {
	Record oaiRecord `xml:"record"`
}

type oaiListRecords struct {
	Records []oaiRecord `xml:"record"`
	Token   *oaiToken   `xml:"resumptionToken"`
}

// oaiToken is a resumptionToken: its text is the opaque token (empty on the last
// chunk), cursor the position of the chunk's first record and completeListSize the
// length of the whole list, when the repository says.
type oaiToken struct {
	Value            string `xml:",chardata"`
	Cursor           string `xml:"cursor,attr"`
	CompleteListSize string `xml:"completeListSize,attr"`
}

type oaiRecord struct {
	Header struct {
		Identifier string   `xml:"identifier"`
		Datestamp  string   `xml:"datestamp"`
		SetSpecs   []string `xml:"setSpec"`
		Status     string   `xml:"status,attr"`
	} `xml:"header"`
	Metadata struct {
		Raw *arxivRaw `xml:"http://arxiv.org/OAI/arXivRaw/ arXivRaw"`
	} `xml:"metadata"`
}

// arxivRaw is one record in the arXivRaw format: the current metadata plus every
// version's submission date.
type arxivRaw struct {
	ID         string       `xml:"id"`
	Submitter  string       `xml:"submitter"`
	Versions   []rawVersion `xml:"version"`
	Title      string       `xml:"title"`
	Authors    string       `xml:"authors"`
	Categories string       `xml:"categories"`
	Comments   string       `xml:"comments"`
	JournalRef string       `xml:"journal-ref"`
	DOI        string       `xml:"doi"`
	License    string       `xml:"license"`
	Abstract   string       `xml:"abstract"`
}

type rawVersion struct {
	Version string `xml:"version,attr"`
	Date    string `xml:"date"`
}

// oaiList is one parsed ListRecords chunk.
type oaiList struct {
	papers []oaiPaper
	// next is the resumption token of the following chunk; empty on the last.
	next string
	// cursor and complete are the token's cursor and completeListSize (-1 when
	// absent).
	cursor, complete int
}

// oaiPaper is a harvested paper with the sets its record belongs to.
type oaiPaper struct {
	paper.Paper
	sets []string
}

func parseOAI(body []byte) (*oaiResponse, error) {
	var r oaiResponse
	if err := xml.Unmarshal(body, &r); err != nil {
		return nil, fmt.Errorf("arxiv: decode OAI-PMH response: %w", err)
	}
	return &r, nil
}

// oaiErr maps an OAI-PMH error to the typed errors. noRecordsMatch is not an error
// for a listing; callers handle it before.
func oaiErr(e oaiError) error {
	msg := collapse(e.Message)
	switch e.Code {
	case oaiIDDoesNotExist, oaiNoRecordsMatch, oaiNoMetadataFormats:
		return protocol.NotFound("arxiv: OAI-PMH %s: %s", e.Code, msg)
	case oaiBadArgument, oaiBadResumptionToken, oaiBadVerb, oaiCannotDisseminateFormat, oaiNoSetHierarchy:
		return protocol.BadRequest("arxiv: OAI-PMH %s: %s", e.Code, msg)
	}
	return protocol.Unavailable(nil, "arxiv: OAI-PMH error %q: %s", e.Code, msg)
}

// oaiFetch calls the OAI-PMH endpoint and decodes the answer. An OAI error in the
// body wins over the HTTP status; the caller sees noRecordsMatch in the response.
func (a *Arxiv) oaiFetch(ctx context.Context, s settings, q url.Values) (*oaiResponse, error) {
	u, err := url.Parse(s.oaiBaseURL)
	if err != nil {
		return nil, protocol.BadRequest("arxiv: oai_base_url %q: %v", s.oaiBaseURL, err)
	}
	u.RawQuery = q.Encode()
	resp, err := a.get(ctx, s, u.String())
	if err != nil {
		return nil, err
	}
	r, perr := parseOAI(resp.Body)
	if perr == nil && len(r.Errors) > 0 {
		for _, e := range r.Errors {
			if e.Code != oaiNoRecordsMatch {
				return nil, oaiErr(e)
			}
		}
		return r, nil
	}
	if resp.Status != 200 {
		return nil, errStatus(resp.Status, resp.Body)
	}
	if perr != nil {
		return nil, protocol.Unavailable(perr, "arxiv: unreadable OAI-PMH response: %v", perr)
	}
	return r, nil
}

// getRecord fetches one article through GetRecord. With v > 0 the paper carries
// that version's number, date and PDF (the metadata text is the current one:
// arXivRaw keeps no older titles or abstracts).
func (a *Arxiv) getRecord(ctx context.Context, s settings, id string, v int) (paper.Paper, error) {
	r, err := a.oaiFetch(ctx, s, url.Values{
		"verb": {"GetRecord"}, "identifier": {oaiIDPrefix + id}, "metadataPrefix": {"arXivRaw"},
	})
	if err != nil {
		return paper.Paper{}, err
	}
	if r.GetRecord == nil || len(r.Errors) > 0 {
		return paper.Paper{}, protocol.NotFound("arxiv: OAI-PMH has no record %s", id)
	}
	p, ok := recordPaper(&r.GetRecord.Record)
	if !ok {
		return paper.Paper{}, protocol.NotFound("arxiv: OAI-PMH record %s is deleted or not in arXivRaw", id)
	}
	if v > 0 && !atVersion(&p.Paper, r.GetRecord.Record.Metadata.Raw, v) {
		return paper.Paper{}, protocol.NotFound("arxiv: %s has no version v%d (latest v%d)", id, v, p.IDs.ArXivVersion)
	}
	return p.Paper, nil
}

// atVersion points p at version v of its record: number, date and PDF.
func atVersion(p *paper.Paper, raw *arxivRaw, v int) bool {
	for _, rv := range raw.Versions {
		if n, ok := versionNumber(rv.Version); ok && n == v {
			p.IDs.ArXivVersion = v
			if t, ok := parseSubmitted(rv.Date); ok {
				p.UpdatedAt = t
			}
			p.PDFURL = "https://arxiv.org/pdf/" + p.IDs.ArXivID + "v" + strconv.Itoa(v)
			return true
		}
	}
	return false
}

// listRecords fetches one ListRecords chunk: the first of set since from (a
// YYYY-MM-DD datestamp, "" for all) when token is empty, else the chunk token
// names. noRecordsMatch is an empty last chunk. Chunks are cached so that paging
// through one in several pages costs one request.
func (a *Arxiv) listRecords(ctx context.Context, s settings, set, from, token string) (*oaiList, error) {
	key := strings.Join([]string{s.oaiBaseURL, set, from, token}, "\x00")
	if l, ok := a.chunks.get(key, time.Now()); ok {
		return l, nil
	}
	q := url.Values{"verb": {"ListRecords"}}
	if token != "" {
		q.Set("resumptionToken", token) // an exclusive argument: nothing else may accompany it
	} else {
		q.Set("metadataPrefix", "arXivRaw")
		if set != "" {
			q.Set("set", set)
		}
		if from != "" {
			q.Set("from", from)
		}
	}
	r, err := a.oaiFetch(ctx, s, q)
	if err != nil {
		return nil, err
	}
	l := listFrom(r)
	a.chunks.put(key, l, time.Now())
	return l, nil
}

// listFrom reads a ListRecords answer (or a noRecordsMatch error, an empty last
// chunk).
func listFrom(r *oaiResponse) *oaiList {
	l := &oaiList{cursor: -1, complete: -1}
	if r.ListRecords == nil {
		return l
	}
	for i := range r.ListRecords.Records {
		if p, ok := recordPaper(&r.ListRecords.Records[i]); ok {
			l.papers = append(l.papers, p)
		}
	}
	if t := r.ListRecords.Token; t != nil {
		l.next = strings.TrimSpace(t.Value)
		if n, err := strconv.Atoi(strings.TrimSpace(t.Cursor)); err == nil {
			l.cursor = n
		}
		if n, err := strconv.Atoi(strings.TrimSpace(t.CompleteListSize)); err == nil {
			l.complete = n
		}
	}
	return l
}

// recordPaper normalizes one arXivRaw record. Deleted records, records in another
// format and records without a usable id or title are dropped.
func recordPaper(rec *oaiRecord) (oaiPaper, bool) {
	raw := rec.Metadata.Raw
	if rec.Header.Status == "deleted" || raw == nil {
		return oaiPaper{}, false
	}
	id, _, _ := paper.ParseArXivID(raw.ID)
	if id == "" {
		id, _, _ = paper.ParseArXivID(strings.TrimPrefix(strings.TrimSpace(rec.Header.Identifier), oaiIDPrefix))
	}
	title := collapse(raw.Title)
	if id == "" || title == "" {
		return oaiPaper{}, false
	}
	p := paper.Paper{
		IDs:        paper.IDs{ArXivID: id, DOI: paper.NormalizeDOI(firstField(raw.DOI))},
		Title:      title,
		Abstract:   collapse(raw.Abstract),
		Authors:    parseAuthors(raw.Authors),
		Categories: strings.Fields(raw.Categories),
		License:    strings.TrimSpace(raw.License),
		Source:     "arxiv",
		OpenAccess: true,
		WorkType:   "preprint",
		Venue:      paper.Venue{Name: "arXiv", Type: "preprint", Publisher: "arXiv"},
		LandingURL: "https://arxiv.org/abs/" + id,
	}
	if jr := collapse(raw.JournalRef); jr != "" {
		p.Venue = paper.Venue{Name: jr, Type: "journal"}
	}
	first := 0
	for _, rv := range raw.Versions {
		n, ok := versionNumber(rv.Version)
		if !ok {
			continue
		}
		t, dated := parseSubmitted(rv.Date)
		if n > p.IDs.ArXivVersion {
			p.IDs.ArXivVersion = n
			p.UpdatedAt = time.Time{}
			if dated {
				p.UpdatedAt = t
			}
		}
		if dated && (first == 0 || n < first) {
			first = n
			p.Published = paper.DayDate(t)
		}
	}
	p.PDFURL = "https://arxiv.org/pdf/" + id
	if p.IDs.ArXivVersion > 0 {
		p.PDFURL += "v" + strconv.Itoa(p.IDs.ArXivVersion)
	}
	sets := slices.Clone(rec.Header.SetSpecs)
	for _, c := range p.Categories {
		if s := setFor(c); !slices.Contains(sets, s) {
			sets = append(sets, s)
		}
	}
	return oaiPaper{Paper: p, sets: sets}, true
}

// versionNumber reads "v2" as 2.
func versionNumber(s string) (int, bool) {
	s = strings.TrimSpace(s)
	if len(s) < 2 || (s[0] != 'v' && s[0] != 'V') {
		return 0, false
	}
	n, err := strconv.Atoi(s[1:])
	return n, err == nil && n > 0
}

// parseSubmitted reads an arXivRaw submission date, "Mon, 2 Apr 2007 19:18:42 GMT".
func parseSubmitted(s string) (time.Time, bool) {
	s = collapse(s)
	for _, layout := range []string{"Mon, 2 Jan 2006 15:04:05 MST", "2 Jan 2006 15:04:05 MST", time.RFC3339} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC(), true
		}
	}
	return time.Time{}, false
}

var (
	// affRefRE is a reference to numbered affiliations: "1", "1, 2", "1 and 3".
	affRefRE = regexp.MustCompile(`^\d+(\s*(,|and|&)\s*\d+)*$`)
	// affKeyRE finds the "(1)" keys of an affiliation legend.
	affKeyRE = regexp.MustCompile(`\((\d+)\)`)
	// digitsRE finds the numbers of an affiliation reference.
	digitsRE = regexp.MustCompile(`\d+`)
	// nameSuffixes join the previous name rather than start a new author.
	nameSuffixes = map[string]bool{"jr": true, "jr.": true, "sr": true, "sr.": true, "ii": true, "iii": true, "iv": true}
)

// authorPart is one author's slice of the authors string: the name and the texts
// of its parenthesized groups.
type authorPart struct {
	name   string
	groups []string
}

// parseAuthors splits arXiv's free-form authors string: names are separated by
// commas and " and " outside parentheses; a parenthesized group after a name is
// its affiliation ("A. Smith (MIT)"), or a reference to a numbered legend
// ("A. Smith (1, 2) ... ((1) MIT, (2) CERN)").
func parseAuthors(s string) []paper.Author {
	parts := splitAuthors(collapse(s))
	legend := map[string]string{}
	for _, p := range parts {
		for _, g := range p.groups {
			if strings.HasPrefix(g, "(") {
				for k, v := range parseLegend(g) {
					legend[k] = v
				}
			}
		}
	}
	// Affiliations named by legend reference may add at most four times the line
	// (plus 64 kB) in all, and each once per author: "A (1,1,1,...)" with a long
	// legend entry once turned 11 kB of line into 5 MB of affiliations.
	budget := 4*len(s) + 1<<16
	var out []paper.Author
	for _, p := range parts {
		name := strings.TrimSpace(p.name)
		if name == "" || strings.EqualFold(name, "et al.") || strings.EqualFold(name, "et al") {
			continue
		}
		if nameSuffixes[strings.ToLower(name)] && len(out) > 0 {
			out[len(out)-1].Name += ", " + name
			continue
		}
		a := paper.Author{Name: name}
		for _, g := range p.groups {
			switch {
			case strings.HasPrefix(g, "("):
				// the legend itself
			case affRefRE.MatchString(g):
				for _, k := range digitsRE.FindAllString(g, -1) {
					aff, ok := legend[k]
					if !ok || len(aff) > budget || slices.Contains(a.Affiliations, paper.Affiliation{Name: aff}) {
						continue
					}
					budget -= len(aff)
					a.Affiliations = append(a.Affiliations, paper.Affiliation{Name: aff})
				}
			case g != "":
				a.Affiliations = append(a.Affiliations, paper.Affiliation{Name: g})
			}
		}
		out = append(out, a)
	}
	return out
}

// splitAuthors cuts s at commas and the word "and" (or "&") outside parentheses.
func splitAuthors(s string) []authorPart {
	var (
		parts []authorPart
		cur   authorPart
		name  strings.Builder
		group strings.Builder
		depth int
	)
	flush := func() {
		cur.name = collapse(name.String())
		if cur.name != "" || len(cur.groups) > 0 {
			parts = append(parts, cur)
		}
		cur, name = authorPart{}, strings.Builder{}
	}
	words := func(i int, w string) bool { // s[i:] starts with the separate word w
		return strings.HasPrefix(s[i:], w) && (i == 0 || s[i-1] == ' ') && (i+len(w) == len(s) || s[i+len(w)] == ' ')
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '(':
			if depth > 0 {
				group.WriteByte(c)
			}
			depth++
		case c == ')' && depth > 0:
			depth--
			if depth == 0 {
				cur.groups = append(cur.groups, collapse(group.String()))
				group.Reset()
			} else {
				group.WriteByte(c)
			}
		case depth > 0:
			group.WriteByte(c)
		case c == ',' || c == ';':
			flush()
		case words(i, "and"):
			flush()
			i += len("and") - 1
		case words(i, "&"):
			flush()
		default:
			name.WriteByte(c)
		}
	}
	flush()
	return parts
}

// parseLegend reads "(1) MIT, (2) CERN" into {"1": "MIT", "2": "CERN"}.
func parseLegend(g string) map[string]string {
	out := map[string]string{}
	keys := affKeyRE.FindAllStringSubmatchIndex(g, -1)
	for i, k := range keys {
		end := len(g)
		if i+1 < len(keys) {
			end = keys[i+1][0]
		}
		v := strings.TrimRight(strings.TrimSpace(g[k[1]:end]), ",; ")
		if v = strings.TrimSpace(strings.TrimSuffix(v, " and")); v != "" {
			out[g[k[2]:k[3]]] = v
		}
	}
	return out
}

// physicsArchives are the archives arXiv exposes as sub-sets of physics.
var physicsArchives = map[string]bool{
	"astro-ph": true, "cond-mat": true, "gr-qc": true, "hep-ex": true, "hep-lat": true, "hep-ph": true,
	"hep-th": true, "math-ph": true, "nlin": true, "nucl-ex": true, "nucl-th": true, "physics": true, "quant-ph": true,
}

// legacyArchives are retired archives and the archive that now holds them.
var legacyArchives = map[string]string{
	"alg-geom": "math", "dg-ga": "math", "funct-an": "math", "q-alg": "math",
	"adap-org": "nlin", "chao-dyn": "nlin", "comp-gas": "nlin", "patt-sol": "nlin", "solv-int": "nlin",
	"cmp-lg": "cs", "mtrl-th": "cond-mat", "supr-con": "cond-mat",
	"acc-phys": "physics", "ao-sci": "physics", "atom-ph": "physics", "bayes-an": "physics", "chem-ph": "physics", "plasm-ph": "physics",
}

var categoryRE = regexp.MustCompile(`^[a-z][a-z-]*(\.[A-Za-z-]+)?$`)

// archiveOf is the archive of a category: "cs.AI" → "cs", "hep-th" → "hep-th".
func archiveOf(category string) string {
	a, _, _ := strings.Cut(category, ".")
	if to, ok := legacyArchives[a]; ok {
		return to
	}
	return a
}

// setFor is the OAI set of a category's archive: "cs.AI" → "cs", "hep-th" →
// "physics:hep-th", "cond-mat.str-el" → "physics:cond-mat".
func setFor(category string) string {
	a := archiveOf(category)
	if physicsArchives[a] {
		return "physics:" + a
	}
	return a
}

// oaiWant is what a Recent call asks of a harvest: the sets to list, in order, and
// the categories and topics that keep a record.
type oaiWant struct {
	sets       []string
	categories []string // "cs.AI" (exact), "cs" or "hep-th" (whole archive)
	setSpecs   []string // set specs given as such ("physics:hep-th"): the whole set
	topics     [][]string
}

// parseWant maps the requested categories to OAI sets. A value with a colon is
// taken as a set spec as it is.
func parseWant(categories, topics []string) (*oaiWant, error) {
	w := &oaiWant{}
	add := func(set string) {
		if !slices.Contains(w.sets, set) {
			w.sets = append(w.sets, set)
		}
	}
	for _, c := range categories {
		c = strings.TrimSpace(c)
		switch {
		case c == "":
		case strings.Contains(c, ":"):
			for _, part := range strings.Split(c, ":") {
				if !categoryRE.MatchString(part) {
					return nil, protocol.BadRequest("arxiv: %q is not an OAI set spec such as physics:hep-th", c)
				}
			}
			add(c)
			w.setSpecs = append(w.setSpecs, c)
		case categoryRE.MatchString(c):
			add(setFor(c))
			w.categories = append(w.categories, c)
		default:
			return nil, protocol.BadRequest("arxiv: %q is not an arXiv category such as cs.AI or hep-th", c)
		}
	}
	for _, t := range topics {
		if ws := strings.Fields(strings.ToLower(t)); len(ws) > 0 {
			w.topics = append(w.topics, ws)
		}
	}
	return w, nil
}

// inSet reports whether a record belongs to set (or to one of its sub-sets).
func inSet(sets []string, set string) bool {
	return slices.ContainsFunc(sets, func(s string) bool { return s == set || strings.HasPrefix(s, set+":") })
}

// keeps reports whether a harvested record is one the caller asked for: in one of
// the categories or set specs, or matching a topic (every word of it in the title
// or abstract).
func (w *oaiWant) keeps(p *oaiPaper) bool {
	for _, want := range w.categories {
		for _, c := range p.Categories {
			if strings.EqualFold(c, want) || (!strings.Contains(want, ".") && archiveOf(c) == want) {
				return true
			}
		}
	}
	for _, s := range w.setSpecs {
		if inSet(p.sets, s) {
			return true
		}
	}
	if len(w.topics) == 0 {
		return false
	}
	text := strings.ToLower(p.Title + " " + p.Abstract)
	for _, t := range w.topics {
		if !slices.ContainsFunc(t, func(word string) bool { return !strings.Contains(text, word) }) {
			return true
		}
	}
	return false
}

// oaiCursor is where a harvest stands: the set, the resumption token that fetched
// the current chunk ("" for the set's first) and how many kept records of that
// chunk were returned already.
type oaiCursor struct {
	set, token string
	skip       int
}

func (c oaiCursor) String() string {
	v := url.Values{"set": {c.set}}
	if c.token != "" {
		v.Set("token", c.token)
	}
	if c.skip > 0 {
		v.Set("skip", strconv.Itoa(c.skip))
	}
	return oaiCursorPrefix + v.Encode()
}

func parseOAICursor(s string, sets []string) (oaiCursor, error) {
	if s == "" {
		return oaiCursor{set: sets[0]}, nil
	}
	bad := protocol.BadRequest("arxiv: cursor %q is not one this source issued for these categories", s)
	rest, ok := strings.CutPrefix(s, oaiCursorPrefix)
	if !ok {
		return oaiCursor{}, bad
	}
	v, err := url.ParseQuery(rest)
	if err != nil || !slices.Contains(sets, v.Get("set")) {
		return oaiCursor{}, bad
	}
	c := oaiCursor{set: v.Get("set"), token: v.Get("token")}
	if sk := v.Get("skip"); sk != "" {
		if c.skip, err = strconv.Atoi(sk); err != nil || c.skip < 0 {
			return oaiCursor{}, bad
		}
	}
	return c, nil
}

// recentOAI harvests the sets of the requested categories through ListRecords
// from the day of req.Since, keeps the records in the categories (or on the
// topics), and returns them a page at a time, each page newest first (by the
// latest version's date). Across pages the order is that of the OAI datestamps.
func (a *Arxiv) recentOAI(ctx context.Context, s settings, req *source.RecentRequest) (*source.Page, error) {
	want, err := parseWant(req.Categories, req.Topics)
	if err != nil {
		return nil, err
	}
	if len(want.sets) == 0 {
		return nil, protocol.BadRequest("arxiv: recent through OAI-PMH needs categories")
	}
	cur, err := parseOAICursor(req.Cursor, want.sets)
	if err != nil {
		return nil, err
	}
	from := ""
	if !req.Since.IsZero() {
		from = req.Since.UTC().Format(time.DateOnly) // arXiv's datestamps are days
	}
	size := source.PageSize(req.PageSize)
	for fetch := 1; ; fetch++ {
		l, err := a.listRecords(ctx, s, cur.set, from, cur.token)
		if err != nil {
			return nil, err
		}
		idx := slices.Index(want.sets, cur.set)
		var kept []paper.Paper
		for i := range l.papers {
			p := &l.papers[i]
			// A record in an earlier set was returned with that set.
			if want.keeps(p) && !slices.ContainsFunc(want.sets[:idx], func(earlier string) bool { return inSet(p.sets, earlier) }) {
				kept = append(kept, p.Paper)
			}
		}
		sortNewest(kept)
		page := &source.Page{}
		if l.complete > 0 && len(l.papers) > 0 {
			page.TotalEstimate = int64(l.complete) * int64(len(kept)) / int64(len(l.papers))
		}
		if cur.skip < len(kept) {
			page.Papers = kept[cur.skip:min(cur.skip+size, len(kept))]
		}
		next, more := cur, true
		switch {
		case cur.skip+size < len(kept):
			next.skip = cur.skip + size
		case l.next != "":
			next = oaiCursor{set: cur.set, token: l.next}
		case idx+1 < len(want.sets):
			next = oaiCursor{set: want.sets[idx+1]}
		default:
			more = false
		}
		if more && len(page.Papers) == 0 && fetch < maxOAIFetches {
			cur = next
			continue
		}
		if more {
			page.NextCursor = next.String()
		}
		return page, nil
	}
}

// sortNewest orders papers by their latest version's date, newest first.
func sortNewest(ps []paper.Paper) {
	slices.SortStableFunc(ps, func(x, y paper.Paper) int {
		if c := y.UpdatedAt.Compare(x.UpdatedAt); c != 0 {
			return c
		}
		return strings.Compare(y.IDs.ArXivID, x.IDs.ArXivID)
	})
}

// chunkCache keeps the last few harvested chunks for a while.
type chunkCache struct {
	mu      sync.Mutex
	entries []chunkEntry
}

type chunkEntry struct {
	key  string
	at   time.Time
	list *oaiList
}

func (c *chunkCache) get(key string, now time.Time) (*oaiList, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, e := range c.entries {
		if e.key == key && now.Sub(e.at) < oaiCacheTTL {
			return e.list, true
		}
	}
	return nil, false
}

func (c *chunkCache) put(key string, l *oaiList, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.entries = slices.DeleteFunc(c.entries, func(e chunkEntry) bool { return e.key == key || now.Sub(e.at) >= oaiCacheTTL })
	c.entries = append(c.entries, chunkEntry{key: key, at: now, list: l})
	if len(c.entries) > oaiCacheSize {
		c.entries = c.entries[len(c.entries)-oaiCacheSize:]
	}
}
