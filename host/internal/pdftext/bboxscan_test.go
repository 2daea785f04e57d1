package pdftext

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"testing/iotest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lectern-research/lectern/host/internal/fixturetest"
)

// wideLimits are caps no test input reaches.
var wideLimits = limits{pages: 1 << 30, textBytes: 1 << 40, lines: 1 << 30, outputBytes: 1 << 40, tokenBytes: 1 << 20}

// bboxOf is what `pdftotext -bbox-layout` writes for the PDF at path.
func bboxOf(t testing.TB, path string) []byte {
	t.Helper()
	out, err := exec.CommandContext(context.Background(), "pdftotext", "-bbox-layout", "-enc", "UTF-8", path, "-").Output()
	require.NoError(t, err, path)
	return out
}

// samplePDFs are the fixture PDFs and the package's own test PDFs that open.
func samplePDFs(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(fixturetest.Dir(t), "pdfs", "*.pdf"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, name := range []string{"paper.pdf", "nocopy.pdf", "pages3.pdf", "scanned.pdf"} {
		files = append(files, filepath.Join("testdata", name))
	}
	return files
}

// The scanner must read pdftotext's output exactly as the encoding/xml decoder
// it replaced did: the same pages, lines, boxes, sizes and raw text, for every
// fixture PDF, whether the stream arrives in large reads or one byte at a time.
func TestScannerReadsWhatEncodingXMLRead(t *testing.T) {
	t.Parallel()
	for _, path := range samplePDFs(t) {
		t.Run(filepath.Base(path), func(t *testing.T) {
			t.Parallel()
			out := bboxOf(t, path)
			wantPages, wantRaw, err := parseBBoxLayoutXML(bytes.NewReader(out), wideLimits)
			require.NoError(t, err)
			got, err := parseBBoxStream(bytes.NewReader(out), wideLimits)
			require.NoError(t, err)
			require.Equal(t, wantPages, got.pages)
			require.Equal(t, wantRaw, got.raw)

			slow, err := parseBBoxStream(iotest.OneByteReader(bytes.NewReader(out)), wideLimits)
			require.NoError(t, err)
			require.Equal(t, got, slow, "a token split across reads is read whole")
		})
	}
}

// bboxDoc wraps page elements in the head and body pdftotext writes.
func bboxDoc(head, pages string) string {
	return `<!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.0 Transitional//EN" "http://www.w3.org/TR/xhtml1/DTD/xhtml1-transitional.dtd">` +
		`<html xmlns="http://www.w3.org/1999/xhtml">` + "\n<head>\n" + head + "</head>\n<body>\n<doc>\n" + pages + "</doc>\n</body>\n</html>\n"
}

// wordsPage is a page of one line holding words (raw XHTML text each).
func wordsPage(words ...string) string {
	var b strings.Builder
	b.WriteString(`<page width="612.000000" height="792.000000"><flow><block xMin="1" yMin="2" xMax="3" yMax="4">` +
		`<line xMin="72.000000" yMin="100.000000" xMax="300.500000" yMax="110.250000">`)
	for i, w := range words {
		fmt.Fprintf(&b, "\n<word xMin=\"%d.125000\" yMin=\"100.000000\" xMax=\"%d.875000\" yMax=\"110.250000\">%s</word>", 72+40*i, 100+40*i, w)
	}
	b.WriteString("</line></block></flow></page>\n")
	return b.String()
}

// The corners of the format that real papers rarely reach: entities (XML's,
// numeric, HTML's, unknown ones), control bytes copied from fonts, carriage
// returns, self-closing tags, quotes in attributes and numbers in other
// notations. The scanner reads them as encoding/xml did.
func TestScannerReadsTheFormatsCornersAsEncodingXMLDid(t *testing.T) {
	t.Parallel()
	for name, in := range map[string]string{
		"entities":       bboxDoc("", wordsPage("AT&amp;T", "&lt;x&gt;", "&quot;q&apos;", "caf&#233;", "&#x263A;", "&nbsp;x", "&unknown;", "a&b", "&#xZZ;", "&#;")),
		"control bytes":  bboxDoc("", wordsPage("a\x01b", "\x02", "c\x1fd\x7f")),
		"line ends":      bboxDoc("", wordsPage("a\rb", "c\r\nd", "e\r\x01\nf", " padded ")),
		"self-closing":   bboxDoc("", wordsPage("one", "two")+`<page width="100" height="200"/>`+wordsPage("three")),
		"other numbers":  bboxDoc("", strings.Replace(wordsPage("w"), `xMin="72.125000"`, `xMin="7.2e1" xMin="bad"`, 1)),
		"repeated attrs": bboxDoc("", strings.Replace(wordsPage("w"), `xMin="72.125000"`, `xMin="x" xMin='73.5'`, 1)),
		"single quotes":  bboxDoc("", strings.ReplaceAll(wordsPage("w", "v"), `"`, `'`)),
		"no words":       bboxDoc("", `<page width="612" height="792"></page>`),
		"empty":          "",
		"lines outside a page and a word outside a line": bboxDoc("", `<line xMin="1"><word>lost</word></line>`+wordsPage("kept")+`<word>stray</word>`),
		"number lines": bboxDoc("", `<page width="612" height="792"><flow><block>`+
			`<line xMin="72" yMin="100" xMax="80" yMax="110"><word xMin="72" yMin="100" xMax="80" yMax="110">2</word></line></block><block>`+
			`<line xMin="90" yMin="100" xMax="200" yMax="110"><word xMin="90" yMin="100" xMax="200" yMax="110">Method</word></line></block></flow></page>`),
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			wantPages, wantRaw, wantErr := parseBBoxLayoutXML(strings.NewReader(in), wideLimits)
			require.NoError(t, wantErr)
			got, err := parseBBoxStream(iotest.HalfReader(strings.NewReader(in)), wideLimits)
			require.NoError(t, err)
			require.Equal(t, wantPages, got.pages)
			require.Equal(t, wantRaw, got.raw)
		})
	}
}

// Text that is not UTF-8, or holds a character XML forbids, failed the
// extraction as a malformed PDF with encoding/xml; it still does, rather than
// reaching PostgreSQL, which would refuse it.
func TestScannerRefusesWhatEncodingXMLRefused(t *testing.T) {
	t.Parallel()
	for name, word := range map[string]string{
		"invalid UTF-8":         "caf\xe9",
		"a surrogate":           "\xed\xa0\x80",
		"U+FFFE":                "\xef\xbf\xbe",
		"a control as a number": "&#1;",
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			in := bboxDoc("", wordsPage("fine", word))
			_, _, xerr := parseBBoxLayoutXML(strings.NewReader(in), wideLimits)
			require.Error(t, xerr)
			_, err := parseBBoxStream(strings.NewReader(in), wideLimits)
			require.ErrorIs(t, err, errSyntax)
			require.ErrorContains(t, err, "parse pdftotext output: ")
		})
	}
}

// Output cut short inside a tag is malformed, however the cut falls.
func TestScannerFailsOnOutputCutInsideATag(t *testing.T) {
	t.Parallel()
	full := bboxDoc("<title>T</title>\n", wordsPage("alpha", "beta"))
	cuts := 0
	for i := 1; i < len(full); i++ {
		if open := strings.LastIndexByte(full[:i], '<'); open < 0 || strings.LastIndexByte(full[:i], '>') > open {
			continue // the cut falls between tags: what was read is whole
		}
		cuts++
		_, err := parseBBoxStream(strings.NewReader(full[:i]), wideLimits)
		require.ErrorIs(t, err, errSyntax, "cut at %d: %q", i, full[max(0, i-20):i])
	}
	require.Greater(t, cuts, 100)
}

// The info dictionary's title and author come from the head pdftotext writes,
// decoded, first line only, as pdfinfo's report gave them; the words of the
// pages never count as either.
func TestScannerReadsTheInfoDictionaryFromTheHead(t *testing.T) {
	t.Parallel()
	head := "<title>  Apparent &amp; average\nsecond line </title>\n<meta name=\"Subject\" content=\"s\"/>\n" +
		"<meta name=\"Author\" content=\"Kyle Lo ; Lucy &quot;Lu&quot; Wang\"/>\n"
	got, err := parseBBoxStream(strings.NewReader(bboxDoc(head, wordsPage("<title>x</title>")+`<meta name="Author" content="not this"/>`)), wideLimits)
	require.NoError(t, err)
	require.Equal(t, "Apparent & average", got.title)
	require.Equal(t, `Kyle Lo ; Lucy "Lu" Wang`, got.author)

	for _, path := range samplePDFs(t) {
		info, err := exec.CommandContext(t.Context(), "pdfinfo", "-enc", "UTF-8", path).Output()
		require.NoError(t, err)
		want := map[string]string{}
		for _, l := range strings.Split(string(info), "\n") {
			if k, v, ok := strings.Cut(l, ":"); ok && (k == "Title" || k == "Author") && want[k] == "" {
				want[k] = strings.TrimSpace(v)
			}
		}
		got, err := parseBBoxStream(bytes.NewReader(bboxOf(t, path)), wideLimits)
		require.NoError(t, err)
		require.Equal(t, want["Title"], got.title, path)
		require.Equal(t, want["Author"], got.author, path)
	}
}

// fakeTool writes an executable script standing in for pdftotext.
func fakeTool(t *testing.T, script string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "pdftotext")
	require.NoError(t, os.WriteFile(path, []byte("#!/bin/sh\n"+script), 0o700))
	return path
}

// A pdftotext that dies mid-stream (killed, out of memory) fails the
// extraction as a malformed PDF, with the pages it wrote before dying thrown
// away, never as a shorter Document.
func TestExtractFailsWhenPdftotextIsKilledMidStream(t *testing.T) {
	t.Parallel()
	pages := wordsPage("one", "of", "the", "pages", "written", "before", "the", "process", "died")
	for name, cut := range map[string]string{
		"between two pages": bboxDoc("", pages+pages),
		"inside a tag":      bboxDoc("", pages+pages)[:300],
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			out := filepath.Join(t.TempDir(), "out.xml")
			require.NoError(t, os.WriteFile(out, []byte(cut), 0o600))
			bin := fakeTool(t, "cat '"+out+"'\nkill -9 $$\n")
			doc, err := ExtractFile(t.Context(), filepath.Join("testdata", "paper.pdf"), &Opts{PdftotextPath: bin, MinPageChars: 1})
			require.Nil(t, doc)
			require.ErrorIs(t, err, ErrMalformed)
			require.True(t, strings.HasPrefix(err.Error(), "pdftext: "), err.Error())
		})
	}
}

// Cancelling the context while pdftotext is writing returns at once with the
// context's error, and leaves neither the process nor a goroutine behind,
// even when the process would otherwise write forever.
func TestExtractCancelledMidStreamLeavesNothingRunning(t *testing.T) {
	// Not parallel: it counts the process's goroutines.
	pidFile := filepath.Join(t.TempDir(), "pid")
	head := bboxDoc("", wordsPage("first", "page"))
	head = head[:strings.Index(head, "</doc>")]
	// The shell writes its pid and a first page, then becomes a writer that
	// never stops (exec keeps the pid: the process killed is the one writing).
	bin := fakeTool(t, fmt.Sprintf("echo $$ > '%s'\nprintf '%%s' '%s'\nexec yes '%s'\n",
		pidFile, head, `<page width="612" height="792"></page>`))
	before := runtime.NumGoroutine()

	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		_, err := ExtractFile(ctx, filepath.Join("testdata", "paper.pdf"), &Opts{PdftotextPath: bin, MaxPages: 1 << 30})
		done <- err
	}()
	var pid int
	require.Eventually(t, func() bool {
		b, err := os.ReadFile(pidFile)
		pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		return err == nil && pid > 0
	}, 10*time.Second, 10*time.Millisecond, "the fake pdftotext started")
	time.Sleep(50 * time.Millisecond) // let it stream
	cancel()
	select {
	case err := <-done:
		require.ErrorIs(t, err, context.Canceled)
	case <-time.After(10 * time.Second):
		t.Fatal("ExtractFile did not return after its context ended")
	}
	require.ErrorIs(t, syscall.Kill(pid, 0), syscall.ESRCH, "the process %d is gone (killed and reaped)", pid)
	if !assertEventually(func() bool { return runtime.NumGoroutine() <= before }, 10*time.Second) {
		buf := make([]byte, 1<<20)
		t.Fatalf("goroutines: %d before, %d after:\n%s", before, runtime.NumGoroutine(), buf[:runtime.Stack(buf, true)])
	}
}

// A process that hands its stdout to a child and dies still ends the read when
// the context ends: the pipe is closed, not left to the child.
func TestExtractCancelledWhileAChildHoldsThePipe(t *testing.T) {
	t.Parallel()
	bin := fakeTool(t, "sleep 20 &\nsleep 20\n")
	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := ExtractFile(ctx, filepath.Join("testdata", "paper.pdf"), &Opts{PdftotextPath: bin})
	require.True(t, errors.Is(err, context.DeadlineExceeded), "%v", err)
	require.Less(t, time.Since(start), 5*time.Second)
}

// The caps stop the scanner as they stopped the decoder, one byte at a time
// too.
func TestScannerStopsAtTheTokenCapAcrossReads(t *testing.T) {
	t.Parallel()
	lim := wideLimits
	lim.tokenBytes = 1 << 10
	in := io.MultiReader(strings.NewReader(bboxDoc("", "")[:120]+`<page><flow><block><line><word>`), iotest.OneByteReader(&repeat{'x'}))
	_, err := parseBBoxStream(in, lim)
	require.Equal(t, &TextLimitError{What: "bytes in one XML token", Limit: 1 << 10}, err)
}

// assertEventually polls cond until it holds or d passes.
func assertEventually(cond func() bool, d time.Duration) bool {
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		if cond() {
			return true
		}
	}
	return cond()
}
