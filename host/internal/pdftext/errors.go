package pdftext

import (
	"errors"
	"fmt"
)

// ErrMalformed is returned for input that is not a readable PDF: no %PDF header,
// a file cut short (no %%EOF marker at its end) or a file poppler cannot parse.
var ErrMalformed = errors.New("malformed or truncated PDF")

// ErrEncrypted is returned for a PDF that cannot be opened without a password.
// A PDF encrypted only with an owner password (permissions) opens and is
// extracted.
var ErrEncrypted = errors.New("encrypted PDF (password required)")

// ErrEmpty is returned for a PDF that has no pages.
var ErrEmpty = errors.New("PDF has no pages")

// ErrScanned is returned when no page has a text layer of at least
// [Opts.MinPageChars] characters: a scanned or image-only PDF that would need OCR.
var ErrScanned = errors.New("PDF has no text layer (scanned or image-only)")

// ErrTooManyPages is returned, wrapped in a [*PageLimitError], when the PDF has
// more pages than [Opts.MaxPages].
var ErrTooManyPages = errors.New("PDF has too many pages")

// ErrTooMuchText is returned, wrapped in a [*TextLimitError], when the text
// pdftotext writes for a PDF passes one of the caps of [Opts]: a small
// compressed PDF can expand to far more text than any paper holds. The
// subprocess is killed as soon as a cap is crossed, so at most that much text is
// ever held.
var ErrTooMuchText = errors.New("PDF holds too much text")

// ErrToolMissing is returned when pdftotext or pdfinfo is not installed
// (Debian package poppler-utils; scripts/ensure-tools installs it).
var ErrToolMissing = errors.New("pdftotext/pdfinfo not installed (package poppler-utils)")

// PageLimitError reports a PDF over the page limit. It matches ErrTooManyPages
// with errors.Is.
type PageLimitError struct {
	// Pages is the PDF's page count as pdfinfo reports it once pdftotext's
	// output has passed the limit, or the pages read so far (the limit plus
	// one) when pdfinfo cannot tell.
	Pages int
	// Limit is the limit it exceeded.
	Limit int
}

// Error implements error.
func (e *PageLimitError) Error() string {
	return fmt.Sprintf("%s: %d pages, limit %d", ErrTooManyPages, e.Pages, e.Limit)
}

// Is makes errors.Is(err, ErrTooManyPages) true.
func (e *PageLimitError) Is(target error) bool { return target == ErrTooManyPages }

// TextLimitError reports a PDF whose extracted text crossed a cap. It matches
// ErrTooMuchText with errors.Is.
type TextLimitError struct {
	// What names the quantity that crossed its cap: "bytes of text", "lines of
	// text", "bytes of pdftotext output" or "bytes in one XML token".
	What string
	// Limit is the cap it crossed.
	Limit int64
}

// Error implements error.
func (e *TextLimitError) Error() string {
	return fmt.Sprintf("%s: more than %d %s", ErrTooMuchText, e.Limit, e.What)
}

// Is makes errors.Is(err, ErrTooMuchText) true.
func (e *TextLimitError) Is(target error) bool { return target == ErrTooMuchText }
