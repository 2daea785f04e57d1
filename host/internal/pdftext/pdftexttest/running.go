package pdftexttest

import (
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

var digits = regexp.MustCompile(`\p{N}+`)

// EdgeKey is how a running header or footer repeats from page to page: the line
// case-folded, its numbers made "#", its spaces collapsed. A bare page number is
// "#".
func EdgeKey(s string) string {
	return strings.Join(strings.Fields(strings.ToLower(digits.ReplaceAllString(s, "#"))), " ")
}

// PrintedRunning reads the PDF with plain pdftotext, independently of package
// pdftext, and returns the keys (EdgeKey) of the lines printed among the first or
// last two lines of at least half of the pages (and two at least, in a document
// of three pages or more): the running headers, footers and page numbers as
// printed. Tests hold what pdftext and the tasks after it produce against it.
func PrintedRunning(t testing.TB, file string) map[string]bool {
	t.Helper()
	out, err := exec.CommandContext(t.Context(), "pdftotext", "-enc", "UTF-8", file, "-").Output()
	if err != nil {
		t.Fatalf("pdftotext %s: %v", file, err)
	}
	pages := strings.Split(strings.TrimSuffix(string(out), "\f"), "\f")
	count := map[string]int{}
	for _, p := range pages {
		var lines []string
		for _, l := range strings.Split(p, "\n") {
			if l = strings.TrimSpace(l); l != "" {
				lines = append(lines, l)
			}
		}
		seen := map[string]bool{}
		for i, l := range lines {
			if k := EdgeKey(l); (i < 2 || i >= len(lines)-2) && !seen[k] {
				seen[k] = true
				count[k]++
			}
		}
	}
	running := map[string]bool{}
	if len(pages) < 3 {
		return running
	}
	for k, n := range count {
		if n >= max(2, (len(pages)+1)/2) {
			running[k] = true
		}
	}
	return running
}
