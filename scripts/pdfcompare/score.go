package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"
)

var hyphenBreak = regexp.MustCompile(`(\p{Ll})-\s*\n\s*(\p{Ll})`)

func words(s string) []string {
	s = norm.NFKD.String(s)
	s = strings.Map(func(r rune) rune {
		if unicode.Is(unicode.Mn, r) {
			return -1
		}
		if r == 'ı' {
			return 'i'
		}
		return r
	}, s)
	s = hyphenBreak.ReplaceAllString(s, "$1$2")
	s = strings.ToLower(s)
	return strings.FieldsFunc(s, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsNumber(r) })
}

func bag(ws []string) map[string]int {
	m := map[string]int{}
	for _, w := range ws {
		m[w]++
	}
	return m
}

func prf(got, want []string) (p, r, f float64) {
	g, w := bag(got), bag(want)
	inter := 0
	for k, c := range g {
		inter += min(c, w[k])
	}
	p = float64(inter) / float64(max(1, len(got)))
	r = float64(inter) / float64(max(1, len(want)))
	if p+r > 0 {
		f = 2 * p * r / (p + r)
	}
	return
}

func seqSim(a, b []string) float64 {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			c := 1
			if a[i-1] == b[j-1] {
				c = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+c)
		}
		prev, cur = cur, prev
	}
	return 1 - float64(prev[len(b)])/float64(max(len(a), len(b)))
}

func joinWords(ws []string) string { return " " + strings.Join(ws, " ") + " " }

type probe struct {
	file string
	a, b string // b empty: phrase probe; else a must come before b
}

var probes = []probe{
	{"s2orc_acl2020_two_column.pdf", "Yet, existing corpora are not without their limitations. Some cover a small number of papers", ""},
	{"s2orc_acl2020_two_column.pdf", "In this paper, we describe the construction of S2ORC", ""},
	{"s2orc_acl2020_two_column.pdf", "To construct S2ORC, we must overcome challenges in (i) paper metadata aggregation", ""},
	{"s2orc_acl2020_two_column.pdf", "covers a more diverse set of academic disciplines than other resources", "In this paper, we describe the construction of S2ORC"},
	{"pldi09_tracemonkey_two_column_acm.pdf", "inner loops would become hot first, and the VM would start tracing there. When the inner loop exits", ""},
	{"pldi09_tracemonkey_two_column_acm.pdf", "We solve the nested loop problem by recording nested trace trees", ""},
	{"pldi09_tracemonkey_two_column_acm.pdf", "This section provides an overview of our system by describing how TraceMonkey executes an example program", ""},
	{"pldi09_tracemonkey_two_column_acm.pdf", "In Section 7 we evaluate our dynamic compiler based on", "a set of industry benchmarks. The paper ends with conclusions"},
}

func score(outPath, dir string) {
	var results []result
	b, _ := os.ReadFile(outPath)
	json.Unmarshal(b, &results)
	gt := words(string(must(os.ReadFile(filepath.Join(dir, "hindawi_rrp_2010_157939.groundtruth_fulltext.txt")))))
	var pm struct{ Symbols string }
	json.Unmarshal(must(os.ReadFile(filepath.Join(dir, "arxiv_2304.02623v1_beyond_summarization.papermage.json"))), &pm)
	pmw := words(pm.Symbols)
	type agg struct {
		pages    int
		secs     float64
		words    int
		long     int
		probesOK int
		probes   int
		errs     []string
	}
	byEx := map[string]*agg{}
	var order []string
	for _, r := range results {
		a := byEx[r.Extractor]
		if a == nil {
			a = &agg{}
			byEx[r.Extractor] = a
			order = append(order, r.Extractor)
		}
		if r.Err != "" {
			a.errs = append(a.errs, r.File+": "+r.Err)
			continue
		}
		a.pages += len(r.Pages)
		a.secs += r.Seconds
		all := strings.Join(r.Pages, "\n")
		ws := words(all)
		a.words += len(ws)
		for _, w := range ws {
			if len([]rune(w)) >= 20 {
				a.long++
			}
		}
		jw := joinWords(ws)
		for _, p := range probes {
			if p.file != r.File {
				continue
			}
			a.probes++
			ia := strings.Index(jw, joinWords(words(p.a)))
			if p.b == "" {
				if ia >= 0 {
					a.probesOK++
				}
				continue
			}
			ib := strings.Index(jw, joinWords(words(p.b)))
			if ia >= 0 && ib > ia {
				a.probesOK++
			}
		}
		switch r.File {
		case "hindawi_rrp_2010_157939_with_groundtruth.pdf":
			p, rc, f := prf(ws, gt)
			fmt.Printf("%-18s hindawi  P=%.3f R=%.3f F1=%.3f seqsim=%.3f\n", r.Extractor, p, rc, f, seqSim(ws, gt))
		case "arxiv_2304.02623v1_beyond_summarization.pdf":
			p, rc, f := prf(ws, pmw)
			fmt.Printf("%-18s papermage P=%.3f R=%.3f F1=%.3f seqsim=%.3f\n", r.Extractor, p, rc, f, seqSim(ws, pmw))
		}
	}
	fmt.Println()
	fmt.Println("| extractor | pages | total s (best of 3) | pages/s | words | tokens >=20 letters per 1k | reading-order probes |")
	for _, e := range order {
		a := byEx[e]
		fmt.Printf("| %s | %d | %.2f | %.0f | %d | %.1f | %d/%d |\n", e, a.pages, a.secs, float64(a.pages)/a.secs, a.words, 1000*float64(a.long)/float64(max(1, a.words)), a.probesOK, a.probes)
		for _, er := range a.errs {
			fmt.Println("   error:", er)
		}
	}
}

func must(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}
