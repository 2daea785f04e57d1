package app

import (
	"fmt"
	"log/slog"
	"net/url"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/lectern-research/lectern/host/internal/config"
	"github.com/lectern-research/lectern/host/internal/ingest"
	"github.com/lectern-research/lectern/host/internal/jobs"
	"github.com/lectern-research/lectern/host/internal/learning"
	"github.com/lectern-research/lectern/host/internal/llmgw"
	"github.com/lectern-research/lectern/host/internal/pluginhost"
	"github.com/lectern-research/lectern/host/internal/rag"
	"github.com/lectern-research/lectern/host/internal/retrieve"
	"github.com/lectern-research/lectern/host/internal/secrets"
	"github.com/lectern-research/lectern/host/internal/userconfig"
	"github.com/lectern-research/lectern/host/internal/vectorstore"
	"github.com/lectern-research/lectern/sdk/llm"
	"github.com/lectern-research/lectern/sdk/llm/extractive"
)

// NewGateway returns the LLM gateway of the configuration: roles served by the
// plugins of the plugin host (nil: none), the builtin extractive provider in
// process when no builtin plugin runs, and the self-hosted gateway when
// LLM_GATEWAY_URL is set.
func NewGateway(cfg *config.Config, pool *pgxpool.Pool, plugins *pluginhost.Host, log *slog.Logger) (*llmgw.Gateway, error) {
	keys, err := secrets.NewKeyring(cfg.ServiceConfigKey.Value(), cfg.ServiceConfigKeyOld.Value())
	if err != nil {
		return nil, fmt.Errorf("app: %w", err)
	}
	var find llmgw.PluginFunc
	if plugins != nil {
		find = func(name string) (llm.Provider, error) { return plugins.LLM(name) }
	}
	return llmgw.New(llmgw.Config{
		Settings:     userconfig.New(pool, keys),
		Plugins:      find,
		Builtin:      extractive.New(log),
		GatewayURL:   cfg.LLMGatewayURL,
		GatewayKey:   cfg.LLMGatewayKey.Value(),
		GatewayHosts: gatewayHosts(cfg),
		Logger:       log,
	}), nil
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

// RegisterJobs adds the job kinds of the learning, RAG and embedding areas:
// fsrs.optimize, cards.generate (drafted by the cards role), summary.generate,
// extract.paper and embeddings.reembed. ingest.pdf is registered on its own
// (ingest.RegisterJobs), with the PDF store.
func RegisterJobs(reg *jobs.Registry, pool *pgxpool.Pool, gw *llmgw.Gateway, vectors vectorstore.Store, log *slog.Logger) error {
	embedder := llmgw.Embedder{G: gw}
	svc := &rag.Service{Pool: pool, Retriever: retrieve.New(pool, embedder, vectors), GW: gw, Logger: log}
	if err := learning.RegisterJobs(reg, pool, svc); err != nil {
		return err
	}
	if err := rag.RegisterJobs(reg, svc); err != nil {
		return err
	}
	return ingest.RegisterReembed(reg, &ingest.ReembedWorker{Pool: pool, Embedder: embedder, Vectors: vectors, Logger: log})
}
