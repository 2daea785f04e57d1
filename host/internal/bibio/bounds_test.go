package bibio

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// within runs f and fails t when it has not returned after d: the inputs below
// took minutes to hours before the parsers bounded their work, and take
// milliseconds now.
func within(t *testing.T, d time.Duration, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	select {
	case <-done:
	case <-time.After(d):
		t.Fatalf("still parsing after %s", d)
	}
}

// nestedMacros is a "billion laughs" BibTeX file: each @string macro is ten of
// the one before, levels deep, and one entry's title names the last.
func nestedMacros(levels int) string {
	src := "@string{m0 = \"xxxxxxxxxx\"}\n"
	for i := 1; i <= levels; i++ {
		prev := "m" + string(rune('0'+i-1))
		src += "@string{m" + string(rune('0'+i)) + " = " + strings.TrimSuffix(strings.Repeat(prev+" # ", 10), " # ") + "}\n"
	}
	return src + "@article{k, title = m" + string(rune('0'+levels)) + "}\n@article{after, title = {Kept}}\n"
}

func TestParseBibTeXNestedMacrosStopWithAReason(t *testing.T) {
	t.Parallel()
	src := nestedMacros(9) // ten billion bytes of title from 500 bytes of file
	var entries []Entry
	var errs []LineError
	within(t, 20*time.Second, func() { entries, errs = ParseBibTeX(src) })
	require.NotEmpty(t, errs)
	require.Contains(t, errs[len(errs)-1].Message, "@string macros expand")
	for _, e := range entries {
		require.LessOrEqual(t, len(e.Title), workFactor*len(src)+workSlack)
	}
}

func TestParseBibTeXReadsModestMacrosWhole(t *testing.T) {
	t.Parallel()
	entries, errs := ParseBibTeX(nestedMacros(2)) // 1,000 bytes of title: well within the bound
	require.Empty(t, errs)
	require.Len(t, entries, 2)
	require.Len(t, entries[0].Title, 1000)
}

func TestParseBibTeXUnclosedBracesDoNotRescanWithoutEnd(t *testing.T) {
	t.Parallel()
	// Every entry's brace stays open, so every entry read the rest of the file
	// before giving up: 160 kB took 14 s, the 10 MB an import allows would take hours.
	src := "@article{good, title = {Kept}}\n" + strings.Repeat("@a{k,t={", 50000)
	var entries []Entry
	var errs []LineError
	within(t, 20*time.Second, func() { entries, errs = ParseBibTeX(src) })
	require.Len(t, entries, 1)
	require.Equal(t, "Kept", entries[0].Title)
	require.Contains(t, errs[len(errs)-1].Message, "reading stopped here")
}

func TestSplitAuthorsKeepsLettersThatChangeLengthInLowerCase(t *testing.T) {
	t.Parallel()
	// The Kelvin sign lower-cases from three bytes to one; splitting on a
	// lower-cased copy cut the list out of range (kept as a FuzzParseBibTeX input).
	require.Equal(t, []string{"\u212a\u212a\u212a\u212a\u212a", "B"}, splitAuthors("\u212a\u212a\u212a\u212a\u212a and B"))
	require.Equal(t, []string{"A", "B"}, splitAuthors("A AND B"))
}

func TestParseRISLongAbstractIsReadInLinearTime(t *testing.T) {
	t.Parallel()
	// Each continuation line was added to the abstract by copying it: 200 kB of
	// short lines took 11 s.
	src := "TY  - JOUR\nTI  - T\nAB  - first\n" + strings.Repeat("y\n", 500000) + "ER  - \n"
	var entries []Entry
	within(t, 20*time.Second, func() { entries, _ = ParseRIS(src) })
	require.Len(t, entries, 1)
	require.Len(t, entries[0].Abstract, len("first")+2*500000)
}

func TestParseRISSaysWhereAnOverlongLineStoppedIt(t *testing.T) {
	t.Parallel()
	// A line past the scanner's limit ended the reading silently, and the file
	// read as one record that never ends.
	src := "TY  - JOUR\nTI  - A\nER  - \nTY  - JOUR\nTI  - B\nAB  - " + strings.Repeat("y", maxRISLine+1) + "\nER  - \n"
	entries, errs := ParseRIS(src)
	require.Len(t, entries, 1)
	require.Equal(t, "A", entries[0].Title)
	require.NotEmpty(t, errs)
	require.Contains(t, errs[0].Message, "longer than 1 MB")
	require.Equal(t, 6, errs[0].Line)
}
