package convert

import (
	"fmt"
	"time"
	"unicode/utf8"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/lectern-research/lectern/sdk/internal/pb/pluginv1"
	"github.com/lectern-research/lectern/sdk/paper"
)

// A page of papers is the largest message of the protocol and the host only
// forwards it: it stores the papers, it never looks at the protobuf form. So a
// PapersPage travels between paper.Paper and the wire directly, without building
// the generated pluginv1 types on either side. The bytes are those proto.Marshal
// writes for the message PaperToProto builds (same fields, same order, same zero
// values left out), and DecodePage reads whatever a conforming protobuf encoder
// writes, as proto.Unmarshal followed by PaperFromProto would. pagewire_test.go
// holds both to that, on every field the proto declares.

// Field numbers of lectern.plugin.v1 messages (common.proto). They are the wire
// contract and never change.
const (
	pagePapers, pageNextCursor, pageTotalEstimate protowire.Number = 1, 2, 3

	paperIDs, paperTitle, paperAuthors, paperAbstract, paperPublished, paperVenue protowire.Number = 1, 2, 3, 4, 5, 6
	paperLandingURL, paperPDFURL, paperSource, paperCitationCount                 protowire.Number = 7, 8, 9, 10
	paperReferences, paperCategories, paperOpenAccess, paperLicense               protowire.Number = 11, 12, 13, 14
	paperWorkType, paperLanguage, paperUpdatedAt                                  protowire.Number = 15, 16, 17

	idsDOI, idsArXivID, idsArXivVersion, idsOpenAlexID protowire.Number = 1, 2, 3, 4
	idsSemanticScholarID, idsPubMedID, idsPMCID        protowire.Number = 5, 6, 7
	idsSourceID                                        protowire.Number = 8

	authorName, authorGivenName, authorFamilyName, authorORCID protowire.Number = 1, 2, 3, 4
	authorAffiliations, authorSourceAuthorID                   protowire.Number = 5, 6

	affName, affROR, affCountry protowire.Number = 1, 2, 3

	dateYear, dateMonth, dateDay, datePrecision protowire.Number = 1, 2, 3, 4

	venueName, venueType, venueVolume, venueIssue, venuePages, venuePublisher, venueISSN protowire.Number = 1, 2, 3, 4, 5, 6, 7

	timestampSeconds, timestampNanos protowire.Number = 1, 2
)

// bytesPerPaper is a first guess of one encoded paper's size, so that most pages
// are written into a buffer allocated once.
const bytesPerPaper = 1024

// AppendPage appends the wire form of a PapersPage to b, filling each paper's
// Source with source when empty. It fails only for a string that is not valid
// UTF-8, which protobuf forbids in string fields.
func AppendPage(b []byte, papers []paper.Paper, nextCursor string, total int64, source string) ([]byte, error) {
	e := encoder{b: growFor(b, len(papers))}
	for i := range papers {
		e.paper(&papers[i], source)
		if e.bad != "" {
			return nil, fmt.Errorf("paper %d: a text field is not valid UTF-8: %q", i, clip(e.bad))
		}
	}
	e.str(pageNextCursor, nextCursor)
	e.int(pageTotalEstimate, total)
	if e.bad != "" {
		return nil, fmt.Errorf("the next cursor is not valid UTF-8: %q", clip(e.bad))
	}
	return e.b, nil
}

// growFor makes room for n papers, so the page is written into one allocation.
func growFor(b []byte, n int) []byte {
	if need := n * bytesPerPaper; cap(b)-len(b) < need {
		grown := make([]byte, len(b), len(b)+need)
		copy(grown, b)
		return grown
	}
	return b
}

// clip shortens a bad string for an error message.
func clip(s string) string {
	const most = 40
	if len(s) > most {
		return s[:most] + "..."
	}
	return s
}

// encoder appends protobuf fields to b and remembers the first string that is not
// valid UTF-8 (proto.Marshal refuses those too), so the caller checks once.
type encoder struct {
	b   []byte
	bad string
}

func (e *encoder) paper(p *paper.Paper, source string) {
	start := e.open(pagePapers)
	e.ids(paperIDs, &p.IDs)
	e.str(paperTitle, p.Title)
	for i := range p.Authors {
		e.author(&p.Authors[i])
	}
	e.str(paperAbstract, p.Abstract)
	if !p.Published.IsZero() {
		e.date(paperPublished, p.Published)
	}
	if v := &p.Venue; v.Name != "" || v.Type != "" || v.Volume != "" || v.Issue != "" || v.Pages != "" || v.Publisher != "" || len(v.ISSN) > 0 {
		e.venue(v)
	}
	e.str(paperLandingURL, p.LandingURL)
	e.str(paperPDFURL, p.PDFURL)
	src := p.Source
	if src == "" {
		src = source
	}
	e.str(paperSource, src)
	if p.CitationCount != nil {
		// An optional field is written even when zero: "cited 0 times" is news.
		e.b = protowire.AppendTag(e.b, paperCitationCount, protowire.VarintType)
		e.b = protowire.AppendVarint(e.b, uint64(*p.CitationCount))
	}
	for i := range p.References {
		e.ids(paperReferences, &p.References[i])
	}
	for _, c := range p.Categories {
		e.element(paperCategories, c)
	}
	if p.OpenAccess {
		e.int(paperOpenAccess, 1)
	}
	e.str(paperLicense, p.License)
	e.str(paperWorkType, p.WorkType)
	e.str(paperLanguage, p.Language)
	if !p.UpdatedAt.IsZero() {
		e.timestamp(paperUpdatedAt, p.UpdatedAt)
	}
	e.close(start)
}

// ids writes identifiers as IDsToProto does: always, even when empty.
func (e *encoder) ids(num protowire.Number, ids *paper.IDs) {
	start := e.open(num)
	e.str(idsDOI, ids.DOI)
	e.str(idsArXivID, ids.ArXivID)
	e.int(idsArXivVersion, int64(uint32(max(ids.ArXivVersion, 0))))
	e.str(idsOpenAlexID, ids.OpenAlexID)
	e.str(idsSemanticScholarID, ids.SemanticScholarID)
	e.str(idsPubMedID, ids.PubMedID)
	e.str(idsPMCID, ids.PMCID)
	e.str(idsSourceID, ids.SourceID)
	e.close(start)
}

func (e *encoder) author(a *paper.Author) {
	start := e.open(paperAuthors)
	e.str(authorName, a.Name)
	e.str(authorGivenName, a.GivenName)
	e.str(authorFamilyName, a.FamilyName)
	e.str(authorORCID, a.ORCID)
	for i := range a.Affiliations {
		af := &a.Affiliations[i]
		afStart := e.open(authorAffiliations)
		e.str(affName, af.Name)
		e.str(affROR, af.ROR)
		e.str(affCountry, af.Country)
		e.close(afStart)
	}
	e.str(authorSourceAuthorID, a.SourceAuthorID)
	e.close(start)
}

func (e *encoder) date(num protowire.Number, d paper.Date) {
	start := e.open(num)
	e.int(dateYear, int64(int32(d.Year)))
	e.int(dateMonth, int64(int32(d.Month)))
	e.int(dateDay, int64(int32(d.Day)))
	e.int(datePrecision, int64(int32(d.Precision)))
	e.close(start)
}

func (e *encoder) venue(v *paper.Venue) {
	start := e.open(paperVenue)
	e.str(venueName, v.Name)
	e.str(venueType, v.Type)
	e.str(venueVolume, v.Volume)
	e.str(venueIssue, v.Issue)
	e.str(venuePages, v.Pages)
	e.str(venuePublisher, v.Publisher)
	for _, s := range v.ISSN {
		e.element(venueISSN, s)
	}
	e.close(start)
}

// timestamp writes t as timestamppb.New(t) would.
func (e *encoder) timestamp(num protowire.Number, t time.Time) {
	start := e.open(num)
	e.int(timestampSeconds, t.Unix())
	e.int(timestampNanos, int64(t.Nanosecond()))
	e.close(start)
}

// str writes a singular string field, which proto3 leaves out when empty.
func (e *encoder) str(num protowire.Number, s string) {
	if s != "" {
		e.element(num, s)
	}
}

// element writes one element of a repeated string, empty or not.
func (e *encoder) element(num protowire.Number, s string) {
	if e.bad == "" && !utf8.ValidString(s) {
		e.bad = s
	}
	e.b = protowire.AppendTag(e.b, num, protowire.BytesType)
	e.b = protowire.AppendString(e.b, s)
}

// int writes a singular int32, int64, bool or enum field, left out when zero.
// Negative values take ten bytes, as protobuf's sign extension requires.
func (e *encoder) int(num protowire.Number, v int64) {
	if v != 0 {
		e.b = protowire.AppendTag(e.b, num, protowire.VarintType)
		e.b = protowire.AppendVarint(e.b, uint64(v))
	}
}

// open writes the tag of a nested message and returns where its body starts;
// close then puts the body's length in front of the body. Moving the body by the
// one or two bytes of the length is cheaper than measuring every message twice.
func (e *encoder) open(num protowire.Number) int {
	e.b = protowire.AppendTag(e.b, num, protowire.BytesType)
	return len(e.b)
}

func (e *encoder) close(start int) {
	n := len(e.b) - start
	k := protowire.SizeVarint(uint64(n))
	for range k {
		e.b = append(e.b, 0)
	}
	copy(e.b[start+k:], e.b[start:start+n])
	protowire.AppendVarint(e.b[:start], uint64(n))
}

// WirePage is a PapersPage read straight into SDK types.
type WirePage struct {
	Papers        []paper.Paper
	NextCursor    string
	TotalEstimate int64
}

// DecodePage reads the wire form of a PapersPage. It allocates per page, not per
// field: the strings are slices of one copy of b, and the papers' lists are
// windows of one array per kind of element (capped, so appending to one paper's
// list never reaches its neighbour's). A paper the host keeps therefore holds on
// to its page, which is about the size of the papers themselves. b may be reused
// once DecodePage returns. Unknown fields are skipped, as protobuf does.
func DecodePage(b []byte) (WirePage, error) {
	n, sl, err := measurePage(b)
	if err != nil {
		return WirePage{}, err
	}
	page := WirePage{Papers: make([]paper.Paper, 0, n)}
	d := decoder{page: &pageText{b: b, s: string(b)}, end: len(b)}
	for d.more() {
		num, typ, err := d.tag()
		if err != nil {
			return WirePage{}, err
		}
		switch {
		case num == pagePapers && typ == protowire.BytesType:
			page.Papers = append(page.Papers, paper.Paper{})
			if err := d.paper(&page.Papers[len(page.Papers)-1], &sl); err != nil {
				return WirePage{}, fmt.Errorf("paper %d: %w", len(page.Papers)-1, err)
			}
		case num == pageNextCursor && typ == protowire.BytesType:
			page.NextCursor, err = d.str()
		case num == pageTotalEstimate && typ == protowire.VarintType:
			var v uint64
			v, err = d.varint()
			page.TotalEstimate = int64(v)
		default:
			err = d.skip(num, typ)
		}
		if err != nil {
			return WirePage{}, err
		}
	}
	return page, nil
}

// slabs hold the list elements of a whole page, appended to as papers are read;
// each paper's lists are windows of them.
type slabs struct {
	authors      []paper.Author
	affiliations []paper.Affiliation
	references   []paper.IDs
	categories   []string
	issns        []string
	counts       []int64
}

// window returns what was appended to list since start, capped so that an append
// to it copies, or nil when nothing was (protobuf has no empty list).
func window[T any](list []T, start int) []T {
	if len(list) == start {
		return nil
	}
	return list[start:len(list):len(list)]
}

// measurePage counts a page's papers and list elements, reading only tags and
// lengths, so the papers and slabs are allocated once at their final size. A
// miscount would only cost a reallocation: windows stay correct either way.
func measurePage(b []byte) (int, slabs, error) {
	var c struct{ papers, authors, affiliations, references, categories, issns, counts int }
	err := eachField(b, func(num protowire.Number, typ protowire.Type, body []byte) error {
		if num != pagePapers || typ != protowire.BytesType {
			return nil
		}
		c.papers++
		return eachField(body, func(num protowire.Number, typ protowire.Type, body []byte) error {
			switch {
			case num == paperCitationCount && typ == protowire.VarintType:
				c.counts++
			case typ != protowire.BytesType:
			case num == paperAuthors:
				c.authors++
				return eachField(body, func(num protowire.Number, typ protowire.Type, _ []byte) error {
					if num == authorAffiliations && typ == protowire.BytesType {
						c.affiliations++
					}
					return nil
				})
			case num == paperReferences:
				c.references++
			case num == paperCategories:
				c.categories++
			case num == paperVenue:
				return eachField(body, func(num protowire.Number, typ protowire.Type, _ []byte) error {
					if num == venueISSN && typ == protowire.BytesType {
						c.issns++
					}
					return nil
				})
			}
			return nil
		})
	})
	if err != nil {
		return 0, slabs{}, err
	}
	return c.papers, slabs{
		authors:      make([]paper.Author, 0, c.authors),
		affiliations: make([]paper.Affiliation, 0, c.affiliations),
		references:   make([]paper.IDs, 0, c.references),
		categories:   make([]string, 0, c.categories),
		issns:        make([]string, 0, c.issns),
		counts:       make([]int64, 0, c.counts),
	}, nil
}

// eachField calls fn with every field of a message: its number, wire type and,
// for a length-delimited field, its body.
func eachField(b []byte, fn func(num protowire.Number, typ protowire.Type, body []byte) error) error {
	for len(b) > 0 {
		num, typ, n := consumeTag(b)
		if n < 0 {
			return protowire.ParseError(n)
		}
		b = b[n:]
		var body []byte
		if typ == protowire.BytesType {
			body, n = protowire.ConsumeBytes(b)
		} else {
			n = protowire.ConsumeFieldValue(num, typ, b)
		}
		if n < 0 {
			return protowire.ParseError(n)
		}
		b = b[n:]
		if err := fn(num, typ, body); err != nil {
			return err
		}
	}
	return nil
}

// decoder reads the protobuf fields of page[pos:end]. The page is held twice, as
// bytes to parse and as a string to slice string fields from, and reading moves
// only the integers: no pointer is written per field (which would cost a write
// barrier whenever the collector runs).
type decoder struct {
	page     *pageText
	pos, end int
}

// pageText is a received page as bytes and as one string copy of them.
type pageText struct {
	b []byte
	s string
}

func (d *decoder) more() bool { return d.pos < d.end }

func (d *decoder) rest() []byte { return d.page.b[d.pos:d.end] }

func (d *decoder) tag() (protowire.Number, protowire.Type, error) {
	num, typ, n := consumeTag(d.rest())
	if n < 0 {
		return 0, 0, protowire.ParseError(n)
	}
	d.pos += n
	return num, typ, nil
}

// consumeTag is protowire.ConsumeTag refusing, as proto.Unmarshal does, a field
// number past protowire.MaxValidNumber (2^29-1): ConsumeTag accepts up to 2^31-1,
// so a page with such a field once decoded here while protobuf refused it
// (FuzzDecodePage, testdata/fuzz/FuzzDecodePage).
func consumeTag(b []byte) (protowire.Number, protowire.Type, int) {
	num, typ, n := protowire.ConsumeTag(b)
	if n >= 0 && num > protowire.MaxValidNumber {
		return 0, 0, -1
	}
	return num, typ, n
}

func (d *decoder) varint() (uint64, error) {
	v, n := protowire.ConsumeVarint(d.rest())
	if n < 0 {
		return 0, protowire.ParseError(n)
	}
	d.pos += n
	return v, nil
}

// message returns a decoder over the body of a length-delimited field.
func (d *decoder) message() (decoder, error) {
	v, n := protowire.ConsumeBytes(d.rest())
	if n < 0 {
		return decoder{}, protowire.ParseError(n)
	}
	d.pos += n
	return decoder{page: d.page, pos: d.pos - len(v), end: d.pos}, nil
}

// str reads a string field, which protobuf requires to be valid UTF-8.
func (d *decoder) str() (string, error) {
	body, err := d.message()
	if err != nil {
		return "", err
	}
	s := d.page.s[body.pos:body.end]
	if !utf8.ValidString(s) {
		return "", fmt.Errorf("a string field is not valid UTF-8")
	}
	return s, nil
}

func (d *decoder) skip(num protowire.Number, typ protowire.Type) error {
	n := protowire.ConsumeFieldValue(num, typ, d.rest())
	if n < 0 {
		return protowire.ParseError(n)
	}
	d.pos += n
	return nil
}

// paper reads one Paper field into p, merging into what p holds as protobuf
// merges a repeated occurrence of a message field.
func (d *decoder) paper(p *paper.Paper, sl *slabs) error {
	m, err := d.message()
	if err != nil {
		return err
	}
	authors, references, categories, issns := len(sl.authors), len(sl.references), len(sl.categories), len(sl.issns)
	var updated timestamp
	for m.more() {
		num, typ, err := m.tag()
		if err != nil {
			return err
		}
		switch typ {
		case protowire.BytesType:
			err = m.paperBytesField(num, p, sl, &updated)
		case protowire.VarintType:
			err = m.paperVarintField(num, p, sl)
		default:
			err = m.skip(num, typ)
		}
		if err != nil {
			return err
		}
	}
	if updated.seen {
		p.UpdatedAt = time.Unix(updated.seconds, updated.nanos).UTC()
	}
	p.Authors = window(sl.authors, authors)
	p.References = window(sl.references, references)
	p.Categories = window(sl.categories, categories)
	p.Venue.ISSN = window(sl.issns, issns)
	return nil
}

func (d *decoder) paperBytesField(num protowire.Number, p *paper.Paper, sl *slabs, updated *timestamp) error {
	var err error
	switch num {
	case paperIDs:
		err = d.ids(&p.IDs)
	case paperTitle:
		p.Title, err = d.str()
	case paperAuthors:
		sl.authors = append(sl.authors, paper.Author{})
		err = d.author(&sl.authors[len(sl.authors)-1], sl)
	case paperAbstract:
		p.Abstract, err = d.str()
	case paperPublished:
		err = d.date(&p.Published)
	case paperVenue:
		err = d.venue(&p.Venue, sl)
	case paperLandingURL:
		p.LandingURL, err = d.str()
	case paperPDFURL:
		p.PDFURL, err = d.str()
	case paperSource:
		p.Source, err = d.str()
	case paperReferences:
		sl.references = append(sl.references, paper.IDs{})
		err = d.ids(&sl.references[len(sl.references)-1])
	case paperCategories:
		var c string
		c, err = d.str()
		sl.categories = append(sl.categories, c)
	case paperLicense:
		p.License, err = d.str()
	case paperWorkType:
		p.WorkType, err = d.str()
	case paperLanguage:
		p.Language, err = d.str()
	case paperUpdatedAt:
		err = d.timestamp(updated)
	default:
		err = d.skip(num, protowire.BytesType)
	}
	return err
}

func (d *decoder) paperVarintField(num protowire.Number, p *paper.Paper, sl *slabs) error {
	v, err := d.varint()
	if err != nil {
		return err
	}
	switch num {
	case paperCitationCount:
		sl.counts = append(sl.counts, int64(v))
		p.CitationCount = &sl.counts[len(sl.counts)-1]
	case paperOpenAccess:
		p.OpenAccess = protowire.DecodeBool(v)
	}
	return nil
}

func (d *decoder) ids(ids *paper.IDs) error {
	m, err := d.message()
	if err != nil {
		return err
	}
	for m.more() {
		num, typ, err := m.tag()
		if err != nil {
			return err
		}
		switch {
		case num == idsArXivVersion && typ == protowire.VarintType:
			var v uint64
			v, err = m.varint()
			ids.ArXivVersion = int(uint32(v))
		case typ != protowire.BytesType:
			err = m.skip(num, typ)
		case num == idsDOI:
			ids.DOI, err = m.str()
		case num == idsArXivID:
			ids.ArXivID, err = m.str()
		case num == idsOpenAlexID:
			ids.OpenAlexID, err = m.str()
		case num == idsSemanticScholarID:
			ids.SemanticScholarID, err = m.str()
		case num == idsPubMedID:
			ids.PubMedID, err = m.str()
		case num == idsPMCID:
			ids.PMCID, err = m.str()
		case num == idsSourceID:
			ids.SourceID, err = m.str()
		default:
			err = m.skip(num, typ)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func (d *decoder) author(a *paper.Author, sl *slabs) error {
	m, err := d.message()
	if err != nil {
		return err
	}
	affiliations := len(sl.affiliations)
	for m.more() {
		num, typ, err := m.tag()
		if err != nil {
			return err
		}
		switch {
		case typ != protowire.BytesType:
			err = m.skip(num, typ)
		case num == authorName:
			a.Name, err = m.str()
		case num == authorGivenName:
			a.GivenName, err = m.str()
		case num == authorFamilyName:
			a.FamilyName, err = m.str()
		case num == authorORCID:
			a.ORCID, err = m.str()
		case num == authorAffiliations:
			sl.affiliations = append(sl.affiliations, paper.Affiliation{})
			err = m.affiliation(&sl.affiliations[len(sl.affiliations)-1])
		case num == authorSourceAuthorID:
			a.SourceAuthorID, err = m.str()
		default:
			err = m.skip(num, typ)
		}
		if err != nil {
			return err
		}
	}
	a.Affiliations = window(sl.affiliations, affiliations)
	return nil
}

func (d *decoder) affiliation(af *paper.Affiliation) error {
	m, err := d.message()
	if err != nil {
		return err
	}
	for m.more() {
		num, typ, err := m.tag()
		if err != nil {
			return err
		}
		switch {
		case typ != protowire.BytesType:
			err = m.skip(num, typ)
		case num == affName:
			af.Name, err = m.str()
		case num == affROR:
			af.ROR, err = m.str()
		case num == affCountry:
			af.Country, err = m.str()
		default:
			err = m.skip(num, typ)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func (d *decoder) date(date *paper.Date) error {
	m, err := d.message()
	if err != nil {
		return err
	}
	for m.more() {
		num, typ, err := m.tag()
		if err != nil {
			return err
		}
		if typ != protowire.VarintType || num < dateYear || num > datePrecision {
			if err := m.skip(num, typ); err != nil {
				return err
			}
			continue
		}
		v, err := m.varint()
		if err != nil {
			return err
		}
		// int32 fields: protobuf keeps the low 32 bits of the varint.
		n := int(int32(v))
		switch num {
		case dateYear:
			date.Year = n
		case dateMonth:
			date.Month = n
		case dateDay:
			date.Day = n
		case datePrecision:
			date.Precision = paper.Precision(n)
		}
	}
	return nil
}

func (d *decoder) venue(v *paper.Venue, sl *slabs) error {
	m, err := d.message()
	if err != nil {
		return err
	}
	for m.more() {
		num, typ, err := m.tag()
		if err != nil {
			return err
		}
		switch {
		case typ != protowire.BytesType:
			err = m.skip(num, typ)
		case num == venueName:
			v.Name, err = m.str()
		case num == venueType:
			v.Type, err = m.str()
		case num == venueVolume:
			v.Volume, err = m.str()
		case num == venueIssue:
			v.Issue, err = m.str()
		case num == venuePages:
			v.Pages, err = m.str()
		case num == venuePublisher:
			v.Publisher, err = m.str()
		case num == venueISSN:
			var s string
			s, err = m.str()
			sl.issns = append(sl.issns, s)
		default:
			err = m.skip(num, typ)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// timestamp is a google.protobuf.Timestamp being read; seen says the field was
// present (an empty one is the Unix epoch, not the zero time).
type timestamp struct {
	seen    bool
	seconds int64
	nanos   int64
}

func (d *decoder) timestamp(t *timestamp) error {
	m, err := d.message()
	if err != nil {
		return err
	}
	t.seen = true
	for m.more() {
		num, typ, err := m.tag()
		if err != nil {
			return err
		}
		if typ != protowire.VarintType || (num != timestampSeconds && num != timestampNanos) {
			if err := m.skip(num, typ); err != nil {
				return err
			}
			continue
		}
		v, err := m.varint()
		if err != nil {
			return err
		}
		if num == timestampSeconds {
			t.seconds = int64(v)
		} else {
			t.nanos = int64(int32(v))
		}
	}
	return nil
}

// PageMessage carries an encoded page (AppendPage) as a PapersPage for the
// generated server stubs: the bytes ride as the message's unknown fields, which
// proto.Marshal writes out unchanged, so the plugin sends exactly these bytes
// without building the generated types first.
func PageMessage(raw []byte) *pluginv1.PapersPage {
	m := &pluginv1.PapersPage{}
	m.ProtoReflect().SetUnknown(raw)
	return m
}
