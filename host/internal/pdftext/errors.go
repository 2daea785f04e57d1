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

// ErrToolMissing is returned when pdftotext or pdfinfo is not installed
// (Debian package poppler-utils; scripts/ensure-tools installs it).
var ErrToolMissing = errors.New("pdftotext/pdfinfo not installed (package poppler-utils)")

// PageLimitError reports a PDF over the page limit. It matches ErrTooManyPages
// with errors.Is.
type PageLimitError struct {
	// Pages is the PDF's page count.
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
