package papers

import (
	"regexp"
	"strconv"
	"strings"
)

var (
	doiPattern      = regexp.MustCompile(`^10\.\d{4,9}/\S+$`)
	arxivNewPattern = regexp.MustCompile(`^(\d{4}\.\d{4,5})(?:v(\d+))?$`)
	arxivOldPattern = regexp.MustCompile(`^([a-z][a-z.-]*(?:\.[A-Z]{2})?/\d{7})(?:v(\d+))?$`)
)

// NormalizeDOI lower-cases a DOI and strips resolver prefixes ("https://doi.org/",
// "doi:"). It returns "" when what is left is not a DOI.
func NormalizeDOI(s string) string {
	d := strings.TrimSpace(s)
	lower := strings.ToLower(d)
	for _, p := range []string{"https://doi.org/", "http://doi.org/", "https://dx.doi.org/", "http://dx.doi.org/", "doi.org/", "doi:"} {
		if strings.HasPrefix(lower, p) {
			lower = strings.TrimSpace(lower[len(p):])
			break
		}
	}
	if !doiPattern.MatchString(lower) {
		return ""
	}
	return lower
}

// NormalizeArxivID splits an arXiv identifier into its versionless id and version (0
// when none), accepting "arXiv:" prefixes, abs/pdf URLs, new-style (2104.12255v1) and
// old-style (astro-ph/0601001) ids. ok is false for anything else.
func NormalizeArxivID(s string) (id string, version int, ok bool) {
	a := strings.TrimSpace(s)
	for _, p := range []string{"https://arxiv.org/abs/", "http://arxiv.org/abs/", "https://arxiv.org/pdf/", "http://arxiv.org/pdf/", "arxiv.org/abs/", "arXiv:", "arxiv:"} {
		if strings.HasPrefix(a, p) {
			a = a[len(p):]
			break
		}
	}
	a = strings.TrimSuffix(a, ".pdf")
	for _, re := range []*regexp.Regexp{arxivNewPattern, arxivOldPattern} {
		if m := re.FindStringSubmatch(a); m != nil {
			v := 0
			if m[2] != "" {
				v, _ = strconv.Atoi(m[2])
			}
			return m[1], v, true
		}
	}
	return "", 0, false
}
