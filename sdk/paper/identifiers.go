package paper

import (
	"regexp"
	"strconv"
	"strings"
)

// The identifier parsers every source plugin needs, so that each one reads a DOI,
// an arXiv id or an ORCID iD the same way and produces what IDs.Validate accepts.

var (
	arxivVersionPattern = regexp.MustCompile(`^(.+?)v(\d+)$`)
	arxivDOIPattern     = regexp.MustCompile(`^10\.48550/arxiv\.(\d{4}\.\d{4,5}|[a-z\-]+(?:\.[a-z]{2})?/\d{7})$`)
	doiPrefixes         = []string{"https://doi.org/", "http://doi.org/", "https://dx.doi.org/", "http://dx.doi.org/", "doi.org/", "doi:"}
)

// NormalizeDOI lower-cases a DOI and strips surrounding space and one resolver
// prefix ("https://doi.org/", "https://dx.doi.org/", "doi.org/", "doi:"). It returns
// "" when what is left is not a DOI of the form IDs.Validate accepts
// ("10.<4 to 9 digits>/<no space>"). Records a source returns carry DOIs in this
// form.
func NormalizeDOI(s string) string {
	d := TrimDOI(s)
	if !doiPattern.MatchString(d) {
		return ""
	}
	return d
}

// TrimDOI is the lenient form of NormalizeDOI for a DOI a source looks up: the
// DOI lower-cased, without space and one resolver prefix, when it starts with
// "10." and holds a slash and no space; else "". A source passes an odd DOI
// ("10.1/x") upstream so that the upstream says what is wrong with it.
func TrimDOI(s string) string {
	d := strings.ToLower(strings.TrimSpace(s))
	for _, p := range doiPrefixes {
		if strings.HasPrefix(d, p) {
			d = strings.TrimSpace(d[len(p):])
			break
		}
	}
	if !strings.HasPrefix(d, "10.") || !strings.Contains(d, "/") || strings.ContainsAny(d, " \t\n") {
		return ""
	}
	return d
}

// ParseArXivID splits an arXiv identifier into its versionless id and its version
// (0 when it has none): "2104.12255v1" gives ("2104.12255", 1, true) and
// "astro-ph/0601001" gives ("astro-ph/0601001", 0, true). It accepts abs and pdf
// URLs of any arXiv host ("http://arxiv.org/abs/2104.12255v1",
// "https://arxiv.org/pdf/2403.16981v12.pdf") and an "arXiv:" prefix in any case.
// ok is false, with "" and 0, for anything that is not an arXiv id.
func ParseArXivID(s string) (id string, version int, ok bool) {
	id = TrimArXivID(s)
	if m := arxivVersionPattern.FindStringSubmatch(id); m != nil {
		id = m[1]
		version, _ = strconv.Atoi(m[2])
	}
	if !arxivPattern.MatchString(id) {
		return "", 0, false
	}
	return id, version, true
}

// TrimArXivID strips what ParseArXivID accepts around an arXiv id: space, the URL
// up to "/abs/" or "/pdf/", a ".pdf" suffix and an "arXiv:" prefix in any case.
// "http://arxiv.org/abs/2104.12255v1" gives "2104.12255v1"; the result is not
// checked (a source may pass it upstream to have the upstream say what is wrong).
func TrimArXivID(s string) string {
	s = strings.TrimSpace(s)
	for _, marker := range []string{"/abs/", "/pdf/"} {
		if i := strings.Index(s, marker); i >= 0 {
			s = s[i+len(marker):]
		}
	}
	s = strings.TrimSuffix(s, ".pdf")
	if len(s) > 6 && strings.EqualFold(s[:6], "arxiv:") {
		s = s[6:]
	}
	return strings.TrimSpace(s)
}

// ArXivFromDOI returns the arXiv id of arXiv's own DataCite DOI
// ("10.48550/arxiv.2312.07559" gives "2312.07559"), else "". The DOI is expected
// normalized (see NormalizeDOI); an old-style id gets its subject class back in
// upper case ("10.48550/arxiv.math.gt/0309136" gives "math.GT/0309136").
func ArXivFromDOI(doi string) string {
	m := arxivDOIPattern.FindStringSubmatch(doi)
	if m == nil {
		return ""
	}
	id := m[1]
	if a, n, ok := strings.Cut(id, "/"); ok {
		if arch, sub, ok := strings.Cut(a, "."); ok {
			a = arch + "." + strings.ToUpper(sub)
		}
		id = a + "/" + n
	}
	return id
}

// NormalizeORCID turns an ORCID iD, bare or as its URL ("https://orcid.org/..."),
// with or without dashes, into the bare dashed form IDs.Validate accepts
// ("0000-0002-1825-009X"); "" when it is not one.
func NormalizeORCID(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndex(s, "/"); i >= 0 {
		s = s[i+1:]
	}
	s = strings.ToUpper(s)
	if len(s) == 16 && !strings.Contains(s, "-") {
		s = s[0:4] + "-" + s[4:8] + "-" + s[8:12] + "-" + s[12:16]
	}
	if !orcidPattern.MatchString(s) {
		return ""
	}
	return s
}
