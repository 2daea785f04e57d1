// Package quote checks that a quote an LLM (or the extractive builtin) gives as
// verbatim support really is in the paper's extracted text, before it is shown
// as verified. It is internal to the host and its API is not stable.
//
//	x := quote.NewIndex(doc.Text) // once per paper
//	res := x.Verify(item.Quote)   // per quote; res.Start:res.End is the passage
//
// docs/quote-verification.md has the measured precision, recall and speed.
//
// # Normalisation
//
// Both the text and the quote go through [Normalize]: soft hyphens and
// zero-width characters are dropped; curly quotes, primes and guillemets
// become ' or "; every dash and the minus sign become "-"; the text is
// lower-cased and put in Unicode NFKC (ligatures "ﬁ" -> "fi", non-breaking
// and other spaces, full-width forms, "…" -> "..."); a word hyphenated at a
// line end is joined ("verifi-\ncation" -> "verification") when lower-case
// letters surround the hyphen, but a word that already holds a hyphen keeps
// it ("state-of-\nthe-art" -> "state-of-the-art"); every run of whitespace
// becomes one space, trimmed at both ends. The index keeps, for each
// normalised rune, the byte range of the original text it came from, so
// [Result.Start] and [Result.End] point into the original text.
//
// A real hyphen that falls at a line end between lower-case letters
// ("well-\nknown") cannot be told from hyphenation and is joined; a quote
// with the hyphen is one edit away, which only quotes of 34 runes or more
// can absorb.
//
// # Matching
//
// Before matching, the quote loses its wrapper: quote marks and ellipses
// ("...", ". . .", "[...]") at either end. A quote that is then an exact
// substring of the text has similarity 1. Otherwise the closest passage is
// found by semi-global edit distance (Sellers' algorithm) on runes, and the
// similarity is 1 - d/m for d edits and a quote of m runes; the quote is
// verified at or above [Threshold] (0.97, the reference implementation's
// partial ratio of 97). Only the text windows that could hold a passage
// within floor(0.03*m) edits are aligned: cut the quote into that many
// pieces plus one, and such a passage holds one piece exactly. Below 34 runes
// the budget is 0 and a quote must match exactly. An ellipsis inside a quote
// ("A ... B") is not bridged: it counts as edits like any other difference.
//
// # Rejections
//
// Never verified: an empty or whitespace-only quote ([ReasonEmpty]), one with
// no letter or digit ([ReasonWrapperOnly]), and one with fewer than
// [MinWords] words or [MinLetters] letters and digits ([ReasonTooShort]).
//
// # Material changes
//
// At 0.97 a quote of 200 runes may differ by 6 edits, enough to change
// "12" to "15" (1 edit), "increased" to "decreased" (2) or to insert "not "
// (4). So a fuzzy match is verified only when the quote and the passage,
// widened to whole words and cut into words, numbers and signs, differ in
// form alone: the same letters split differently, numbers of the passage the
// quote leaves out (citation markers), or one-edit respellings of words of
// four or more letters ("analysed"/"analyzed"). Any changed number or
// comparison sign, added or dropped negation, or word added, dropped,
// replaced or moved fails with [ReasonMaterialChange]. An exact match fails
// the same way when it cuts a number ("2 cases" out of "12 cases"), starts
// just after a negative prefix ("likely" out of "unlikely") or stops just
// before "not" ("can" out of "cannot"); any other exact substring verifies.
//
// What still slips through: a one-edit change of a word of four or more
// letters into another word ("effect"/"affect", "increases"/"increased"); a
// number of the passage that the quote leaves out, taken for a citation
// marker; and a quote that stops just before a negation ("the effect was"
// of "the effect was not significant"), which is an exact substring.
//
// # Evaluation
//
// Package evals scores the verifier on labelled quotes (verbatim, reformatted,
// perturbed, fabricated) from the repository's own dataset, and
// TestQuoteVerifierEval holds it to precision 0.99 and recall 0.95; `lectern eval
// quotes` prints the report.
//
// # Cost
//
// [NewIndex] normalises the text and files every position of it under the
// hash of the 8 bytes there (about 25 bytes of memory per byte of text,
// 6 to 10 ms for 100,000 characters). Verify then finds exact occurrences and
// the pieces of the fuzzy search through that index, and aligns only the
// windows around them: a 300-character quote against 100,000 characters
// takes tens of microseconds when it is exact or absent and a few hundred
// when it is fuzzy.
package quote
