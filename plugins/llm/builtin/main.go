// Command builtin is Lectern's default LLM plugin: extractive answers, summaries,
// extractions, cards and relevance judgements quoted from the papers themselves,
// and lexical embeddings, with no model and no network (package sdk/llm/extractive; see
// docs/llm-builtin.md). It imports only the sdk module.
package main

import (
	"github.com/lectern-research/lectern/sdk/llm/extractive"
	"github.com/lectern-research/lectern/sdk/sdklog"
	"github.com/lectern-research/lectern/sdk/serve"
)

func main() { serve.LLM(extractive.New(sdklog.New(nil))) }
