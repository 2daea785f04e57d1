package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/lectern-research/lectern/sdk/plugintest"
)

var (
	articleRE = regexp.MustCompile(`(?s)<PubmedArticle>.*?</PubmedArticle>`)
	docSumRE  = regexp.MustCompile(`(?s)<DocSum>.*?</DocSum>`)
	pmidRE1   = regexp.MustCompile(`<PMID[^>]*>(\d+)</PMID>`)
	idRE1     = regexp.MustCompile(`<Id>(\d+)</Id>`)
)

// corpus is the order of the recorded full records the synthesized searches list.
var corpus = []string{"27797938", "11748933", "11700088", "12091962", "9997"}

// upstream replays the recorded E-utilities answers. A request for exactly a
// recorded id set or term gets the recorded body verbatim; other efetch and
// esummary answers are assembled from the recorded records, and other searches list
// the recorded full records.
type upstream struct {
	t        *testing.T
	dir      string
	articles map[string]string // <PubmedArticle> by PMID
	docSums  map[string]string // <DocSum> by id
	plugintest.Recorder
}

func newUpstream(t *testing.T) (*upstream, *httptest.Server) {
	t.Helper()
	u := &upstream{t: t, dir: plugintest.FixturesDir(t, "pubmed"), articles: map[string]string{}, docSums: map[string]string{}}
	for _, f := range []string{"efetch_pubmed_1_article_full.xml", "efetch_pubmed_2_articles.xml", "efetch_pubmed_abstract_2_articles.xml"} {
		for _, chunk := range articleRE.FindAllString(u.read(f), -1) {
			u.articles[pmidRE1.FindStringSubmatch(chunk)[1]] = chunk
		}
	}
	for _, chunk := range docSumRE.FindAllString(u.read("esummary_pubmed_2_ids.xml"), -1) {
		u.docSums[idRE1.FindStringSubmatch(chunk)[1]] = chunk
	}
	srv := httptest.NewServer(u)
	t.Cleanup(srv.Close)
	return u, srv
}

func (u *upstream) read(name string) string {
	return string(plugintest.ReadFixture(u.t, u.dir, name))
}

func (u *upstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	u.Record(r)
	q := r.URL.Query()
	ids := q.Get("id")
	switch r.URL.Path {
	case "/esearch.fcgi":
		u.esearch(w, q.Get("term"), q.Get("retstart"), q.Get("retmax"))
	case "/efetch.fcgi":
		files := map[string]string{
			"27797938": "efetch_pubmed_1_article_full.xml", "11748933,11700088": "efetch_pubmed_2_articles.xml",
			"12091962,9997": "efetch_pubmed_abstract_2_articles.xml",
		}
		if f, ok := files[ids]; ok {
			writeXML(w, http.StatusOK, u.read(f))
			return
		}
		var b strings.Builder
		b.WriteString("<?xml version=\"1.0\" ?>\n<PubmedArticleSet>\n")
		for _, id := range strings.Split(ids, ",") {
			b.WriteString(u.articles[id])
		}
		b.WriteString("</PubmedArticleSet>\n")
		writeXML(w, http.StatusOK, b.String())
	case "/esummary.fcgi":
		if ids == "11850928,11482001" {
			writeXML(w, http.StatusOK, u.read("esummary_pubmed_2_ids.xml"))
			return
		}
		var b strings.Builder
		b.WriteString("<?xml version=\"1.0\" ?>\n<eSummaryResult>\n")
		for _, id := range strings.Split(ids, ",") {
			b.WriteString(u.docSums[id])
		}
		b.WriteString("</eSummaryResult>\n")
		writeXML(w, http.StatusOK, b.String())
	case "/elink.fcgi":
		writeXML(w, http.StatusOK, u.read("elink_pubmed_neighbor.xml"))
	default:
		http.NotFound(w, r)
	}
}

func (u *upstream) esearch(w http.ResponseWriter, term, retstart, retmax string) {
	switch {
	case term == "(biopython)":
		writeXML(w, http.StatusOK, u.read("esearch_pubmed_biopython.xml"))
		return
	case term == "(cancer)":
		writeXML(w, http.StatusOK, u.read("esearch_pubmed_cancer_usehistory.xml"))
		return
	case strings.Contains(term, "abcXYZ"), strings.Contains(term, "[DOI]") && !strings.Contains(term, "10.1136/gutjnl-2016-312510"):
		writeXML(w, http.StatusOK, u.read("esearch_no_results_errorlist.xml"))
		return
	}
	list := corpus
	if strings.Contains(term, "[DOI]") || strings.Contains(term, "[PMCID]") {
		list = corpus[:1]
	}
	start, _ := strconv.Atoi(retstart)
	n, err := strconv.Atoi(retmax)
	if err != nil {
		n = 20
	}
	end := min(start+n, len(list))
	var b strings.Builder
	fmt.Fprintf(&b, "<?xml version=\"1.0\" encoding=\"UTF-8\" ?>\n<eSearchResult><Count>%d</Count><RetMax>%d</RetMax><RetStart>%d</RetStart><IdList>\n", len(list), max(end-start, 0), start)
	if start < len(list) {
		for _, id := range list[start:end] {
			fmt.Fprintf(&b, "<Id>%s</Id>\n", id)
		}
	}
	b.WriteString("</IdList><TranslationSet/></eSearchResult>\n")
	writeXML(w, http.StatusOK, b.String())
}

func writeXML(w http.ResponseWriter, status int, body string) {
	w.Header().Set("Content-Type", "text/xml; charset=UTF-8")
	w.WriteHeader(status)
	_, _ = w.Write([]byte(body))
}

// requestFor returns the last request made to the utility.
func requestFor(t *testing.T, u *upstream, utility string) *http.Request {
	t.Helper()
	calls := u.Requests()
	for i := len(calls) - 1; i >= 0; i-- {
		if calls[i].URL.Path == "/"+utility+".fcgi" {
			return calls[i]
		}
	}
	t.Fatalf("no %s request", utility)
	return nil
}
