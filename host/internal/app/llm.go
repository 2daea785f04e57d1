package app

import (
	"log/slog"
	"net/url"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/lectern-research/lectern/host/internal/config"
	"github.com/lectern-research/lectern/host/internal/embedding"
	"github.com/lectern-research/lectern/host/internal/ingest"
	"github.com/lectern-research/lectern/host/internal/jobs"
	"github.com/lectern-research/lectern/host/internal/learning"
	"github.com/lectern-research/lectern/host/internal/llmgw"
	"github.com/lectern-research/lectern/host/internal/pluginhost"
	"github.com/lectern-research/lectern/host/internal/rag"
	"github.com/lectern-research/lectern/host/internal/userconfig"
	"github.com/lectern-research/lectern/host/internal/vectorstore"
	"github.com/lectern-research/lectern/sdk/llm"
	"github.com/lectern-research/lectern/sdk/llm/extractive"
)

// newGateway returns the LLM gateway of the configuration: roles served by the
// plugins of the plugin host (nil: none), the builtin extractive provider in
// process when no builtin plugin runs, and the self-hosted gateway when
// LLM_GATEWAY_URL is set. Assignments are read from settings.
func newGateway(cfg *config.Config, settings *userconfig.Store, plugins *pluginhost.Host, log *slog.Logger) *llmgw.Gateway {
	var find llmgw.PluginFunc
	if plugins != nil {
		find = func(name string) (llm.Provider, error) { return plugins.LLM(name) }
	}
	return llmgw.New(llmgw.Config{
		Settings:     settings,
		Plugins:      find,
		Builtin:      extractive.New(log),
		GatewayURL:   cfg.LLMGatewayURL,
		GatewayKey:   cfg.LLMGatewayKey.Value(),
		GatewayHosts: gatewayHosts(cfg),
		Logger:       log,
	})
}

// newEmbedder is the embedder of the host: the embed role's model behind the
// gateway. The API, the ingest worker and the re-embed worker all use the one
// Build makes.
func newEmbedder(gw *llmgw.Gateway) embedding.Embedder {
	return llmgw.Embedder{G: gw}
}

// gatewayHosts are the hosts that may be reached over plain HTTP besides loopback:
// the self-hosted gateway's.
func gatewayHosts(cfg *config.Config) []string {
	if cfg.LLMGatewayURL == "" {
		return nil
	}
	u, err := url.Parse(cfg.LLMGatewayURL)
	if err != nil || u.Hostname() == "" {
		return nil
	}
	return []string{u.Hostname()}
}

// registerJobs adds the job kinds of the learning, RAG and embedding areas:
// fsrs.optimize, cards.generate (drafted by the cards role), summary.generate,
// extract.paper and embeddings.reembed. ingest.pdf is registered on its own
// (ingest.RegisterJobs), with the PDF store.
func registerJobs(reg *jobs.Registry, pool *pgxpool.Pool, svc *rag.Service, embedder embedding.Embedder, vectors vectorstore.Store, log *slog.Logger) error {
	if err := learning.RegisterJobs(reg, pool, svc); err != nil {
		return err
	}
	if err := rag.RegisterJobs(reg, svc); err != nil {
		return err
	}
	return ingest.RegisterReembed(reg, &ingest.ReembedWorker{Pool: pool, Embedder: embedder, Vectors: vectors, Logger: log})
}
