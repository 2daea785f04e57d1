package evals

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/lectern-research/lectern/host/internal/quote"
)

// QuoteSet is a labelled set of quotes for measuring the verifier: documents,
// each a text and quotes labelled supported or not. data/quotes.json is
// the repository's own, built into the binary.
type QuoteSet struct {
	// Description says what the dataset holds and where it comes from.
	Description string `json:"description"`
	// Documents are the texts the quotes are checked against.
	Documents []QuoteDocument `json:"documents"`
}

// QuoteDocument is one text and the quotes checked against it.
type QuoteDocument struct {
	// ID names the document in reports.
	ID string `json:"id"`
	// Text is the text as extracted from a PDF.
	Text string `json:"text"`
	// Quotes are the labelled quotes.
	Quotes []LabelledQuote `json:"quotes"`
}

// LabelledQuote is one labelled quote.
type LabelledQuote struct {
	// Quote is what the LLM returned as verbatim.
	Quote string `json:"quote"`
	// Category groups quotes in the report: "verbatim", "formatting",
	// "perturbed", "fabricated", "degenerate", or any other name.
	Category string `json:"category"`
	// Supported is the label: true when the text supports the quote as
	// verbatim, so that it should be verified.
	Supported bool `json:"supported"`
	// Note says what was changed, for a reader of the dataset.
	Note string `json:"note,omitempty"`
}

//go:embed data/quotes.json
var quoteSet []byte

// LoadQuotes reads a QuoteSet from a JSON file, or the built-in one when path is
// "".
func LoadQuotes(path string) (QuoteSet, error) {
	b := quoteSet
	if path != "" {
		var err error
		if b, err = os.ReadFile(path); err != nil {
			return QuoteSet{}, fmt.Errorf("evals: load quotes: %w", err)
		}
	}
	var ds QuoteSet
	if err := json.Unmarshal(b, &ds); err != nil {
		return QuoteSet{}, fmt.Errorf("evals: load quotes %s: %w", path, err)
	}
	return ds, nil
}

// QuoteScores are the verifier's results on a QuoteSet. A positive is a verified
// quote: precision is the share of verified quotes that are supported,
// recall the share of supported quotes that are verified.
type QuoteScores struct {
	// TruePositives, FalsePositives, FalseNegatives and TrueNegatives count
	// the quotes by label (supported or not) and outcome (verified or not).
	TruePositives, FalsePositives, FalseNegatives, TrueNegatives int
	// Precision is TP/(TP+FP), 1 when nothing was verified.
	Precision float64
	// Recall is TP/(TP+FN), 1 when nothing is supported.
	Recall float64
	// Categories counts the quotes and the verified ones per category, in
	// the order the categories first appear.
	Categories []QuoteCategory
	// Errors are the quotes whose outcome contradicts their label.
	Errors []QuoteError
}

// QuoteCategory counts the quotes of a category and their outcomes.
type QuoteCategory struct {
	// Category is LabelledQuote.Category.
	Category string
	// Quotes is how many quotes the category has.
	Quotes int
	// Verified is how many of them were verified.
	Verified int
	// MaterialChange counts the quotes refused with quote.ReasonMaterialChange
	// although their similarity reached quote.Threshold: those the similarity
	// alone would have verified.
	MaterialChange int
}

// QuoteError is a quote the verifier got wrong.
type QuoteError struct {
	// Document is the QuoteDocument.ID the quote belongs to.
	Document string
	LabelledQuote
	// Result is what Verify returned.
	Result quote.Result
}

// Evaluate verifies every quote of ds against its document and scores the
// outcomes against the labels.
func EvaluateQuotes(ds QuoteSet) QuoteScores {
	var sc QuoteScores
	for _, doc := range ds.Documents {
		x := quote.NewIndex(doc.Text)
		for _, q := range doc.Quotes {
			res := x.Verify(q.Quote)
			i := slices.IndexFunc(sc.Categories, func(c QuoteCategory) bool { return c.Category == q.Category })
			if i < 0 {
				sc.Categories = append(sc.Categories, QuoteCategory{Category: q.Category})
				i = len(sc.Categories) - 1
			}
			sc.Categories[i].Quotes++
			if res.Verified {
				sc.Categories[i].Verified++
			}
			if res.Reason == quote.ReasonMaterialChange && res.Similarity >= quote.Threshold {
				sc.Categories[i].MaterialChange++
			}
			switch {
			case res.Verified && q.Supported:
				sc.TruePositives++
			case res.Verified:
				sc.FalsePositives++
			case q.Supported:
				sc.FalseNegatives++
			default:
				sc.TrueNegatives++
			}
			if res.Verified != q.Supported {
				sc.Errors = append(sc.Errors, QuoteError{Document: doc.ID, LabelledQuote: q, Result: res})
			}
		}
	}
	sc.Precision, sc.Recall = 1, 1
	if n := sc.TruePositives + sc.FalsePositives; n > 0 {
		sc.Precision = float64(sc.TruePositives) / float64(n)
	}
	if n := sc.TruePositives + sc.FalseNegatives; n > 0 {
		sc.Recall = float64(sc.TruePositives) / float64(n)
	}
	return sc
}

// String formats the scores as a short plain-text report.
func (s QuoteScores) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "precision %.3f  recall %.3f  (TP %d, FP %d, FN %d, TN %d)\n",
		s.Precision, s.Recall, s.TruePositives, s.FalsePositives, s.FalseNegatives, s.TrueNegatives)
	for _, c := range s.Categories {
		fmt.Fprintf(&b, "  %-12s %3d quotes, %3d verified, %3d refused for a material change only\n",
			c.Category, c.Quotes, c.Verified, c.MaterialChange)
	}
	for _, e := range s.Errors {
		fmt.Fprintf(&b, "  wrong: %s/%s supported=%t similarity=%.3f reason=%q: %q\n",
			e.Document, e.Category, e.Supported, e.Result.Similarity, e.Result.Reason, e.Quote)
	}
	return b.String()
}
