// Package chunk splits a paper's extracted text into the passages that are
// embedded, searched and cited: each chunk lies within one section, holds at
// most Config.MaxTokens estimated tokens, overlaps the previous chunk of its
// section by Config.OverlapTokens, and records the pages and byte span it came
// from so that an answer can cite the exact page.
//
// It is internal to the host and its API is not stable.
//
// # Token estimate
//
// Tokens are estimated, not counted: [EstimateTokens] is 1.3 tokens per
// whitespace-separated word, rounded up. The embedding models Lectern talks to
// have different tokenizers, none of them available in Go without downloading
// vocabularies at run time; 1.3 tokens per word is the usual figure for English
// prose under BPE tokenizers and errs on the side of shorter chunks for prose.
// Long runs without spaces (URLs, formulas) count as one word each, so they are
// underestimated.
//
// # Identity
//
// A chunk's ID is a name-based UUID (version 5) of the paper id, the chunk's
// index and its text: the same paper extracted the same way gets the same ids,
// so re-ingesting is idempotent, and the ids are valid Qdrant point ids.
//
// # Limit
//
// A document may make at most Config.MaxChunks chunks (default 5,000); Split
// fails with [ErrTooManyChunks] as soon as it would make one more, and holds no
// more than one chunk's word spans while it works, whatever the text's length.
package chunk
