package ingest

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestContentDispositionNamesThePDFAfterItsTitle(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, title, want string
	}{
		{"plain", "Attention Is All You Need", `inline; filename="Attention Is All You Need.pdf"; filename*=UTF-8''Attention%20Is%20All%20You%20Need.pdf`},
		{"quotes and separators", `A "quoted" title; with\slashes/and: more`, `inline; filename="A _quoted_ title; with_slashes_and_ more.pdf"; filename*=UTF-8''A%20_quoted_%20title%3B%20with_slashes_and_%20more.pdf`},
		{"line breaks and control characters", "Two\nlines\x00 here", `inline; filename="Two lines_ here.pdf"; filename*=UTF-8''Two%20lines_%20here.pdf`},
		{"non-ASCII", "Über Lernen", `inline; filename="_ber Lernen.pdf"; filename*=UTF-8''%C3%9Cber%20Lernen.pdf`},
		{"empty", "  ", `inline; filename="paper.pdf"; filename*=UTF-8''paper.pdf`},
		{"only punctuation", `"..."`, `inline; filename="paper.pdf"; filename*=UTF-8''paper.pdf`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tc.want, contentDisposition(tc.title))
		})
	}
	long := contentDisposition(strings.Repeat("word ", 100))
	name, _, _ := strings.Cut(strings.TrimPrefix(long, `inline; filename="`), `"`)
	require.LessOrEqual(t, len(name), maxFilenameRunes+len(".pdf"), "a long title is cut")
	require.True(t, strings.HasSuffix(name, "word.pdf"), name)
}

func TestIsDigest(t *testing.T) {
	t.Parallel()
	require.True(t, isDigest(strings.Repeat("ab", 32)))
	require.False(t, isDigest("../../etc/passwd"))
	require.False(t, isDigest(strings.Repeat("ab", 31)))
	require.False(t, isDigest(strings.Repeat("zz", 32)))
}
