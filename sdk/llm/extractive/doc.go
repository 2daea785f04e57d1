// Package extractive is Lectern's builtin LLM provider: it implements llm.Provider
// in process with no model and no network, reading the request layout of
// sdk/llm (llm.TaskOf, llm.ParseRequest) and answering every task with sentences
// copied from the documents. The host serves it out of process as the plugin
// llm.builtin (plugins/llm/builtin, whose main is one serve.LLM call), and the
// host's evals and tests import it directly: it lives in the sdk module because the
// host never imports a plugin's package and a plugin imports nothing but the sdk.
//
// Its exported names follow semantic versioning with the sdk module; its outputs
// (which sentences it quotes, the embedding buckets) may change in a minor version,
// and a change of the embeddings comes with a new EmbeddingModel name.
//
// # Tasks
//
// The chat model ChatModel dispatches on the task named by the system message:
//
//   - answer: the question's words are matched against every sentence of the
//     documents (BM25 with a bonus for word pairs, and a coverage floor); the 1 to
//     4 best sentences are quoted verbatim, each followed by its document's
//     citation marker ("[S1]"), or the answer is exactly NoAnswer.
//   - summarize: an llm.Summary from centroid ranking of the sentences with a
//     position prior; the key findings prefer sentences with result cues.
//   - extract: an llm.Extraction of claims, methods, datasets, results and
//     limitations, classified by cue phrases.
//   - cards: llm.CardDrafts, cloze cards that blank a salient term (a capitalised
//     multi-word term, an acronym, or a number with a unit); "max_cards=N" in the
//     question sets how many (DefaultCards, at most MaxCards).
//   - relevance: an llm.Relevance from the lexical overlap of the question (the
//     user's interests) with the documents.
//
// Every quote (an answer's quoted sentences, a finding's Quote, an item's Quote, a
// card's Quote) is an exact substring of the document text it came from:
// sentences are cut by Sentences, which keeps line breaks and hyphens, and words
// are normalised only for scoring.
//
// # Embeddings
//
// EmbeddingModel hashes a text's words and pairs of adjacent non-function words
// with FNV-1a 64 into Dimension signed buckets, weighted (1 + ln tf) × a fixed idf
// estimate, and L2-normalises the result. The output is the same on
// every run and platform. A text without words gets the unit vector along
// EmptyBucket.
//
// docs/llm-builtin.md describes every task, the idf estimate, the cue lists and the
// limits.
package extractive
