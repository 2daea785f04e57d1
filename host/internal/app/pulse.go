package app

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/riverqueue/river"

	"github.com/lectern-research/lectern/host/internal/config"
	"github.com/lectern-research/lectern/host/internal/digest"
	"github.com/lectern-research/lectern/host/internal/embedding"
	"github.com/lectern-research/lectern/host/internal/jobs"
	"github.com/lectern-research/lectern/host/internal/llmgw"
	"github.com/lectern-research/lectern/host/internal/papers"
	"github.com/lectern-research/lectern/host/internal/pulse"
	"github.com/lectern-research/lectern/host/internal/pulse/classifier"
	"github.com/lectern-research/lectern/host/internal/users"
)

// newPulse is Pulse's deck generator and classifier trainer over the App's
// search, embedder and RAG service (the relevance role).
func (a *App) newPulse(now func() time.Time) (*pulse.Generator, *pulse.Trainer) {
	store := pulse.NewStore(a.Pool)
	key := modelKey(a.Config)
	embedder := a.pulseEmbedder()
	gen := &pulse.Generator{Store: store, Papers: papers.New(a.Pool), Discover: a.Search.Search,
		Embed: func(ctx context.Context, texts []string) ([][]float32, error) {
			r, err := embedder.Embed(ctx, texts)
			return r.Vectors, err
		},
		Judge: func(ctx context.Context, interests, title, abstract string) (pulse.Judgement, error) {
			r, err := a.RAG.JudgeRelevance(ctx, interests, title, abstract)
			return pulse.Judgement{Relevance: r.Relevance, Novelty: r.Novelty, Reason: r.Reason}, err
		},
		Key: key, Logger: a.Logger, Now: now}
	return gen, &pulse.Trainer{Store: store, Papers: papers.New(a.Pool), Key: key, Now: now}
}

// pulseCacheSize is how many title-and-abstract vectors Pulse remembers: the
// library profile (200) and the candidates (500) of a few dozen users.
const pulseCacheSize = 16384

// pulseEmbedder is the embedder Pulse's decks, recommendations and weekly
// summaries call: the API's, remembering vectors by model and text, because each
// of them embeds the same library and candidates again.
func (a *App) pulseEmbedder() embedding.Embedder {
	gw, ok := a.Embedder.(llmgw.Embedder)
	if !ok {
		return a.Embedder
	}
	c, err := embedding.NewCache(gw, gw.Model, pulseCacheSize)
	if err != nil {
		return a.Embedder
	}
	return c
}

// modelKey resolves the Pulse classifier's signing key from the configuration
// when it is needed (SPEC "Pulse model signing"): never derived in production.
func modelKey(cfg *config.Config) func() ([]byte, error) {
	return func() ([]byte, error) {
		return classifier.Key(cfg.ServiceModelHMACKey.Value(), cfg.ServiceAPIKey.Value(), !cfg.IsProduction())
	}
}

// pulseToday is the user's local date (users.timezone; UTC when it does not load).
func (a *App) pulseToday(now func() time.Time) pulse.Today {
	return func(ctx context.Context, userID uuid.UUID) (string, error) {
		u, err := users.LiveByID(ctx, a.Pool, userID)
		if err != nil {
			return "", fmt.Errorf("pulse: read the user's time zone: %w", err)
		}
		loc, err := time.LoadLocation(u.Timezone)
		if err != nil {
			loc = time.UTC
		}
		t := time.Now()
		if now != nil {
			t = now()
		}
		return t.In(loc).Format(time.DateOnly), nil
	}
}

// registerPulse adds pulse.nightly (with its per-user schedule) and the real
// pulse.train_classifier to reg.
func (a *App) registerPulse(reg *jobs.Registry, now func() time.Time) error {
	enqueue := func(ctx context.Context, owner uuid.UUID, args river.JobArgs) error {
		_, err := a.Jobs.Enqueue(ctx, owner, args)
		return err
	}
	return pulse.RegisterJobs(reg, a.PulseGen, a.PulseTrainer, a.pulseToday(now), enqueue)
}

// pulseAPI is Pulse's HTTP API over the App's generator and queue.
func (a *App) pulseAPI(now func() time.Time) *pulse.API {
	return pulse.NewAPI(a.Pool, a.PulseGen, a.Search, a.pulseToday(now), func(ctx context.Context, owner uuid.UUID) (*jobs.Envelope, error) {
		return a.Jobs.Enqueue(ctx, owner, pulse.NightlyArgs{})
	})
}

// digest is the Weekly Summary over the App's embedder and RAG service (the
// summarize role).
func (a *App) digest(now func() time.Time) *digest.Service {
	return &digest.Service{Papers: papers.New(a.Pool), Pulse: a.PulseGen.Store, Embed: a.PulseGen.Embed,
		Synthesize: a.RAG.Synthesize, Now: now}
}
