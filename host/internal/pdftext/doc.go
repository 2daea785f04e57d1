// Package pdftext turns a PDF into text a research assistant can cite: the pages'
// text in reading order, where each page starts in the concatenated text, the
// title, authors, abstract, year, venue, DOI and arXiv id printed on the first
// pages (the info dictionary fills a missing title or author list), the sections
// (abstract, numbered and unnumbered headings, references) and the reference list
// split into entries with the DOI or arXiv id each carries.
//
// It is internal to the host and its API is not stable.
//
// # Extractor
//
// Text comes from poppler's pdftotext (Debian package poppler-utils), run as a
// subprocess with -bbox-layout: its reading order reads two-column pages column by
// column, and the word boxes it reports give the font size used to find the title
// and headings. Its output also carries the page count (one <page> each) and the
// info dictionary's title and author (its head), and its exit status and stderr
// say when a PDF is encrypted, empty or broken; pdfinfo (same package) runs only
// for a PDF over the page limit, to report its whole page count.
// docs/ingest.md says why this extractor was chosen and docs/benchmarks.md
// ("PDF extraction") holds the measurements; scripts/ensure-tools installs it.
//
// # Offsets
//
// Every offset in a [Document] (page starts, section and reference spans) is a
// byte offset into [Document.Text], which is UTF-8: Text[s.Start:s.End] is the
// span. Pages are joined with a form feed ("\f"); blocks within a page are
// separated by a blank line and lines by a newline, as pdftotext lays them out.
//
// # Failures
//
// Extract either returns a whole Document or an error matching one of
// [ErrMalformed], [ErrEncrypted], [ErrEmpty], [ErrScanned], [ErrTooManyPages],
// [ErrTooMuchText] or [ErrToolMissing] with errors.Is; it writes nothing but a
// temporary copy of the input, removed before it returns, so a failed extraction
// leaves nothing behind.
//
// # Bounds
//
// A small compressed PDF can expand to far more text than any paper holds.
// pdftotext's output is decoded token by token as it is written (a scanner of
// its fixed vocabulary, bboxscan.go) while the process writes on, and the
// process is killed as soon as the text
// passes [Opts.MaxTextBytes] (8 MiB) or [Opts.MaxLines] (200,000), the pages
// pass [Opts.MaxPages], the XML passes 40 bytes per byte of the text cap, or
// one XML token passes 1 MiB. One extraction
// therefore holds at most that much text; tools' stderr is kept to its first
// 4 KiB and pdfinfo's output, when it runs, to its Pages line.
//
// # Clean text
//
// Text is clean: running headers, footers, margin stamps and page numbers
// repeated across pages are dropped, and words hyphenated across line breaks
// are joined ("com-\nplement" -> "complement", "state-of-the-\nart" ->
// "state-of-the-art"), line by line before Text is built, so every offset points
// into the clean text and each page keeps its own words. docs/ingest.md ("Clean
// text") gives the rules.
//
// # Normalization
//
// [Normalize] folds the differences between a PDF's text and what a reader types
// or an LLM quotes (ligatures, curly quotes, line-end hyphenation, whitespace).
// Package quote folds text the same way while keeping the map back to offsets
// that quote verification needs; a test there holds the two equal.
package pdftext
