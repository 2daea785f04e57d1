package benchhttp

import (
	"fmt"
	"strings"

	"github.com/lectern-research/lectern/host/internal/pdftext/pdftexttest"
)

// smallPDF makes a one-page PDF whose text is title and then lines, in Helvetica:
// what the load test's users upload. Each upload must be a different file (the
// host keeps one copy per content), so callers put something unique in the text.
// Only the characters PDF strings take plainly are kept (letters, digits, spaces
// and simple punctuation), so the text needs no escaping.
func smallPDF(title string, lines []string) []byte {
	var content strings.Builder
	content.WriteString("BT /F1 16 Tf 72 740 Td (" + pdfText(title) + ") Tj ET\n")
	for i, l := range lines {
		fmt.Fprintf(&content, "BT /F1 10 Tf 72 %d Td (%s) Tj ET\n", 710-14*i, pdfText(l))
	}
	objects := []string{
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>",
		fmt.Sprintf("<< /Length %d >>\nstream\n%sendstream", content.Len(), content.String()),
		"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
	}
	return pdftexttest.Assemble(objects)
}

// pdfText keeps the characters a PDF string literal takes without escaping.
func pdfText(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
			return r
		case strings.ContainsRune(" .,:;-", r):
			return r
		}
		return -1
	}, s)
}
