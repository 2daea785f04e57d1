package pdftext

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lectern-research/lectern/host/internal/pdftext/pdftexttest"
)

// childExtractEnv makes the test binary, run as a child by
// TestExtractDensePDFStaysUnderTheMemoryBound, extract the PDF it names with the
// default caps and report the error and its own peak RSS instead of running tests.
const childExtractEnv = "LECTERN_PDFTEXT_CHILD_EXTRACT"

// maxHostRSS is the bound docs/ingest.md states for reading the dense 300-page
// PDF at the default caps: the peak resident set of the process that extracts it
// (measured 37 MB; before the caps, 805 MB).
const maxHostRSS = 64 << 20

func TestMain(m *testing.M) {
	if path := os.Getenv(childExtractEnv); path != "" {
		os.Exit(extractInChild(path))
	}
	os.Exit(m.Run())
}

// extractInChild extracts path and prints "err: ..." and "hwm: <bytes>" (VmHWM,
// the process's peak resident set) for the parent test to read.
func extractInChild(path string) int {
	start := time.Now()
	_, err := ExtractFile(context.Background(), path, nil)
	fmt.Printf("err: %v\n", err)
	fmt.Printf("seconds: %.1f\n", time.Since(start).Seconds())
	status, rerr := os.ReadFile("/proc/self/status")
	if rerr != nil {
		fmt.Printf("hwm: unknown (%v)\n", rerr)
		return 1
	}
	for _, l := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			kb, _ := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")))
			fmt.Printf("hwm: %d\n", kb<<10)
		}
	}
	return 0
}

// The test case: a PDF of about 0.5 MB whose 300 pages expand to about
// 30 MB of text. It is under the page limit, so only the text cap stops it; the
// extraction runs in a child process so that its peak RSS is its own.
func TestExtractDensePDFStaysUnderTheMemoryBound(t *testing.T) {
	t.Parallel()
	pdf := pdftexttest.Dense(pdftexttest.DenseConfig{})
	require.Less(t, len(pdf), 1<<20, "a small file")
	path := filepath.Join(t.TempDir(), "dense.pdf")
	require.NoError(t, os.WriteFile(path, pdf, 0o600))
	pages, err := pdfinfo(t.Context(), "pdfinfo", path)
	require.NoError(t, err)
	require.Equal(t, 300, pages, "under the page limit: the page count does not stop it")

	cmd := exec.CommandContext(t.Context(), os.Args[0])
	cmd.Env = append(os.Environ(), childExtractEnv+"="+path)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	report := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), ": "); ok {
			report[k] = v
		}
	}
	t.Logf("child: %s", out)
	require.Equal(t, (&TextLimitError{What: "bytes of text", Limit: DefaultMaxTextBytes}).Error(),
		strings.TrimPrefix(report["err"], "pdftext: "), "the text cap stops it")
	hwm, err := strconv.Atoi(report["hwm"])
	require.NoError(t, err, "peak RSS reported: %s", out)
	require.Less(t, hwm, maxHostRSS*rssFactor, "peak RSS %d MiB", hwm>>20)
}

func TestExtractStopsAtTheCaps(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "dense.pdf")
	// 3 pages of 40 lines of 20 words: about 14 KB of text, 120 lines.
	require.NoError(t, os.WriteFile(path, pdftexttest.Dense(pdftexttest.DenseConfig{Pages: 3, LinesPerPage: 40, WordsPerLine: 20}), 0o600))
	for _, tc := range []struct {
		name string
		opts Opts
		want *TextLimitError
	}{
		{"text", Opts{MaxTextBytes: 8 << 10}, &TextLimitError{What: "bytes of text", Limit: 8 << 10}},
		{"lines", Opts{MaxLines: 100}, &TextLimitError{What: "lines of text", Limit: 100}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := ExtractFile(t.Context(), path, &tc.opts)
			require.ErrorIs(t, err, ErrTooMuchText)
			var lim *TextLimitError
			require.ErrorAs(t, err, &lim)
			require.Equal(t, tc.want, lim)
		})
	}
	t.Run("under the caps", func(t *testing.T) {
		t.Parallel()
		doc, err := ExtractFile(t.Context(), path, &Opts{MaxTextBytes: 32 << 10, MaxLines: 120})
		require.NoError(t, err)
		require.Len(t, doc.Pages, 3)
		require.Equal(t, 120, strings.Count(doc.Text, "\n")+len(doc.Pages)-strings.Count(doc.Text, "\n\n"),
			"every line is read")
		require.LessOrEqual(t, len(doc.Text), 32<<10)
	})
}

// endless is pdftotext output that never ends: a page of one line, repeated.
type endless struct{ pending []byte }

func (e *endless) Read(p []byte) (int, error) {
	if len(e.pending) == 0 {
		e.pending = []byte(`<page width="612" height="792"><flow><block><line xMin="1" yMin="1" xMax="2" yMax="2">` +
			`<word xMin="1" yMin="1" xMax="2" yMax="2">endless</word></line></block></flow></page>` + "\n")
	}
	n := copy(p, e.pending)
	e.pending = e.pending[n:]
	return n, nil
}

func TestParseBBoxLayoutStopsAStreamAtEachCap(t *testing.T) {
	t.Parallel()
	wide := limits{pages: 1 << 30, textBytes: 1 << 40, lines: 1 << 30, outputBytes: 1 << 40, tokenBytes: 1 << 30}
	with := func(f func(*limits)) limits { l := wide; f(&l); return l }
	head := `<html><body><doc>`
	for _, tc := range []struct {
		name string
		in   io.Reader
		lim  limits
		want error
	}{
		{"pages", &endless{}, with(func(l *limits) { l.pages = 1000 }), &PageLimitError{Pages: 1001, Limit: 1000}},
		{"text", &endless{}, with(func(l *limits) { l.textBytes = 1 << 20 }), &TextLimitError{What: "bytes of text", Limit: 1 << 20}},
		{"lines", &endless{}, with(func(l *limits) { l.lines = 5000 }), &TextLimitError{What: "lines of text", Limit: 5000}},
		{"output", &endless{}, with(func(l *limits) { l.outputBytes = 4 << 20 }), &TextLimitError{What: "bytes of pdftotext output", Limit: 4 << 20}},
		{"one word", io.MultiReader(strings.NewReader(head+`<page><flow><block><line><word>`), &repeat{'x'}),
			with(func(l *limits) { l.tokenBytes = 1 << 20 }), &TextLimitError{What: "bytes in one XML token", Limit: 1 << 20}},
		{"one tag", io.MultiReader(strings.NewReader(head+`<page title="`), &repeat{'y'}),
			with(func(l *limits) { l.tokenBytes = 1 << 20 }), &TextLimitError{What: "bytes in one XML token", Limit: 1 << 20}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, _, err := parseBBoxLayout(tc.in, tc.lim)
			require.Equal(t, tc.want, err)
			require.True(t, errors.Is(err, ErrTooMuchText) || errors.Is(err, ErrTooManyPages))
		})
	}
}

// repeat is an endless run of one byte.
type repeat struct{ b byte }

func (r *repeat) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = r.b
	}
	return len(p), nil
}

func TestFindLineKeepsOnlyThePagesLine(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("t", 1<<20)
	tests := []struct {
		name, in, want string
	}{
		{"plain", "Title:  x\nPages:          12\nEncrypted: no\n", "12"},
		{"no newline at the end", "Pages: 7", "7"},
		{"absent", "Title: x\n", ""},
		{"a title longer than the buffer", "Title: " + long + "\nPages: 3\n", "3"},
		{"a long line that looks like it", "Pages: " + long + "\nPages: 4\n", "4"},
		{"a title that injects a page count", "Title: a\nPages: 1\nPages:          600\nEncrypted: no\n", "600"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := findLine(strings.NewReader(tt.in), "Pages:")
			require.NoError(t, err)
			require.Equal(t, tt.want, got)
		})
	}
}

func TestAForgedPageCountInTheTitleDoesNotPassThePageLimit(t *testing.T) {
	t.Parallel()
	pdf := pdftexttest.Dense(pdftexttest.DenseConfig{Pages: 4, LinesPerPage: 20, WordsPerLine: 10, Title: "A title\nPages: 1"})
	path := filepath.Join(t.TempDir(), "forged.pdf")
	require.NoError(t, os.WriteFile(path, pdf, 0o600))
	pages, err := pdfinfo(t.Context(), "pdfinfo", path)
	require.NoError(t, err)
	require.Equal(t, 4, pages, "pdfinfo's own Pages line, not the title's")

	// Either check alone stops it: pdfinfo's count, and the pages pdftotext writes.
	_, err = Extract(t.Context(), bytes.NewReader(pdf), int64(len(pdf)), &Opts{MaxPages: 3, TempDir: t.TempDir()})
	require.ErrorIs(t, err, ErrTooManyPages)
	var lim *PageLimitError
	require.ErrorAs(t, err, &lim)
	require.Equal(t, &PageLimitError{Pages: 4, Limit: 3}, lim)
}
