// Package pdftexttest makes PDFs for tests of text extraction. [Dense] writes
// pages of small, tightly set text in Flate-compressed content streams: a file
// of a few hundred KB that expands to tens of MB of text, the shape of an
// extraction bomb.
//
// It is internal to the host, for tests only, and its API is not stable.
package pdftexttest

import (
	"bytes"
	"compress/zlib"
	"fmt"
	"strings"
)

// DenseConfig sets the shape of a [Dense] PDF; zero fields take the defaults.
type DenseConfig struct {
	// Pages is the page count. Default 300.
	Pages int
	// LinesPerPage is how many lines of text each page holds. Default 140.
	LinesPerPage int
	// WordsPerLine is how many words each line holds. Default 52, as many as fit.
	WordsPerLine int
	// Title, when not "", is the document's Title entry, which pdfinfo prints
	// as is (line breaks included).
	Title string
}

// words are what the lines are made of; each line picks its own sequence, so
// the text is not one sentence repeated yet still compresses well.
var words = strings.Fields("alpha beta gamma delta epsilon zeta theta kappa lambda sigma omega " +
	"extraction memory bounded stream passage paper review corpus")

// Dense returns a PDF of cfg.Pages US-letter pages, each holding
// cfg.LinesPerPage lines of cfg.WordsPerLine words in 3.5-point Helvetica. With
// the defaults it is about 0.5 MB on disk and 14.5 MB of text, 48 KB a page:
// what poppler keeps of a page set in type this small is at most 50,000
// characters, so denser pages would not expand further.
func Dense(cfg DenseConfig) []byte {
	if cfg.Pages <= 0 {
		cfg.Pages = 300
	}
	if cfg.LinesPerPage <= 0 {
		cfg.LinesPerPage = 140
	}
	if cfg.WordsPerLine <= 0 {
		cfg.WordsPerLine = 52
	}
	var out bytes.Buffer
	var offsets []int // offsets[i] is where object i+1 starts
	obj := func(body string, stream []byte) {
		offsets = append(offsets, out.Len())
		fmt.Fprintf(&out, "%d 0 obj\n%s\n", len(offsets), body)
		if stream != nil {
			out.WriteString("stream\n")
			out.Write(stream)
			out.WriteString("\nendstream\n")
		}
		out.WriteString("endobj\n")
	}
	out.WriteString("%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
	kids := make([]string, cfg.Pages)
	for i := range kids {
		kids[i] = fmt.Sprintf("%d 0 R", 4+2*i)
	}
	obj("<< /Type /Catalog /Pages 2 0 R >>", nil)
	obj(fmt.Sprintf("<< /Type /Pages /Count %d /Kids [%s] >>", cfg.Pages, strings.Join(kids, " ")), nil)
	obj("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>", nil)
	for p := range cfg.Pages {
		obj(fmt.Sprintf("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> /Contents %d 0 R >>", 5+2*p), nil)
		content := pageContent(p, cfg.LinesPerPage, cfg.WordsPerLine)
		obj(fmt.Sprintf("<< /Length %d /Filter /FlateDecode >>", len(content)), content)
	}
	info := ""
	if cfg.Title != "" {
		obj("<< /Title ("+pdfString.Replace(cfg.Title)+") >>", nil)
		info = fmt.Sprintf(" /Info %d 0 R", len(offsets))
	}
	xref := out.Len()
	fmt.Fprintf(&out, "xref\n0 %d\n0000000000 65535 f \n", len(offsets)+1)
	for _, off := range offsets {
		fmt.Fprintf(&out, "%010d 00000 n \n", off)
	}
	fmt.Fprintf(&out, "trailer\n<< /Size %d /Root 1 0 R%s >>\nstartxref\n%d\n%%%%EOF\n", len(offsets)+1, info, xref)
	return out.Bytes()
}

// pdfString escapes text for a PDF literal string.
var pdfString = strings.NewReplacer(`\`, `\\`, "(", `\(`, ")", `\)`, "\n", `\n`, "\r", `\r`)

// pageContent is the compressed content stream of page p: lines of words,
// 5.5 points apart from the top of the page down.
func pageContent(p, lines, perLine int) []byte {
	var s bytes.Buffer
	s.WriteString("BT /F1 3.5 Tf 5.5 TL 4 786 Td\n")
	for l := range lines {
		s.WriteByte('(')
		for w := range perLine {
			if w > 0 {
				s.WriteByte(' ')
			}
			s.WriteString(words[(p*7+l*3+w*w)%len(words)])
		}
		s.WriteString(") Tj T*\n")
	}
	s.WriteString("ET\n")
	var z bytes.Buffer
	zw, _ := zlib.NewWriterLevel(&z, zlib.BestCompression)
	_, _ = zw.Write(s.Bytes()) // a bytes.Buffer does not fail
	zw.Close()
	return z.Bytes()
}
