package pdftext

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestNormalize(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in, want string
	}{
		{"hyphenation at line end", "an experi-\nment was run", "an experiment was run"},
		{"hyphenation with spaces around the break", "experi- \n  ment", "experiment"},
		{"unicode hyphen at line end", "experi\u2010\nment", "experiment"},
		{"soft hyphen", "experi\u00ADment", "experiment"},
		{"hyphen before a capital is kept", "Trace-\nMonkey", "Trace- Monkey"},
		{"hyphen inside a line is kept", "state-of-the-art", "state-of-the-art"},
		{"ligatures", "e\uFB00ective \uFB01ne \uFB02ow o\uFB03ce", "effective fine flow office"},
		{"curly quotes", "\u201CHeart Failure\u201D and \u2018it\u2019s\u2019", `"Heart Failure" and 'it's'`},
		{"dashes and minus", "2008\u20132010 \u2014 x \u2212 1", "2008-2010 - x - 1"},
		{"whitespace runs", "  a\t\tb\n\n c\f d\u00A0e ", "a b c d e"},
		{"dotless i with diaeresis", "na\u0131\u0308ve", "naïve"},
		{"empty", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := Normalize(tt.in)
			require.Equal(t, tt.want, got)
			require.Equal(t, got, Normalize(got), "idempotent")
		})
	}
}

func TestFindDOI(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in, want string
	}{
		{"doi prefix", "doi:10.1155/2010/157939", "10.1155/2010/157939"},
		{"url", "https://doi.org/10.1145/1542476.1542528.", "10.1145/1542476.1542528"},
		{"trailing punctuation", "(see 10.18653/v1/2020.acl-main.447);", "10.18653/v1/2020.acl-main.447"},
		{"balanced parentheses kept", "10.1002/(SICI)1097-4571(199806)49:8", "10.1002/(SICI)1097-4571(199806)49:8"},
		{"broken across lines after a slash", "DOI: 10.1186/\n1752-2897-4-1 more", "10.1186/1752-2897-4-1"},
		{"none", "no identifier here 10.5/x", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tt.want, FindDOI(tt.in))
		})
	}
}

func TestFindArXivID(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in, want string
	}{
		{"stamp", "arXiv:2304.02623v1 [cs.HC] 5 Apr 2023", "2304.02623v1"},
		{"no version", "preprint arXiv:2101.00001, 2021", "2101.00001"},
		{"five digits", "arXiv: 2501.10120", "2501.10120"},
		{"old style", "arXiv:astro-ph/0601001v2", "astro-ph/0601001v2"},
		{"old style with subject class", "arXiv:math.GT/0309136", "math.GT/0309136"},
		{"abs url", "https://arxiv.org/abs/1909.08593", "1909.08593"},
		{"words between", "arXiv preprint arXiv:1909.08593", "1909.08593"},
		{"none", "ISBN 1234.56789", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tt.want, FindArXivID(tt.in))
		})
	}
}
