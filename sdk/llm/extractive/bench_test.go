package extractive

import (
	"testing"

	"github.com/lectern-research/lectern/sdk/llm"
)

// benchChunks returns n chunk-sized texts (the host's default chunk: 390 words,
// 38 words of overlap) cut from the PubMedQA abstracts and the two full papers,
// reused in turn when they run out.
func benchChunks(b *testing.B, n int) []string {
	b.Helper()
	var pool []string
	var abstracts string
	for _, e := range loadPubMedQA(b) {
		abstracts += e.abstract() + "\n\n"
	}
	for _, text := range []string{abstracts, hindawiText(b), papermageText(b)} {
		for _, d := range chunks(text, 390, 38) {
			pool = append(pool, d.Text)
		}
	}
	out := make([]string, n)
	for i := range out {
		out[i] = pool[i%len(pool)]
	}
	return out
}

// BenchmarkEmbed embeds 1000 chunk-sized texts in one call.
func BenchmarkEmbed(b *testing.B) {
	inputs := benchChunks(b, 1000)
	var size int64
	for _, s := range inputs {
		size += int64(len(s))
	}
	e := New(nil)
	req := &llm.EmbedRequest{Inputs: inputs}
	b.SetBytes(size)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := e.Embed(b.Context(), req); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(inputs)*b.N)/b.Elapsed().Seconds(), "texts/s")
}

// BenchmarkAnswer answers one question over 20 documents (PubMedQA abstracts),
// through Chat: reading the request, ranking, streaming.
func BenchmarkAnswer(b *testing.B) {
	all := loadPubMedQA(b)
	docs := pubmedSet(all, 42, true)
	req := &llm.ChatRequest{Messages: []llm.Message{
		{Role: llm.RoleSystem, Content: "Task: answer"},
		{Role: llm.RoleUser, Content: llm.FormatRequest(all[42].Question, docs)},
	}}
	e := New(nil)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := llm.Collect(b.Context(), e, req); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAnswerChunks answers one question over 20 host-sized chunks of
// PubMedQA abstracts (about 390 words each, twice the text of BenchmarkAnswer).
func BenchmarkAnswerChunks(b *testing.B) {
	texts := benchChunks(b, 20)
	docs := make([]llm.Document, len(texts))
	for i, t := range texts {
		docs[i] = llm.Document{ID: "S" + string(rune('A'+i)), Text: t}
	}
	req := &llm.ChatRequest{Messages: []llm.Message{
		{Role: llm.RoleSystem, Content: "Task: answer"},
		{Role: llm.RoleUser, Content: llm.FormatRequest("Does intubation take longer in a helicopter?", docs)},
	}}
	e := New(nil)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := llm.Collect(b.Context(), e, req); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSummarize summarises a six-page paper sent as host-sized chunks.
func BenchmarkSummarize(b *testing.B) {
	docs := chunks(hindawiText(b), 390, 38)
	req := &llm.ChatRequest{Messages: []llm.Message{
		{Role: llm.RoleSystem, Content: "Task: summarize"},
		{Role: llm.RoleUser, Content: llm.FormatRequest("", docs)},
	}}
	e := New(nil)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := llm.Collect(b.Context(), e, req); err != nil {
			b.Fatal(err)
		}
	}
}
