package web

import (
	"fmt"
	"strings"

	"github.com/lectern-research/lectern/host/internal/pdftext/pdftexttest"
)

// samplePDF builds a small text PDF (one Helvetica page per entry of pages, each a
// list of lines) for the upload tests: real PDF syntax with a correct cross-reference
// table, so pdftotext reads it like any paper.
func samplePDF(title string, pages [][]string) []byte {
	var objs []string
	// 1 catalog, 2 pages, 3 font, then page and content pairs.
	kids := make([]string, len(pages))
	for i := range pages {
		kids[i] = fmt.Sprintf("%d 0 R", 4+2*i)
	}
	objs = append(objs,
		"<< /Type /Catalog /Pages 2 0 R >>",
		fmt.Sprintf("<< /Type /Pages /Kids [%s] /Count %d >>", strings.Join(kids, " "), len(pages)),
		"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
	for i, lines := range pages {
		var c strings.Builder
		c.WriteString("BT\n")
		if i == 0 {
			fmt.Fprintf(&c, "/F1 18 Tf 72 740 Td (%s) Tj\n/F1 11 Tf 0 -30 Td 15 TL\n", pdfEscape(title))
		} else {
			c.WriteString("/F1 11 Tf 72 740 Td 15 TL\n")
		}
		for _, l := range lines {
			fmt.Fprintf(&c, "(%s) Tj T*\n", pdfEscape(l))
		}
		c.WriteString("ET\n")
		objs = append(objs,
			fmt.Sprintf("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> /Contents %d 0 R >>", 5+2*i),
			fmt.Sprintf("<< /Length %d >>\nstream\n%sendstream", c.Len(), c.String()))
	}
	return pdftexttest.Assemble(objs)
}

func pdfEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, "(", `\(`, ")", `\)`).Replace(s)
}

// paperPages is the sample paper's text: a few pages about spaced repetition, with
// sentences a question can find.
var paperPages = [][]string{
	{
		"Abstract",
		"We study how spaced repetition schedules affect long term retention of reading.",
		"Learners who reviewed each card at growing intervals remembered far more after a month.",
		"The forgetting curve flattens after every successful review of a card.",
		"",
		"1 Introduction",
		"Researchers read many papers and forget most of what they read within weeks.",
		"Spaced repetition answers this by scheduling each review just before forgetting.",
	},
	{
		"2 Method",
		"Forty graduate students reviewed flashcards drawn from papers in their own field.",
		"Half of them followed a fixed daily schedule and half an adaptive schedule.",
		"We propose an adaptive schedule that estimates memory stability after each answer.",
		"We recruited 40 participants from three universities for the study.",
		"Retention was measured with a recall test thirty days after the last review.",
	},
	{
		"3 Results",
		"We find that the adaptive schedule retained 82% of the cards against 61% for the fixed one.",
		"Students on the adaptive schedule also spent less time reviewing in total.",
		"",
		"4 Conclusion",
		"Adaptive spaced repetition is an efficient way to remember what one reads.",
	},
}
