package benchhttp

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"golang.org/x/sync/errgroup"

	"github.com/lectern-research/lectern/host/internal/embedding"
	"github.com/lectern-research/lectern/host/internal/llmgw"
	"github.com/lectern-research/lectern/host/internal/vectorstore"
	"github.com/lectern-research/lectern/host/internal/vectorstore/embedded"
	"github.com/lectern-research/lectern/sdk/llm/extractive"
)

// embedBatch is how many passages one Embed call and one Upsert take.
const embedBatch = 2_000

// Seed writes the generated corpus into a migrated, empty database in bulk: the
// shared papers and their passages by COPY, each passage's vector through the
// embedded vector store (the builtin lexical embedding, the host's default embed
// model, so the server searches them as it would its own), then the users and
// everything each keeps privately, generated in SQL. It is the bench-only
// exception to table ownership (archtest lists it): no product code path creates
// 100k passages without their PDFs.
func Seed(ctx context.Context, pool *pgxpool.Pool, log *slog.Logger) error {
	c := newCorpus()
	start := time.Now()
	paperIDs, err := seedPapers(ctx, pool)
	if err != nil {
		return err
	}
	if err := seedPassages(ctx, pool, c, paperIDs, log); err != nil {
		return err
	}
	log.Info("seeded the shared corpus", "papers", Papers, "passages", Passages, "took", time.Since(start).Round(time.Second).String())
	for _, q := range userSQL {
		if _, err := pool.Exec(ctx, q); err != nil {
			return fmt.Errorf("seed users' data: %w", err)
		}
	}
	if _, err := pool.Exec(ctx, `ANALYZE`); err != nil {
		return fmt.Errorf("seed: analyze: %w", err)
	}
	log.Info("seeded the users' data", "users", SeededUsers, "cards_per_user", CardsPerUser, "took", time.Since(start).Round(time.Second).String())
	return nil
}

// seedPapers copies the shared corpus's papers: public, discovered by the
// instance, one a minute back from now, half with a publication date.
func seedPapers(ctx context.Context, pool *pgxpool.Pool) ([]uuid.UUID, error) {
	ids := make([]uuid.UUID, Papers)
	now := time.Now()
	_, err := pool.CopyFrom(ctx, pgx.Identifier{"papers"},
		[]string{"id", "title", "abstract", "source", "visibility", "discovered_at", "doi", "publication_date", "publication_date_precision"},
		pgx.CopyFromSlice(Papers, func(i int) ([]any, error) {
			ids[i] = uuid.New()
			var date, precision any
			if i%2 == 0 {
				date, precision = time.Date(1990+i%35, time.Month(1+i%12), 1, 0, 0, 0, 0, time.UTC), "month"
			}
			return []any{ids[i], fmt.Sprintf("Generated paper %d on topic %d", i, i%97),
				fmt.Sprintf("Abstract of generated paper %d about topic %d.", i, i%97), "bench", "public",
				now.Add(-time.Duration(i) * time.Minute), fmt.Sprintf("10.9999/bench.%d", i), date, precision}, nil
		}))
	if err != nil {
		return nil, fmt.Errorf("seed papers: %w", err)
	}
	return ids, nil
}

// seedPassages copies PassagesPerPaper passages per paper and stores their vectors,
// embedding one batch while the previous one is written.
func seedPassages(ctx context.Context, pool *pgxpool.Pool, c *corpus, paperIDs []uuid.UUID, log *slog.Logger) error {
	texts := c.passages(7, Passages)
	items := make([]vectorstore.Item, Passages)
	_, err := pool.CopyFrom(ctx, pgx.Identifier{"paper_chunks"},
		[]string{"id", "paper_id", "chunk_index", "content", "page_start", "page_end", "char_start", "char_end", "token_count"},
		pgx.CopyFromSlice(Passages, func(i int) ([]any, error) {
			items[i] = vectorstore.Item{ChunkID: uuid.New(), PaperID: paperIDs[i/PassagesPerPaper]}
			k := i % PassagesPerPaper
			return []any{items[i].ChunkID, items[i].PaperID, k, texts[i], 1 + k/3, 1 + k/3, k * 1000, k*1000 + len(texts[i]), wordsPerChunk}, nil
		}))
	if err != nil {
		return fmt.Errorf("seed passages: %w", err)
	}
	emb := embedding.Provider{P: extractive.New(nil), Name: llmgw.BuiltinEmbedModel}
	store := embedded.New(pool)
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(2)
	for from := 0; from < Passages; from += embedBatch {
		to := min(from+embedBatch, Passages)
		g.Go(func() error {
			res, err := emb.Embed(gctx, texts[from:to])
			if err != nil {
				return err
			}
			batch := items[from:to]
			for i := range batch {
				batch[i].Vector = res.Vectors[i]
			}
			if err := store.Upsert(gctx, res.Model, batch); err != nil {
				return fmt.Errorf("seed vectors: %w", err)
			}
			if to%(10*embedBatch) == 0 {
				log.Info("embedded passages", "done", to, "of", Passages)
			}
			return nil
		})
	}
	return g.Wait()
}

// userSQL generates the users and what each keeps: a library of LibraryPerUser
// papers (a different stride of the corpus each; a third with a state, spread
// over the states, some starred), DecksPerUser decks holding CardsPerUser cards
// (reviewed cards due from ten days ago to ninety days ahead, so about a tenth
// are due; one in twenty new; one in fifty suspended), and ProjectsPerUser
// projects with tasks, milestones and papers of the user's library, and a Pulse
// deck for today.
var userSQL = []string{
	fmt.Sprintf(`INSERT INTO users (email, display_name)
	 SELECT 'bench' || lpad(u::text, 3, '0') || '@example.org', 'Bench user ' || u FROM generate_series(1, %d) u`, SeededUsers),
	fmt.Sprintf(`INSERT INTO user_library (user_id, paper_id, added_via, added_at)
	 SELECT u.id, p.id, 'manual_save', now() - make_interval(mins => p.rn::int)
	   FROM (SELECT id, row_number() OVER (ORDER BY email) AS k FROM users) u
	   JOIN (SELECT id, row_number() OVER (ORDER BY id) AS rn FROM papers WHERE source = 'bench') p
	     ON p.rn %% %[1]d = (u.k - 1) %% %[1]d`, Papers/LibraryPerUser),
	`INSERT INTO paper_user_state (user_id, paper_id, state, starred)
	 SELECT ul.user_id, ul.paper_id,
	        (ARRAY['to_read', 'reading', 'done', 'trash', 'inbox'])[1 + (abs(hashtext(ul.paper_id::text)) % 5)],
	        abs(hashtext(ul.paper_id::text)) % 7 = 0
	   FROM user_library ul WHERE abs(hashtext(ul.paper_id::text || ul.user_id::text)) % 3 = 0`,
	fmt.Sprintf(`INSERT INTO decks (user_id, name) SELECT u.id, 'Deck ' || d FROM users u, generate_series(1, %d) d`, DecksPerUser),
	fmt.Sprintf(`INSERT INTO cards (user_id, deck_id, paper_id, front, back, fsrs_state, stability, difficulty,
	                    due_at, last_review_at, reps, status)
	 SELECT l.user_id, d.id, l.paper_id, 'What does paper ' || l.rn || ' show?', 'Its finding ' || l.rn,
	        CASE WHEN l.rn %% 20 = 0 THEN 0 ELSE 2 END,
	        CASE WHEN l.rn %% 20 = 0 THEN NULL ELSE 5.0 + l.rn %% 30 END,
	        CASE WHEN l.rn %% 20 = 0 THEN NULL ELSE 1.0 + l.rn %% 9 END,
	        CASE WHEN l.rn %% 20 = 0 THEN now() ELSE now() + make_interval(hours => (l.rn::int * 53) %% 2400 - 240) END,
	        CASE WHEN l.rn %% 20 = 0 THEN NULL ELSE now() - interval '3 days' END,
	        CASE WHEN l.rn %% 20 = 0 THEN 0 ELSE 3 END,
	        CASE WHEN l.rn %% 50 = 0 THEN 'suspended' ELSE 'active' END
	   FROM (SELECT user_id, paper_id, row_number() OVER (PARTITION BY user_id ORDER BY paper_id) AS rn FROM user_library) l
	   JOIN (SELECT id, user_id, row_number() OVER (PARTITION BY user_id ORDER BY name) AS k FROM decks) d
	     ON d.user_id = l.user_id AND d.k = 1 + l.rn %% %[2]d
	  WHERE l.rn <= %[1]d`, CardsPerUser, DecksPerUser),
	fmt.Sprintf(`INSERT INTO projects (user_id, name, description, status, deadline)
	 SELECT u.id, 'Project ' || p, 'A generated project.', (ARRAY['active', 'active', 'paused', 'completed'])[1 + p %% 4],
	        current_date + p * 30
	   FROM users u, generate_series(1, %d) p`, ProjectsPerUser),
	fmt.Sprintf(`INSERT INTO tasks (user_id, project_id, title, status, priority, due_at, completed_at, sort_order)
	 SELECT p.user_id, p.id, 'Task ' || t, CASE WHEN t %% 3 = 0 THEN 'done' ELSE 'todo' END, 1 + t %% 4,
	        now() + make_interval(days => t), CASE WHEN t %% 3 = 0 THEN now() END, t
	   FROM projects p, generate_series(1, %d) t`, TasksPerProject),
	fmt.Sprintf(`INSERT INTO milestones (user_id, project_id, title, due_date)
	 SELECT p.user_id, p.id, 'Milestone ' || m, current_date + m * 14 FROM projects p, generate_series(1, %d) m`, MilestonesPerProj),
	fmt.Sprintf(`INSERT INTO project_papers (project_id, paper_id, user_id)
	 SELECT p.id, l.paper_id, p.user_id
	   FROM (SELECT id, user_id, row_number() OVER (PARTITION BY user_id ORDER BY name) AS k FROM projects) p
	   JOIN (SELECT user_id, paper_id, row_number() OVER (PARTITION BY user_id ORDER BY added_at DESC) AS rn FROM user_library) l
	     ON l.user_id = p.user_id AND l.rn > (p.k - 1) * %[1]d AND l.rn <= p.k * %[1]d`, PapersPerProject),
	// Today's Pulse deck: PulseCardsPerUser papers of the shared corpus, a different
	// draw per user, for the load test's ratings (the bench host has no source
	// plugins to make a deck from).
	fmt.Sprintf(`INSERT INTO pulse_decks (user_id, deck_date, card_count) SELECT id, current_date, %d FROM users`, PulseCardsPerUser),
	fmt.Sprintf(`INSERT INTO pulse_cards (deck_id, user_id, paper_id, rank, score, why)
	 SELECT d.id, d.user_id, p.id, p.rn, 1.0 / p.rn, 'Drawn for the load test.'
	   FROM pulse_decks d
	   CROSS JOIN LATERAL (SELECT x.id, row_number() OVER () AS rn
	                         FROM (SELECT id FROM papers WHERE source = 'bench'
	                                ORDER BY md5(id::text || d.user_id::text) LIMIT %d) x) p`, PulseCardsPerUser),
}
