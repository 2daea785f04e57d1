// Package app wires the host's services together from configuration and a database
// pool: the one place that knows every area, used by `lectern serve` and by the
// tests that need the whole HTTP surface.
package app

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"log/slog"
	"net/http"

	"github.com/google/uuid"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/lectern-research/lectern/host/internal/admin"
	"github.com/lectern-research/lectern/host/internal/audit"
	"github.com/lectern-research/lectern/host/internal/auth"
	"github.com/lectern-research/lectern/host/internal/config"
	"github.com/lectern-research/lectern/host/internal/embed"
	"github.com/lectern-research/lectern/host/internal/httpapi"
	"github.com/lectern-research/lectern/host/internal/ingest"
	"github.com/lectern-research/lectern/host/internal/jobs"
	"github.com/lectern-research/lectern/host/internal/learning"
	"github.com/lectern-research/lectern/host/internal/llmgw"
	"github.com/lectern-research/lectern/host/internal/llmsettings"
	"github.com/lectern-research/lectern/host/internal/mail"
	"github.com/lectern-research/lectern/host/internal/netguard"
	"github.com/lectern-research/lectern/host/internal/papers"
	"github.com/lectern-research/lectern/host/internal/pluginhost"
	"github.com/lectern-research/lectern/host/internal/projects"
	"github.com/lectern-research/lectern/host/internal/rag"
	"github.com/lectern-research/lectern/host/internal/retrieve"
	"github.com/lectern-research/lectern/host/internal/search"
	"github.com/lectern-research/lectern/host/internal/secrets"
	"github.com/lectern-research/lectern/host/internal/store"
	"github.com/lectern-research/lectern/host/internal/userconfig"
	"github.com/lectern-research/lectern/host/internal/users"
	"github.com/lectern-research/lectern/host/internal/vectorstore"
	"github.com/lectern-research/lectern/host/internal/vectorstore/embedded"
	"github.com/lectern-research/lectern/host/internal/vectorstore/qdrant"
)

// App is the assembled host.
type App struct {
	Config   *config.Config
	Pool     *pgxpool.Pool
	Logger   *slog.Logger
	Audit    *audit.Log
	Auth     *auth.Service
	Settings *userconfig.Store
	// GW resolves LLM roles; Embedder is the embedding the API searches with.
	GW       *llmgw.Gateway
	Embedder embed.Embedder
	Handler  http.Handler
	Routes   []httpapi.Route
}

// Options are the parts New does not build itself.
type Options struct {
	Config   *config.Config
	Pool     *pgxpool.Pool
	Logger   *slog.Logger
	Migrator *store.Migrator
	Version  string
	// Mail overrides the sender the configuration asks for (tests capture mail).
	Mail mail.Sender
	// Plugins is the started plugin host; nil runs without plugins (no sources).
	Plugins *pluginhost.Host
	// Sources overrides the paper sources search asks (tests); default: the
	// healthy sources of Plugins.
	Sources func() []search.Named
	// Jobs is the job queue; nil answers 503 on the jobs routes.
	Jobs *jobs.Service
	// GW resolves LLM roles to providers; default NewGateway over Plugins.
	GW *llmgw.Gateway
	// Embedder embeds passages and questions; default the embed role's model
	// (llmgw.Embedder).
	Embedder embed.Embedder
	// Vectors is the vector store; default the embedded store over Pool. The
	// ingest worker must write to the same one (see VectorStore).
	Vectors vectorstore.Store
}

// VectorStore is the vector store the configuration asks for: the embedded store,
// or with QDRANT_URL set, Qdrant mirrored from it (PostgreSQL keeps every vector).
// closeFn releases the Qdrant connection.
func VectorStore(cfg *config.Config, pool *pgxpool.Pool) (vectorstore.Store, func(), error) {
	truth := embedded.New(pool)
	if cfg.QdrantURL == "" {
		return truth, func() {}, nil
	}
	q, err := qdrant.New(cfg.QdrantURL, cfg.QdrantAPIKey.Value())
	if err != nil {
		return nil, nil, fmt.Errorf("QDRANT_URL: %w", err)
	}
	return vectorstore.Mirrored{Truth: truth, Index: q}, func() { _ = q.Close() }, nil
}

// PDFStore is where uploaded PDFs live: LECTERN_DATA_DIR/pdfs, by content digest.
func PDFStore(cfg *config.Config) *ingest.Store {
	return ingest.NewStore(filepath.Join(cfg.DataDir, "pdfs"))
}

// PurgeFunc is the identity area's part of the daily data.purge job: accounts
// soft-deleted more than users.Retention ago are hard-deleted and scrubbed from the
// audit log, and dead credentials (sign-in links, pairing tokens, old sessions) go.
func PurgeFunc(pool *pgxpool.Pool, log *slog.Logger) func(ctx context.Context) error {
	auditLog := audit.New(pool, log)
	return func(ctx context.Context) error {
		now := time.Now()
		res, err := users.Purge(ctx, pool, now, users.Retention)
		if err != nil {
			return err
		}
		if res.Users > 0 {
			auditLog.Record(ctx, uuid.Nil, audit.ActionUserPurge, "job:data.purge",
				map[string]any{"users": res.Users, "audit_entries_scrubbed": res.AuditScrubbed})
		}
		stale, err := users.PurgeStaleCredentials(ctx, pool, now)
		if err != nil {
			return err
		}
		log.InfoContext(ctx, "data purge", "users", res.Users, "audit_entries_scrubbed", res.AuditScrubbed, "stale_credentials", stale)
		return nil
	}
}

// auditor records plugin administration in the audit log, as the calling admin.
type auditor struct{ log *audit.Log }

func (a auditor) Record(ctx context.Context, action, resource string, metadata map[string]any) {
	if ip := auth.ClientIP(ctx); ip.IsValid() {
		metadata["ip"] = ip.String()
	}
	a.log.Record(ctx, auth.CallerFrom(ctx).UserID, action, resource, metadata)
}

// resolver lets the papers API add a paper by identifier that only the sources know.
func resolver(svc *search.Service) papers.ResolveFunc {
	return func(ctx context.Context, userID uuid.UUID, doi, arxivID string) (uuid.UUID, error) {
		id, err := svc.Resolve(ctx, userID, doi, arxivID)
		switch {
		case errors.Is(err, search.ErrSourcesUnreachable) && errors.Is(err, search.ErrUnresolved):
			return uuid.Nil, fmt.Errorf("%w, %w: %w", papers.ErrNotFound, papers.ErrSourcesUnreachable, err)
		case errors.Is(err, search.ErrSourcesUnreachable):
			return uuid.Nil, fmt.Errorf("%w: %w", papers.ErrSourcesUnreachable, err)
		case errors.Is(err, search.ErrUnresolved):
			return uuid.Nil, papers.ErrNotFound
		}
		return id, err
	}
}

// pluginSources adapts the plugin host's healthy sources for search.
func pluginSources(h *pluginhost.Host) func() []search.Named {
	return func() []search.Named {
		if h == nil {
			return nil
		}
		var out []search.Named
		for _, s := range h.Sources() {
			out = append(out, search.Named{Name: s.Name, Searcher: s.Source})
		}
		return out
	}
}

// New assembles the host's services and its HTTP handler.
func New(o Options) (*App, error) {
	keys, err := secrets.NewKeyring(o.Config.ServiceConfigKey.Value(), o.Config.ServiceConfigKeyOld.Value())
	if err != nil {
		return nil, fmt.Errorf("app: %w", err)
	}
	sender := o.Mail
	if sender == nil {
		sender = mail.New(o.Config, o.Logger)
	}
	a := &App{Config: o.Config, Pool: o.Pool, Logger: o.Logger}
	a.Audit = audit.New(o.Pool, o.Logger)
	a.Auth = auth.NewService(auth.Config{Pool: o.Pool, Config: o.Config, Logger: o.Logger, Audit: a.Audit, Mail: sender})
	a.Settings = userconfig.New(o.Pool, keys)
	sources := o.Sources
	if sources == nil {
		sources = pluginSources(o.Plugins)
	}
	searchSvc := search.New(o.Pool, sources)
	if o.GW == nil {
		if o.GW, err = NewGateway(o.Config, o.Pool, o.Plugins, o.Logger); err != nil {
			return nil, err
		}
	}
	if o.Embedder == nil {
		o.Embedder = llmgw.Embedder{G: o.GW}
	}
	if o.Vectors == nil {
		o.Vectors = embedded.New(o.Pool)
	}
	var jobsAPI *jobs.API
	var uploadAPI *ingest.API
	if o.Jobs != nil {
		jobsAPI = o.Jobs.API()
		uploadAPI = ingest.NewAPI(o.Pool, PDFStore(o.Config), o.Jobs, ingest.NewFetcher(netguard.PublicOnly))
	}
	a.GW, a.Embedder = o.GW, o.Embedder
	retriever := retrieve.New(o.Pool, o.Embedder, o.Vectors)
	llmAPI := llmsettings.NewAPI(o.GW, a.Settings, a.Audit, o.Logger, gatewayHosts(o.Config))
	if o.Jobs != nil {
		llmAPI.OnEmbedChange = func(ctx context.Context) error {
			_, err := o.Jobs.Enqueue(ctx, uuid.Nil, ingest.ReembedArgs{})
			return err
		}
	}
	var pluginAdmin *pluginhost.AdminAPI
	if o.Plugins != nil {
		pluginAdmin = pluginhost.NewAdminAPI(o.Plugins, pluginhost.NewStore(o.Pool), auditor{a.Audit})
	}
	mux, routes := httpapi.NewHandler(httpapi.Deps{
		Config:   o.Config,
		Logger:   o.Logger,
		Pool:     o.Pool,
		Migrator: o.Migrator,
		Version:  o.Version,
		Auth:     a.Auth,
		Admin:    admin.New(o.Pool, a.Auth, a.Audit, o.Logger),
		Settings: userconfig.NewAPI(a.Settings, o.Config, nil, o.Logger),
		Papers:   papers.NewAPI(papers.New(o.Pool), resolver(searchSvc)),
		Projects: projects.NewAPI(o.Pool, papers.New(o.Pool)),
		Search:   search.NewAPI(searchSvc),
		Learning: learning.NewAPI(learning.New(o.Pool), papers.New(o.Pool)),
		Upload:   uploadAPI,
		Passages: retrieve.NewAPI(retriever),
		LLM:      llmAPI,
		RAG:      rag.NewAPI(&rag.Service{Pool: o.Pool, Retriever: retriever, GW: o.GW, Logger: o.Logger}, o.Jobs),
		Plugins:  pluginAdmin,
		Jobs:     jobsAPI,
	})
	a.Handler, a.Routes = mux, routes
	return a, nil
}
