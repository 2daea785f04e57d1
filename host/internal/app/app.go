// Package app wires the host's services together from configuration and a database
// pool: the one place that knows every area, used by `lectern serve` and by the
// tests that need the whole HTTP surface.
package app

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"log/slog"
	"net/http"

	"github.com/google/uuid"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/lectern-research/lectern/host/internal/admin"
	"github.com/lectern-research/lectern/host/internal/audit"
	"github.com/lectern-research/lectern/host/internal/auth"
	"github.com/lectern-research/lectern/host/internal/backup"
	"github.com/lectern-research/lectern/host/internal/config"
	"github.com/lectern-research/lectern/host/internal/digest"
	"github.com/lectern-research/lectern/host/internal/embedding"
	"github.com/lectern-research/lectern/host/internal/enrich"
	"github.com/lectern-research/lectern/host/internal/httpapi"
	"github.com/lectern-research/lectern/host/internal/infraevents"
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
	"github.com/lectern-research/lectern/host/internal/pulse"
	"github.com/lectern-research/lectern/host/internal/rag"
	"github.com/lectern-research/lectern/host/internal/refsync"
	"github.com/lectern-research/lectern/host/internal/retrieve"
	"github.com/lectern-research/lectern/host/internal/search"
	"github.com/lectern-research/lectern/host/internal/secrets"
	"github.com/lectern-research/lectern/host/internal/store"
	"github.com/lectern-research/lectern/host/internal/userconfig"
	"github.com/lectern-research/lectern/host/internal/users"
	"github.com/lectern-research/lectern/host/internal/vectorstore"
	"github.com/lectern-research/lectern/host/internal/vectorstore/embedded"
	"github.com/lectern-research/lectern/host/internal/vectorstore/qdrant"
	"github.com/lectern-research/lectern/sdk/protocol"
)

// LexicalIndexLoaded is the message the host logs when its lexical index has
// loaded after a start: searches rank every match from then on (operators see how
// long a restart's warm-up took; make bench-http waits for it before measuring).
const LexicalIndexLoaded = "lexical index loaded"

// PluginSet says which plugins of LECTERN_PLUGINS_FILE Build starts.
type PluginSet int

const (
	// NoPlugins starts none: no paper sources, the builtin LLM provider only.
	NoPlugins PluginSet = iota
	// AllPlugins starts every plugin of the file (lectern serve).
	AllPlugins
	// EmbedPlugins starts the LLM plugins only, and only when the embed role is
	// assigned to a provider other than the builtin one (lectern import).
	EmbedPlugins
	// AnswerPlugins starts the LLM plugins only, and only when the answer role is
	// assigned to a provider other than the builtin one (lectern eval rag --role
	// answer).
	AnswerPlugins
)

// roleOf is the role whose assignment decides whether set starts the LLM
// plugins; "" for a set that does not depend on one.
func (set PluginSet) roleOf() string {
	switch set {
	case EmbedPlugins:
		return llmgw.RoleEmbed
	case AnswerPlugins:
		return llmgw.RoleAnswer
	}
	return ""
}

// Options are the parts of the host Build does not build itself.
type Options struct {
	Config   *config.Config
	Pool     *pgxpool.Pool
	Logger   *slog.Logger
	Migrator *store.Migrator
	Version  string
	// Mail overrides the sender the configuration asks for (tests capture mail).
	Mail mail.Sender
	// StartPlugins says which plugins Build starts (default NoPlugins); Close
	// stops them.
	StartPlugins PluginSet
	// Plugins is a plugin host the caller started, used instead of StartPlugins
	// (tests); Close leaves it running.
	Plugins *pluginhost.Host
	// Sources overrides the paper sources search asks (tests); default: the
	// healthy sources of the plugin host.
	Sources func() []search.Named
	// QueueFunc, when set, adjusts the job queue's configuration before Build
	// makes the queue (tests: another heartbeat, one more kind). Optional.
	QueueFunc func(*jobs.Config) error
	// Now, when set, is the clock of the learning API: when reviews happen and
	// which cards are due (tests move it past a learning step instead of waiting
	// minutes). Default: the wall clock.
	Now func() time.Time
}

// App is the assembled host: every service is built once, by Build, and the HTTP
// handler, the job queue's workers and the commands share them.
type App struct {
	Config   *config.Config
	Pool     *pgxpool.Pool
	Logger   *slog.Logger
	Audit    *audit.Log
	Auth     *auth.Service
	Settings *userconfig.Store
	// Plugins is the plugin host (nil: none).
	Plugins *pluginhost.Host
	// GW resolves LLM roles; Embedder is the embedding the API searches with and
	// the workers embed with.
	GW       *llmgw.Gateway
	Embedder embedding.Embedder
	// Vectors is the vector store of the configuration (VectorStore), the one the
	// retriever searches and the ingest and re-embed workers write.
	Vectors vectorstore.Store
	// Retriever finds passages; RAG answers and drafts from them.
	Retriever *retrieve.Retriever
	RAG       *rag.Service
	// PDFs is where uploaded PDFs live; Ingest is the ingest.pdf worker over it.
	PDFs   *ingest.Store
	Ingest *ingest.Worker
	// Search asks the paper sources; Enrich checks papers against them
	// (paper.enrich).
	Search *search.Service
	Enrich *enrich.Service
	// PulseGen makes the morning decks; PulseTrainer trains the classifiers.
	PulseGen     *pulse.Generator
	PulseTrainer *pulse.Trainer
	// backups is the read-only view of the backup folders (backupView).
	backups *backup.View
	// RefSync brings users' Zotero libraries in (refmanager.sync).
	RefSync *refsync.Syncer
	// Jobs is the job queue with every kind registered, built but not started:
	// Start starts it.
	Jobs    *jobs.Service
	Handler http.Handler
	Routes  []httpapi.Route

	closeFuncs []func()
}

// Build assembles the host from the configuration and a migrated database: the
// plugin host, the LLM gateway, the vector store, the retriever, the services,
// the job queue with its workers and the HTTP handler, each once. It starts no
// job; Start does. Call Close when done. When Build fails it has closed what it
// opened.
func Build(ctx context.Context, o Options) (*App, error) {
	a := &App{Config: o.Config, Pool: o.Pool, Logger: o.Logger}
	if err := a.build(ctx, o); err != nil {
		a.Close()
		return nil, err
	}
	return a, nil
}

// build makes the App's parts in the order they need each other.
func (a *App) build(ctx context.Context, o Options) error {
	var err error
	if a.Settings, err = SettingsStore(o.Config, o.Pool); err != nil {
		return err
	}
	vectors, closeVectors, err := VectorStore(o.Config, o.Pool)
	if err != nil {
		return err
	}
	a.closeFuncs = append(a.closeFuncs, closeVectors)
	a.Vectors = vectors
	a.Plugins = o.Plugins
	if a.Plugins == nil {
		if a.Plugins, err = a.startPlugins(ctx, o.StartPlugins); err != nil {
			return err
		}
	}
	a.GW = newGateway(o.Config, a.Settings, a.Plugins, o.Logger)
	a.Embedder = newEmbedder(a.GW)
	a.Retriever = retrieve.New(o.Pool, a.Embedder, a.Vectors)
	a.RAG = &rag.Service{Pool: o.Pool, Retriever: a.Retriever, GW: a.GW, Logger: o.Logger}
	a.PDFs = PDFStore(o.Config)
	a.Ingest = &ingest.Worker{Pool: o.Pool, Store: a.PDFs, Logger: o.Logger, Embedder: a.Embedder, Vectors: a.Vectors}
	a.Audit = audit.New(o.Pool, o.Logger)
	sources := o.Sources
	if sources == nil {
		sources = pluginSources(a.Plugins)
	}
	a.Search = search.New(o.Pool, sources)
	a.Enrich = &enrich.Service{Pool: o.Pool, Search: a.Search, Logger: o.Logger, PDFs: a.PDFs, Vectors: a.Vectors}
	a.PulseGen, a.PulseTrainer = a.newPulse(o.Now)
	a.RefSync = a.newRefSync(o.Now)
	if a.Jobs, err = a.newQueue(ctx, o.QueueFunc, o.Now); err != nil {
		return err
	}
	// Reading a PDF enqueues its check against the sources in the same transaction.
	a.Ingest.EnrichTxFunc = enrich.EnqueueTxFunc(a.Jobs)
	sender := o.Mail
	if sender == nil {
		sender = mail.New(o.Config, o.Logger)
	}
	a.Auth = auth.NewService(auth.Config{Pool: o.Pool, Config: o.Config, Logger: o.Logger, Audit: a.Audit, Mail: sender})
	a.Handler, a.Routes = a.newHandler(o, a.Search)
	return nil
}

// Start brings the parts that run on their own up: the LLM gateway gets its
// assignments again, the lexical index loads, and the job queue starts working.
func (a *App) Start(ctx context.Context) error {
	// A gateway whose database was reset gets every assignment again from the
	// sealed settings, the source of truth.
	if err := a.GW.Sync(ctx); err != nil {
		a.Logger.Error("register the assigned models with the LLM gateway", "error", err)
	}
	// The lexical index loads in the background on a host that serves searches;
	// a search before it is ready waits (a worker's RAG job loads it on its first
	// search).
	if a.Config.Role == config.RoleWorker {
		return a.Jobs.Start(ctx)
	}
	go func() {
		began := time.Now()
		if err := a.Retriever.Warm(ctx); err != nil {
			if ctx.Err() == nil {
				a.Logger.Warn("load the lexical index; the first search will try again", "error", err)
			}
			return
		}
		a.Logger.Info(LexicalIndexLoaded, "seconds", time.Since(began).Round(time.Millisecond).Seconds())
	}()
	// Files a killed process left in the data folder go, in the background
	// (ingest.Store.Sweep); the queue gives back the jobs it left (package jobs,
	// rescue.go).
	go a.sweepPDFs(ctx)
	return a.Jobs.Start(ctx)
}

// sweepPDFs removes the PDFs and staged uploads no paper refers to and no running
// upload writes, and logs what went.
func (a *App) sweepPDFs(ctx context.Context) {
	res, err := a.PDFs.Sweep(ctx, a.Pool)
	switch {
	case err != nil && ctx.Err() == nil:
		a.Logger.Warn("sweep the data folder of files no paper refers to", "error", err)
	case res.Staged > 0 || res.Unreferenced > 0:
		a.Logger.Info("removed files a stopped process left in the data folder",
			"staged_uploads", res.Staged, "unreferenced_pdfs", res.Unreferenced)
	}
}

// Stop stops the job queue, letting running jobs finish until ctx ends, and
// writes the audit log's pending summaries.
func (a *App) Stop(ctx context.Context) error {
	err := a.Jobs.Stop(ctx)
	// Counts of sampled sign-in failures still waiting for their window's summary.
	a.Audit.Flush()
	return err
}

// Close releases what Build opened: the plugins it started and the vector
// store's connection. Stop the queue first.
func (a *App) Close() {
	for i := len(a.closeFuncs) - 1; i >= 0; i-- {
		a.closeFuncs[i]()
	}
	a.closeFuncs = nil
}

// startPlugins starts the plugins of the configuration's plugins file that set
// asks for; nil when it asks for none.
func (a *App) startPlugins(ctx context.Context, set PluginSet) (*pluginhost.Host, error) {
	switch set {
	case NoPlugins:
		return nil, nil
	case EmbedPlugins, AnswerPlugins:
		// The role's model does the work; only a cloud model needs the LLM
		// plugins running.
		probe := newGateway(a.Config, a.Settings, nil, a.Logger)
		if as, err := probe.Assignment(ctx, set.roleOf()); err != nil || as.Provider == llmgw.Builtin {
			return nil, nil
		}
	}
	entries, err := pluginhost.LoadFile(a.Config.PluginsFile)
	if err != nil {
		// Each refusal names the file, the line and the reason.
		return nil, err
	}
	if set.roleOf() != "" {
		var llms []pluginhost.Entry
		for _, e := range entries {
			if e.Kind == protocol.KindLLM {
				llms = append(llms, e)
			}
		}
		entries = llms
	}
	h := pluginhost.New(entries, pluginhost.Options{
		Logger: a.Logger, LogLevel: strings.ToLower(a.Config.LogLevel.String()), Store: pluginhost.NewStore(a.Pool),
	})
	// Closed also when Start fails halfway: the plugins it started stop.
	a.closeFuncs = append(a.closeFuncs, h.Close)
	if err := h.Start(ctx); err != nil {
		return nil, fmt.Errorf("plugins: %w", err)
	}
	return h, nil
}

// newQueue is the job queue with the kinds of every area, whose workers use the
// App's services: ingest.pdf and embeddings.reembed write to the App's vector
// store, the learning and RAG kinds draft through its RAG service.
func (a *App) newQueue(ctx context.Context, adjust func(*jobs.Config) error, now func() time.Time) (*jobs.Service, error) {
	reg := jobs.NewRegistry()
	if err := ingest.RegisterJobs(reg, a.Ingest); err != nil {
		return nil, err
	}
	if err := registerJobs(reg, a.Pool, a.RAG, a.Embedder, a.Vectors, a.Logger); err != nil {
		return nil, err
	}
	if err := enrich.RegisterJobs(reg, &enrich.Worker{Service: a.Enrich}); err != nil {
		return nil, err
	}
	if err := a.registerPulse(reg, now); err != nil {
		return nil, err
	}
	zoteroUsers := func(ctx context.Context) (map[uuid.UUID]bool, error) {
		return a.Settings.UsersWithKey(ctx, "zotero.api_key")
	}
	if err := refsync.RegisterJobs(reg, a.RefSync, zoteroUsers, a.projectPapers); err != nil {
		return nil, err
	}
	if err := refsync.RegisterInstanceJobs(reg, a.RefSync); err != nil {
		return nil, err
	}
	if a.Config.TestJobs {
		if err := jobs.RegisterTestNoop(reg); err != nil {
			return nil, err
		}
	}
	cfg := jobs.Config{Pool: a.Pool, Logger: a.Logger, Registry: reg,
		QueueWorkers: map[string]int{ingest.Queue: ingest.Workers(), enrich.Queue: 2},
		PurgeFunc:    PurgeFunc(a.Pool, a.Audit, a.Logger),
		// An API host enqueues; the worker hosts work (lectern serve --role).
		InsertOnly:  a.Config.Role == config.RoleAPI,
		RescueAfter: a.Config.JobsRescueAfter}
	if adjust != nil {
		if err := adjust(&cfg); err != nil {
			return nil, err
		}
	}
	return jobs.New(ctx, cfg)
}

// newHandler is the HTTP surface over the App's services.
func (a *App) newHandler(o Options, searchSvc *search.Service) (http.Handler, []httpapi.Route) {
	llmAPI := llmsettings.NewAPI(a.GW, a.Settings, a.Audit, a.Logger, gatewayHosts(a.Config))
	llmAPI.OnEmbedChange = func(ctx context.Context) error {
		_, err := a.Jobs.Enqueue(ctx, uuid.Nil, ingest.ReembedArgs{})
		return err
	}
	var pluginAdmin *pluginhost.AdminAPI
	if a.Plugins != nil {
		pluginAdmin = pluginhost.NewAdminAPI(a.Plugins, pluginhost.NewStore(a.Pool), auditor{a.Audit})
	}
	return httpapi.NewHandler(httpapi.Deps{
		Config:   a.Config,
		Logger:   a.Logger,
		Pool:     a.Pool,
		Migrator: o.Migrator,
		Version:  o.Version,
		Auth:     a.Auth,
		Admin:    admin.New(a.Pool, a.Auth, a.Audit, a.Logger),
		Settings: userconfig.NewAPI(a.Settings, a.Config, nil, a.Logger),
		Papers:   papers.NewAPI(papers.New(a.Pool), resolver(searchSvc)),
		Projects: projects.NewAPI(a.Pool, papers.New(a.Pool)),
		Search:   search.NewAPI(searchSvc),
		Learning: learning.NewAPI(learningStore(a.Pool, o.Now), papers.New(a.Pool)),
		Upload:   ingest.NewAPI(a.Pool, a.PDFs, a.Jobs, ingest.NewFetcher(netguard.PublicOnly)),
		Enrich:   enrich.NewAPI(a.Enrich, a.Jobs),
		Passages: retrieve.NewAPI(a.Retriever),
		LLM:      llmAPI,
		RAG:      rag.NewAPI(a.RAG, a.Jobs),
		Plugins:  pluginAdmin,
		Jobs:     a.Jobs.API(),
		Pulse:    a.pulseAPI(o.Now),
		Digest:   digest.NewAPI(a.digest(o.Now)),
		Zotero:   a.refSyncAPI(),
		// The backups panel and the maintenance gate (SPEC "One-click restore").
		Backups:    backup.NewAPI(a.backupView(o), a.Audit, a.Logger),
		BackupView: a.backupView(o),

		InfraEvents: infraevents.NewAPI(infraevents.NewStore(a.Pool), a.Logger),
	})
}

// backupView is the app's read-only view of the backup folders, built once. A
// host without a signing key lists every point as not restorable.
func (a *App) backupView(o Options) *backup.View {
	if a.backups != nil {
		return a.backups
	}
	key, err := backup.SigningKey(a.Config.BackupSigningKey.Value(), a.Config.ServiceAPIKey.Value())
	if err != nil {
		a.Logger.Warn("backups: no signing key, so no restore point can be restored from the panel", "error", err)
	}
	schema := 0
	if o.Migrator != nil {
		schema = o.Migrator.Latest()
	} else if migs, err := store.EmbeddedMigrations(); err == nil && len(migs) > 0 {
		schema = migs[len(migs)-1].Version
	}
	a.backups = backup.NewView(backup.ViewConfig{Dir: a.Config.BackupFolder(), TriggerDir: a.Config.BackupTriggerFolder(),
		SigningKey: key, SchemaVersion: schema})
	return a.backups
}

// VectorStore is the vector store the configuration asks for: the embedded store,
// or with QDRANT_URL set, Qdrant mirrored from it (PostgreSQL keeps every vector).
// The embedded store keeps its files of exact vectors in LECTERN_DATA_DIR/vectors.
// closeFn releases the Qdrant connection. A store that cannot be built is an
// error, never a silent switch to another store.
func VectorStore(cfg *config.Config, pool *pgxpool.Pool) (vectorstore.Store, func(), error) {
	truth := embedded.NewWithOpts(pool, embedded.Opts{Dir: filepath.Join(cfg.DataDir, "vectors")})
	if cfg.QdrantURL == "" {
		return truth, func() {}, nil
	}
	q, err := qdrant.New(cfg.QdrantURL, cfg.QdrantAPIKey.Value())
	if err != nil {
		return nil, nil, fmt.Errorf("QDRANT_URL names a vector store that cannot be used: %w", err)
	}
	return vectorstore.Mirrored{Truth: truth, Index: q}, func() { _ = q.Close() }, nil
}

// PDFStore is where uploaded PDFs live: LECTERN_DATA_DIR/pdfs, by content digest.
func PDFStore(cfg *config.Config) *ingest.Store {
	return ingest.NewStore(filepath.Join(cfg.DataDir, "pdfs"))
}

// SettingsStore is the store of the host's and users' settings, its secrets
// sealed with SERVICE_CONFIG_KEY (and opened with SERVICE_CONFIG_KEY_OLD too).
func SettingsStore(cfg *config.Config, pool *pgxpool.Pool) (*userconfig.Store, error) {
	keys, err := secrets.NewKeyring(cfg.ServiceConfigKey.Value(), cfg.ServiceConfigKeyOld.Value())
	if err != nil {
		return nil, fmt.Errorf("app: %w", err)
	}
	return userconfig.New(pool, keys), nil
}

// PurgeFunc is the daily data.purge job: accounts soft-deleted more than
// users.Retention ago are hard-deleted and scrubbed from the audit log, dead
// credentials (sign-in links, pairing tokens, old sessions) go, and so do
// infrastructure events older than infraevents.Retention (which are purged even
// when the accounts' part fails).
func PurgeFunc(pool *pgxpool.Pool, auditLog *audit.Log, log *slog.Logger) func(ctx context.Context) error {
	return func(ctx context.Context) error {
		now := time.Now()
		infra, infraErr := infraevents.NewStore(pool).Purge(ctx, now.Add(-infraevents.Retention))
		if infraErr == nil {
			log.InfoContext(ctx, "infrastructure events purged", "rows", infra)
		}
		return errors.Join(infraErr, purgeAccounts(ctx, pool, auditLog, log, now))
	}
}

// purgeAccounts is the identity area's part of PurgeFunc.
func purgeAccounts(ctx context.Context, pool *pgxpool.Pool, auditLog *audit.Log, log *slog.Logger, now time.Time) error {
	res, err := users.Purge(ctx, pool, now, users.Retention, papers.DeletePrivateOfUsersTx)
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

// learningStore is the learning area's store, on the clock now when one is given.
func learningStore(pool *pgxpool.Pool, now func() time.Time) *learning.Store {
	if now == nil {
		return learning.New(pool)
	}
	return learning.New(pool).WithClock(now)
}
