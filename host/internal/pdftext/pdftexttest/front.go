package pdftexttest

import (
	"bytes"
	"fmt"
	"strings"
)

// FrontConfig is the first page of a paper as [Front] sets it.
type FrontConfig struct {
	// Title is set large at the top, wrapped at about 50 characters a line.
	Title string
	// Authors is the byline under the title, one line.
	Authors string
	// Stamps are small lines under the byline: a DOI, an arXiv stamp, a venue.
	Stamps []string
	// Abstract follows an "Abstract" heading, wrapped at about 90 characters.
	Abstract string
	// Body follows an "1 Introduction" heading, wrapped likewise. Default a few
	// sentences of filler.
	Body string
}

// Front returns a one-page PDF set like a paper's first page from cfg, in the
// standard Helvetica fonts (nothing embedded): what the metadata reader of
// pdftext needs to find a title, a byline, an abstract and identifiers.
func Front(cfg FrontConfig) []byte {
	if cfg.Body == "" {
		cfg.Body = strings.Repeat("This paragraph stands for the body of the paper and carries no meaning of its own. ", 8)
	}
	var c bytes.Buffer
	y := 720.0
	line := func(font string, size float64, text string) {
		fmt.Fprintf(&c, "BT /%s %.1f Tf 72 %.1f Td (%s) Tj ET\n", font, size, y, escape(text))
		y -= size * 1.4
	}
	for _, l := range wrap(cfg.Title, 50) {
		line("F2", 18, l)
	}
	y -= 6
	if cfg.Authors != "" {
		line("F1", 11, cfg.Authors)
	}
	for _, s := range cfg.Stamps {
		line("F1", 8, s)
	}
	y -= 10
	if cfg.Abstract != "" {
		line("F2", 10, "Abstract")
		for _, l := range wrap(cfg.Abstract, 90) {
			line("F1", 9, l)
		}
		y -= 8
	}
	line("F2", 11, "1 Introduction")
	for _, l := range wrap(cfg.Body, 90) {
		if y < 60 {
			break
		}
		line("F1", 9, l)
	}
	return onePage(c.Bytes())
}

// wrap breaks s into lines of at most n bytes at spaces.
func wrap(s string, n int) []string {
	var out []string
	cur := ""
	for _, w := range strings.Fields(s) {
		if cur != "" && len(cur)+1+len(w) > n {
			out = append(out, cur)
			cur = ""
		}
		if cur != "" {
			cur += " "
		}
		cur += w
	}
	if cur != "" {
		out = append(out, cur)
	}
	return out
}

// escape writes s as the inside of a PDF literal string.
func escape(s string) string {
	return strings.NewReplacer(`\`, `\\`, `(`, `\(`, `)`, `\)`).Replace(s)
}

// onePage wraps a content stream into a PDF of one US-letter page with Helvetica
// as F1 and Helvetica-Bold as F2.
func onePage(content []byte) []byte {
	objs := []string{
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R /F2 6 0 R >> >> >>",
		fmt.Sprintf("<< /Length %d >>\nstream\n%s\nendstream", len(content), content),
		"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>",
		"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica-Bold /Encoding /WinAnsiEncoding >>",
	}
	return Assemble(objs)
}

// Assemble writes a whole PDF file from its objects, numbered from 1 in order
// (object 1 is the catalogue), with the cross-reference table and trailer a
// reader needs.
func Assemble(objs []string) []byte {
	var b bytes.Buffer
	b.WriteString("%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
	offsets := make([]int, len(objs))
	for i, o := range objs {
		offsets[i] = b.Len()
		fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", i+1, o)
	}
	xref := b.Len()
	fmt.Fprintf(&b, "xref\n0 %d\n0000000000 65535 f \n", len(objs)+1)
	for _, off := range offsets {
		fmt.Fprintf(&b, "%010d 00000 n \n", off)
	}
	fmt.Fprintf(&b, "trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n", len(objs)+1, xref)
	return b.Bytes()
}
