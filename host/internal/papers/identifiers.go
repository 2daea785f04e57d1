package papers

import (
	"regexp"
	"strconv"
	"strings"

	"github.com/lectern-research/lectern/sdk/paper"
)

var (
	arxivNewPattern = regexp.MustCompile(`^(\d{4}\.\d{4,5})(?:v(\d+))?$`)
	arxivOldPattern = regexp.MustCompile(`^([a-z][a-z.-]*(?:\.[A-Z]{2})?/\d{7})(?:v(\d+))?$`)
)

// NormalizeDOI lower-cases a DOI and strips resolver prefixes ("https://doi.org/",
// "doi:"). It returns "" when what is left is not a DOI. It is the sdk's
// paper.NormalizeDOI, the one the source plugins use.
func NormalizeDOI(s string) string { return paper.NormalizeDOI(s) }

// NormalizeArxivID splits an arXiv identifier into its versionless id and version (0
// when none), accepting "arXiv:" prefixes, abs/pdf URLs, new-style (2104.12255v1) and
// old-style (astro-ph/0601001) ids. ok is false for anything else.
//
// It is not the sdk's paper.ParseArXivID: the two accept different spellings (the
// sdk's takes any host's abs/pdf URL and "ARXIV:", this one lower-case dotted
// archive names), and this one decides which ids the API accepts from users.
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

// arxivDOIPrefix is the prefix of the DOIs arXiv registers for its preprints
// (10.48550/arXiv.2304.05376, lower-cased here like every stored DOI).
const arxivDOIPrefix = "10.48550/arxiv."

// ArxivIDOfDOI returns the arXiv id an arXiv DOI names ("" for any other DOI):
// the DOI and the arXiv id are then two names of one work.
func ArxivIDOfDOI(doi string) string {
	rest, ok := strings.CutPrefix(NormalizeDOI(doi), arxivDOIPrefix)
	if !ok {
		return ""
	}
	id, _, ok := NormalizeArxivID(rest)
	if !ok {
		return ""
	}
	return id
}

// DOIOfArxivID returns the DOI arXiv registers for the preprint id ("" when id is
// not an arXiv id).
func DOIOfArxivID(id string) string {
	id, _, ok := NormalizeArxivID(id)
	if !ok {
		return ""
	}
	return arxivDOIPrefix + strings.ToLower(id)
}
