// Command openai is Lectern's OpenAI-compatible LLM provider: streamed chat with
// optional JSON-schema output, embeddings and the model list, against OpenAI itself,
// an LLM gateway (LiteLLM), a local runtime's /v1 endpoint (Ollama, llama.cpp,
// vLLM), a cloud provider's OpenAI-compatible endpoint or any other compatible one.
// It imports only the sdk module.
package main

import (
	"github.com/lectern-research/lectern/sdk/sdklog"
	"github.com/lectern-research/lectern/sdk/serve"
)

func main() { serve.LLM(New(sdklog.New(nil))) }
