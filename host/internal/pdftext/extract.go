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
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"
)

// DefaultMaxPages is the page limit when [Opts.MaxPages] is zero.
const DefaultMaxPages = 500

// DefaultMinPageChars is the text-layer threshold when [Opts.MinPageChars] is zero.
const DefaultMinPageChars = 100

// DefaultMaxTextBytes is the text cap when [Opts.MaxTextBytes] is zero: 8 MiB,
// twice a dense paper at the page limit (500 pages of 8 KB; the fixture papers
// hold 2 to 6 KB a page, and a thesis or book 2 to 3 KB).
const DefaultMaxTextBytes = 8 << 20

// DefaultMaxLines is the line cap when [Opts.MaxLines] is zero: 400 lines a page
// at the page limit (the fixture papers have 25 to 110 a page).
const DefaultMaxLines = 200_000

// outputPerTextByte bounds pdftotext's XML against the text cap: the stream is
// cut after outputPerTextByte*MaxTextBytes bytes. Real papers write 15 to 21
// bytes of XML per byte of text (measured on the fixtures).
const outputPerTextByte = 40

// maxTokenBytes bounds one XML token (a tag, or the text between two tags): the
// decoder holds a whole token, and no word or tag pdftotext writes for a real
// page comes near 1 MiB.
const maxTokenBytes = 1 << 20

// waitDelay is how long Wait waits for stderr to close once the process is
// gone: a child it left behind may hold the pipe open.
const waitDelay = time.Second

// maxStderrBytes is how much of a tool's stderr is kept for error messages.
const maxStderrBytes = 4 << 10

// Opts are optional settings of [Extract] and [ExtractFile]; nil means defaults.
type Opts struct {
	// MaxPages is the most pages a PDF may have; more fail with ErrTooManyPages
	// as soon as pdftotext starts the page after the limit (the process is
	// killed, and pdfinfo counts the whole PDF for the error). Default
	// DefaultMaxPages (500).
	MaxPages int
	// MinPageChars is how many non-space characters at least one page must hold
	// for the PDF to count as having a text layer; otherwise Extract fails with
	// ErrScanned. Default DefaultMinPageChars (100).
	MinPageChars int
	// MaxTextBytes is the most text Extract reads from a PDF, counted as it will
	// stand in Document.Text (words, spaces and line breaks). pdftotext's output
	// is read as it is written and the process is killed as soon as the text
	// passes the cap; Extract then fails with ErrTooMuchText. Default
	// DefaultMaxTextBytes (8 MiB).
	MaxTextBytes int
	// MaxLines is the most lines of text Extract reads from a PDF; more fail
	// with ErrTooMuchText the same way. Each line costs about 100 bytes on top of
	// its text, so this bounds what a PDF of many tiny lines holds. Default
	// DefaultMaxLines (200,000).
	MaxLines int
	// PdftotextPath is the pdftotext binary. Default "pdftotext" looked up in PATH.
	PdftotextPath string
	// PdfinfoPath is the pdfinfo binary, run only for a PDF over MaxPages (and
	// looked up before every extraction). Default "pdfinfo" looked up in PATH.
	PdfinfoPath string
	// TempDir is where Extract copies its input for poppler. Default os.TempDir().
	TempDir string
}

func (o *Opts) withDefaults() Opts {
	var r Opts
	if o != nil {
		r = *o
	}
	if r.MaxPages <= 0 {
		r.MaxPages = DefaultMaxPages
	}
	if r.MinPageChars <= 0 {
		r.MinPageChars = DefaultMinPageChars
	}
	if r.MaxTextBytes <= 0 {
		r.MaxTextBytes = DefaultMaxTextBytes
	}
	if r.MaxLines <= 0 {
		r.MaxLines = DefaultMaxLines
	}
	if r.PdftotextPath == "" {
		r.PdftotextPath = "pdftotext"
	}
	if r.PdfinfoPath == "" {
		r.PdfinfoPath = "pdfinfo"
	}
	return r
}

// Document is the text of a PDF and what was found in it. Offsets are byte
// offsets into Text (see the package doc).
type Document struct {
	// Text is every page's text in reading order, pages joined by "\f".
	Text string
	// Pages are the pages in order; Pages[i].Number is i+1.
	Pages []Page
	// Title is the largest-font text on page 1, "" when none was found.
	Title string
	// DOI is the first DOI printed on the first two pages outside the references,
	// as printed (DOIs compare case-insensitively), "" when none.
	DOI string
	// ArXivID is the first arXiv identifier on the first two pages outside the
	// references (e.g. "2304.02623v1", "astro-ph/0601001"), "" when none.
	ArXivID string
	// Sections tile Text in order: each starts where the previous ends, the first
	// at 0 and the last ending at len(Text).
	Sections []Section
	// References are the entries of the last references section, in order.
	References []Reference
	// Metadata holds the authors, abstract, year and venue read from page 1.
	Metadata
	// Raw is every page's text as pdftotext extracted it, before the clean
	// text's steps: running headers and page numbers still in, words still
	// hyphenated across lines, ligatures and split small capitals as printed.
	// It is laid out as Text is (pages joined by "\f").
	Raw string
	// Map maps each byte offset of Text back to Raw: where the printed words
	// of a passage or a quote are.
	Map OffsetMap
}

// Page is one page of a Document.
type Page struct {
	// Number is the 1-based page number.
	Number int
	// Offset is where the page starts in Document.Text.
	Offset int
	// Text is the page's text, equal to Document.Text[Offset:Offset+len(Text)].
	Text string
	// RawOffset is where the page starts in Document.Raw, and Raw its raw text,
	// equal to Document.Raw[RawOffset:RawOffset+len(Raw)].
	RawOffset int
	Raw       string
}

// PageAt returns the 1-based number of the page holding byte offset off of
// Text; offsets past the end belong to the last page.
func (d *Document) PageAt(off int) int {
	lo, hi := 0, len(d.Pages)-1
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if d.Pages[mid].Offset <= off {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return lo + 1
}

// RawPageAt returns the 1-based number of the page holding byte offset off of
// Raw; offsets past the end belong to the last page.
func (d *Document) RawPageAt(off int) int {
	return sort.Search(len(d.Pages), func(i int) bool { return d.Pages[i].RawOffset > off })
}

// ExtractFile extracts the PDF at path. See [Extract].
func ExtractFile(ctx context.Context, path string, opts *Opts) (*Document, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("pdftext: open: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("pdftext: stat: %w", err)
	}
	if err := checkEnvelope(f, fi.Size()); err != nil {
		return nil, err
	}
	return extractPath(ctx, path, opts.withDefaults())
}

// Extract extracts the PDF of size bytes read from r: it checks the file's
// envelope, then runs pdftotext and reads its layout as pdftotext writes it,
// and analyses it. It fails with an error
// matching ErrMalformed, ErrEncrypted, ErrEmpty, ErrScanned, ErrTooManyPages,
// ErrTooMuchText or ErrToolMissing, or with ctx's error when ctx ends first (the
// subprocesses are killed). The input is copied to a temporary file that is
// removed before Extract returns.
func Extract(ctx context.Context, r io.ReaderAt, size int64, opts *Opts) (*Document, error) {
	if err := checkEnvelope(r, size); err != nil {
		return nil, err
	}
	o := opts.withDefaults()
	tmp, err := os.CreateTemp(o.TempDir, "lectern-pdftext-*.pdf")
	if err != nil {
		return nil, fmt.Errorf("pdftext: temp file: %w", err)
	}
	defer os.Remove(tmp.Name())
	_, err = io.Copy(tmp, io.NewSectionReader(r, 0, size))
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, fmt.Errorf("pdftext: copy to temp file: %w", err)
	}
	return extractPath(ctx, tmp.Name(), o)
}

// checkEnvelope rejects what is plainly not a whole PDF: no "%PDF-" header in the
// first KiB, or no "%%EOF" in the last KiB (a download or upload cut short).
func checkEnvelope(r io.ReaderAt, size int64) error {
	const window = 1024
	if size < 16 {
		return fmt.Errorf("pdftext: %w: %d bytes", ErrMalformed, size)
	}
	head := make([]byte, min(window, size))
	if _, err := r.ReadAt(head, 0); err != nil && err != io.EOF {
		return fmt.Errorf("pdftext: read header: %w", err)
	}
	if !bytes.Contains(head, []byte("%PDF-")) {
		return fmt.Errorf("pdftext: %w: no %%PDF- header", ErrMalformed)
	}
	tail := make([]byte, min(window, size))
	if _, err := r.ReadAt(tail, size-int64(len(tail))); err != nil && err != io.EOF {
		return fmt.Errorf("pdftext: read trailer: %w", err)
	}
	if !bytes.Contains(tail, []byte("%%EOF")) {
		return fmt.Errorf("pdftext: %w: no %%%%EOF marker at the end (truncated?)", ErrMalformed)
	}
	return nil
}

// extractPath runs pdftotext on path and analyses what it writes. pdfinfo runs
// only when the PDF passes the page limit, for the page count the error reports:
// pdftotext's own output carries the page count (one <page> each), the info
// dictionary's title and author (its head), and its exit status and stderr say
// when the PDF is encrypted, empty or broken.
func extractPath(ctx context.Context, path string, o Opts) (*Document, error) {
	if err := lookTools(o); err != nil {
		return nil, err
	}
	out, err := pdftotext(ctx, o, path)
	if err != nil {
		return nil, err
	}
	layout := out.pages
	if len(layout) == 0 {
		return nil, fmt.Errorf("pdftext: %w", ErrEmpty)
	}
	if !hasTextLayer(layout, o.MinPageChars) {
		return nil, fmt.Errorf("pdftext: %w: no page of %d holds %d characters of text", ErrScanned, len(layout), o.MinPageChars)
	}
	doc := analyse(layout, out.raw)
	if doc.Title == "" || len(doc.Authors) == 0 {
		applyInfo(doc, out.title, out.author)
	}
	return doc, nil
}

// lookTools fails with ErrToolMissing unless both poppler tools are installed:
// pdfinfo runs only for a PDF over the page limit, and a host that lacks it
// should say so at its first PDF, not at its first long one.
func lookTools(o Opts) error {
	for _, bin := range []string{o.PdftotextPath, o.PdfinfoPath} {
		if _, err := exec.LookPath(bin); err != nil {
			return fmt.Errorf("pdftext: %w: %w", ErrToolMissing, err)
		}
	}
	return nil
}

func hasTextLayer(pages []layoutPage, minChars int) bool {
	for _, p := range pages {
		n := 0
		for _, l := range p.lines {
			for _, r := range l.text {
				if !unicode.IsSpace(r) {
					n++
				}
			}
		}
		if n >= minChars {
			return true
		}
	}
	return false
}

// pdfinfo returns the page count, mapping poppler's failures to the package errors.
// Only the Pages line of its output is kept: the title and other metadata it
// prints first can be as long as the PDF makes them.
func pdfinfo(ctx context.Context, bin, path string) (int, error) {
	pages := ""
	stderr, err := run(ctx, bin, []string{"-enc", "UTF-8", path}, func(stdout io.Reader) error {
		v, err := findLine(stdout, "Pages:")
		pages = v
		return err
	})
	if err != nil {
		switch {
		case errors.Is(err, ErrToolMissing), ctx.Err() != nil:
			return 0, err
		case strings.Contains(stderr, "Incorrect password"):
			return 0, fmt.Errorf("pdftext: %w", ErrEncrypted)
		case strings.Contains(stderr, "Invalid page count 0"):
			return 0, fmt.Errorf("pdftext: %w", ErrEmpty)
		default:
			return 0, fmt.Errorf("pdftext: %w: pdfinfo: %s", ErrMalformed, firstLine(stderr, err))
		}
	}
	if pages == "" {
		return 0, fmt.Errorf("pdftext: %w: pdfinfo reported no page count", ErrMalformed)
	}
	n, err := strconv.Atoi(pages)
	if err != nil {
		return 0, fmt.Errorf("pdftext: %w: pdfinfo page count %q", ErrMalformed, pages)
	}
	return n, nil
}

// findLine reads r to its end and returns what follows prefix on the last line
// starting with it, trimmed; "" when no line does. The last, because pdfinfo
// prints the PDF's own title and subject, which may hold a line break and a
// "Pages:" of their choosing, before its own Pages line. Lines longer than the
// read buffer are skipped, so memory stays bounded whatever r holds.
func findLine(r io.Reader, prefix string) (string, error) {
	br := bufio.NewReaderSize(r, 4096)
	found, skipping := "", false
	for {
		l, err := br.ReadSlice('\n')
		switch {
		case err == bufio.ErrBufferFull:
			skipping = true
			continue
		case skipping:
			skipping = false // the tail of a line too long to be the one we want
		case bytes.HasPrefix(l, []byte(prefix)):
			found = strings.TrimSpace(string(l[len(prefix):]))
		}
		if err == io.EOF {
			return found, nil
		}
		if err != nil {
			return found, err
		}
	}
}

// pdftotext runs `pdftotext -bbox-layout` and decodes its XHTML as it is
// written, under o's caps: crossing one kills the process and fails with
// ErrTooMuchText or ErrTooManyPages. Its failures map to the package errors as
// pdfinfo's did: "Incorrect password" is ErrEncrypted, "Invalid page count 0"
// ErrEmpty, anything else ErrMalformed with poppler's first line.
func pdftotext(ctx context.Context, o Opts, path string) (*bboxOutput, error) {
	var out *bboxOutput
	lim := limits{
		pages:       o.MaxPages,
		textBytes:   int64(o.MaxTextBytes),
		lines:       o.MaxLines,
		outputBytes: outputPerTextByte * int64(o.MaxTextBytes),
		tokenBytes:  maxTokenBytes,
	}
	stderr, err := run(ctx, o.PdftotextPath, []string{"-bbox-layout", "-enc", "UTF-8", path, "-"}, func(stdout io.Reader) error {
		var err error
		out, err = parseBBoxStream(stdout, lim)
		return err
	})
	var ple *PageLimitError
	switch {
	case err == nil:
		return out, nil
	case errors.Is(err, ErrToolMissing), ctx.Err() != nil:
		return nil, err
	case errors.As(err, &ple):
		return nil, fmt.Errorf("pdftext: %w", pageCount(ctx, o.PdfinfoPath, path, ple))
	case errors.Is(err, ErrTooMuchText):
		return nil, fmt.Errorf("pdftext: %w", err)
	case strings.Contains(stderr, "Incorrect password"):
		return nil, fmt.Errorf("pdftext: %w", ErrEncrypted)
	case strings.Contains(stderr, "Invalid page count 0"):
		return nil, fmt.Errorf("pdftext: %w", ErrEmpty)
	default:
		return nil, fmt.Errorf("pdftext: %w: pdftotext: %s", ErrMalformed, firstLine(stderr, err))
	}
}

// pageCount fills in the PDF's whole page count, which pdfinfo reports, for an
// error that pdftotext's output raised at the first page over the limit; when
// pdfinfo cannot tell, the pages read stand.
func pageCount(ctx context.Context, bin, path string, ple *PageLimitError) *PageLimitError {
	if n, err := pdfinfo(ctx, bin, path); err == nil && n > ple.Pages {
		return &PageLimitError{Pages: n, Limit: ple.Limit}
	}
	return ple
}

// run runs bin with args under ctx, handing its stdout to read as it is
// written, in the caller's goroutine: decoding overlaps the process's work.
// When read fails the process is killed and read's error returned; otherwise
// the error is the process's. The first maxStderrBytes of stderr are
// returned for messages.
func run(ctx context.Context, bin string, args []string, read func(stdout io.Reader) error) (string, error) {
	if _, err := exec.LookPath(bin); err != nil {
		return "", fmt.Errorf("pdftext: %w: %w", ErrToolMissing, err)
	}
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	cmd := exec.CommandContext(runCtx, bin, args...)
	stderr := &headWriter{max: maxStderrBytes}
	cmd.Stderr = stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return "", fmt.Errorf("pdftext: %s: %w", bin, err)
	}
	// When ctx ends (or read fails), the process is killed and its stdout
	// closed, so read returns at once even if something else still holds the
	// pipe's other end open; then Wait reaps the process.
	cmd.Cancel = func() error {
		_ = stdout.Close()
		return cmd.Process.Kill()
	}
	cmd.WaitDelay = waitDelay
	if err := cmd.Start(); err != nil {
		return "", fmt.Errorf("pdftext: %s: %w", bin, err)
	}
	rerr := read(stdout)
	if rerr != nil {
		cancel() // kills the process; what it would still write is not wanted
	}
	werr := cmd.Wait()
	switch {
	case ctx.Err() != nil:
		return stderr.String(), fmt.Errorf("pdftext: %s: %w", bin, ctx.Err())
	case rerr != nil:
		return stderr.String(), rerr
	case errors.Is(werr, exec.ErrWaitDelay) && cmd.ProcessState.Success():
		// The process finished well and its output was read whole; only the copy
		// of its stderr was still under way when the delay ran out (a starved
		// machine, or a child of the tool holding the pipe). That is no reason to
		// call a good PDF malformed: the upload would fail for good.
		return stderr.String(), nil
	case werr != nil:
		return stderr.String(), fmt.Errorf("pdftext: %s: %w", bin, werr)
	}
	return stderr.String(), nil
}

// headWriter keeps the first max bytes written to it and drops the rest.
type headWriter struct {
	buf bytes.Buffer
	max int
}

func (w *headWriter) Write(p []byte) (int, error) {
	if room := w.max - w.buf.Len(); room > 0 {
		w.buf.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}

func (w *headWriter) String() string { return w.buf.String() }

func firstLine(stderr string, err error) string {
	for _, l := range strings.Split(stderr, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			return l
		}
	}
	return err.Error()
}
