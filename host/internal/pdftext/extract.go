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
	"strconv"
	"strings"
	"unicode"
)

// DefaultMaxPages is the page limit when [Opts.MaxPages] is zero.
const DefaultMaxPages = 500

// DefaultMinPageChars is the text-layer threshold when [Opts.MinPageChars] is zero.
const DefaultMinPageChars = 100

// Opts are optional settings of [Extract] and [ExtractFile]; nil means defaults.
type Opts struct {
	// MaxPages is the most pages a PDF may have; more fail with ErrTooManyPages
	// before any text is extracted. Default DefaultMaxPages (500).
	MaxPages int
	// MinPageChars is how many non-space characters at least one page must hold
	// for the PDF to count as having a text layer; otherwise Extract fails with
	// ErrScanned. Default DefaultMinPageChars (100).
	MinPageChars int
	// PdftotextPath is the pdftotext binary. Default "pdftotext" looked up in PATH.
	PdftotextPath string
	// PdfinfoPath is the pdfinfo binary. Default "pdfinfo" looked up in PATH.
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
}

// Page is one page of a Document.
type Page struct {
	// Number is the 1-based page number.
	Number int
	// Offset is where the page starts in Document.Text.
	Offset int
	// Text is the page's text, equal to Document.Text[Offset:Offset+len(Text)].
	Text string
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
// envelope, asks pdfinfo for the page count and encryption, then runs pdftotext
// and analyses its layout. It fails with an error matching ErrMalformed,
// ErrEncrypted, ErrEmpty, ErrScanned, ErrTooManyPages or ErrToolMissing, or with
// ctx's error when ctx ends first (the subprocesses are killed). The input is
// copied to a temporary file that is removed before Extract returns.
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

func extractPath(ctx context.Context, path string, o Opts) (*Document, error) {
	pages, err := pdfinfo(ctx, o.PdfinfoPath, path)
	if err != nil {
		return nil, err
	}
	if pages == 0 {
		return nil, fmt.Errorf("pdftext: %w", ErrEmpty)
	}
	if pages > o.MaxPages {
		return nil, fmt.Errorf("pdftext: %w", &PageLimitError{Pages: pages, Limit: o.MaxPages})
	}
	layout, err := pdftotext(ctx, o.PdftotextPath, path)
	if err != nil {
		return nil, err
	}
	if len(layout) == 0 {
		return nil, fmt.Errorf("pdftext: %w", ErrEmpty)
	}
	if !hasTextLayer(layout, o.MinPageChars) {
		return nil, fmt.Errorf("pdftext: %w: no page of %d holds %d characters of text", ErrScanned, len(layout), o.MinPageChars)
	}
	return analyse(layout), nil
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
func pdfinfo(ctx context.Context, bin, path string) (int, error) {
	out, stderr, err := run(ctx, bin, "-enc", "UTF-8", path)
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
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "Pages:"); ok {
			n, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil {
				return 0, fmt.Errorf("pdftext: %w: pdfinfo page count %q", ErrMalformed, v)
			}
			return n, nil
		}
	}
	return 0, fmt.Errorf("pdftext: %w: pdfinfo reported no page count", ErrMalformed)
}

func pdftotext(ctx context.Context, bin, path string) ([]layoutPage, error) {
	out, stderr, err := run(ctx, bin, "-bbox-layout", "-enc", "UTF-8", path, "-")
	if err != nil {
		switch {
		case errors.Is(err, ErrToolMissing), ctx.Err() != nil:
			return nil, err
		case strings.Contains(stderr, "Incorrect password"):
			return nil, fmt.Errorf("pdftext: %w", ErrEncrypted)
		default:
			return nil, fmt.Errorf("pdftext: %w: pdftotext: %s", ErrMalformed, firstLine(stderr, err))
		}
	}
	pages, err := parseBBoxLayout(bytes.NewReader(out))
	if err != nil {
		return nil, fmt.Errorf("pdftext: %w: %w", ErrMalformed, err)
	}
	return pages, nil
}

// run runs bin with args under ctx and returns its stdout and stderr.
func run(ctx context.Context, bin string, args ...string) ([]byte, string, error) {
	if _, err := exec.LookPath(bin); err != nil {
		return nil, "", fmt.Errorf("pdftext: %w: %w", ErrToolMissing, err)
	}
	cmd := exec.CommandContext(ctx, bin, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return nil, stderr.String(), fmt.Errorf("pdftext: %s: %w", bin, ctx.Err())
		}
		return nil, stderr.String(), fmt.Errorf("pdftext: %s: %w", bin, err)
	}
	return stdout.Bytes(), stderr.String(), nil
}

func firstLine(stderr string, err error) string {
	for _, l := range strings.Split(stderr, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			return l
		}
	}
	return err.Error()
}
