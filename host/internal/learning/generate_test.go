package learning

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/lectern-research/lectern/host/internal/dbtest"
	"github.com/lectern-research/lectern/host/internal/jobs"
)

// A passage written for this test: prose about reciprocal rank fusion, plus lines
// that are not prose (an equation, a reference) and must never become cards.
var fusionText = []string{
	`Reciprocal rank fusion combines several ranked lists into one ranking without training. ` +
		`Each document receives the sum of the reciprocal of its rank in every list, shifted by a constant. ` +
		`Because reciprocal rank fusion ignores the raw scores, lexical and vector retrieval can be fused even when their scores are not comparable. ` +
		`The constant sixty dampens the influence of documents that rank highly in only one list.`,
	`score(d) = sum_i 1 / (60 + r_i(d)) where r_i(d) = 1, 2, 3, ... for i = 1..k lists [12].` +
		` Hybrid retrieval with reciprocal rank fusion improved recall in every retrieval benchmark we ran on the corpus of papers. ` +
		`Cormack, G. V., Clarke, C. L. A., Buettcher, S. (2009). Reciprocal rank fusion outperforms Condorcet. SIGIR 2009, 758-759.`,
}

func TestDraftClozeKeepsProseAndBlanksCharacteristicTerms(t *testing.T) {
	t.Parallel()
	ps := []passage{{chunkID: uuid.New(), page: 1, text: fusionText[0]}, {chunkID: uuid.New(), page: 2, text: fusionText[1]}}
	drafts := draftCloze(ps, 3)
	require.NotEmpty(t, drafts)
	require.LessOrEqual(t, len(drafts), 3)
	terms := map[string]bool{}
	for _, d := range drafts {
		require.Contains(t, d.front, "[...]")
		term := strings.SplitN(d.back, "\n", 2)[0]
		require.False(t, terms[strings.ToLower(term)], "one card per term")
		terms[strings.ToLower(term)] = true
		require.NotContains(t, d.front, "sum_i", "equations never become cards")
		require.NotContains(t, d.front, "Buettcher", "nor reference entries")
	}
	require.Equal(t, drafts, draftCloze(ps, 3), "the same text gives the same drafts")
}

func TestGenerateJobDraftsIntoTheDeck(t *testing.T) {
	t.Parallel()
	pool := dbtest.NewDB(t)
	ctx := context.Background()
	var user, deck, paper uuid.UUID
	require.NoError(t, pool.QueryRow(ctx, `INSERT INTO users (email) VALUES ('ann@example.org') RETURNING id`).Scan(&user))
	require.NoError(t, pool.QueryRow(ctx, `INSERT INTO decks (user_id, name) VALUES ($1, 'rrf') RETURNING id`, user).Scan(&deck))
	require.NoError(t, pool.QueryRow(ctx, `INSERT INTO papers (title, source, visibility) VALUES ('Fusion', 'arxiv', 'public') RETURNING id`).Scan(&paper))
	for i, text := range fusionText {
		_, err := pool.Exec(ctx, `INSERT INTO paper_chunks (paper_id, chunk_index, section, content, page_start, page_end, char_start, char_end, token_count)
			VALUES ($1, $2, 'Method', $3, $4, $4, 0, length($3), 100)`, paper, i, text, i+1)
		require.NoError(t, err)
	}
	reg := jobs.NewRegistry()
	require.NoError(t, RegisterJobs(reg, pool))
	svc, err := jobs.New(ctx, jobs.Config{Pool: pool, Logger: slog.New(slog.DiscardHandler), Registry: reg})
	require.NoError(t, err)
	require.NoError(t, svc.Start(ctx))
	t.Cleanup(func() { _ = svc.Stop(context.Background()) })

	env, err := svc.Enqueue(ctx, user, GenerateArgs{PaperID: paper, DeckID: deck, MaxCards: 3})
	require.NoError(t, err)
	var state string
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		require.NoError(t, pool.QueryRow(ctx, `SELECT state FROM river_job WHERE id = $1`, env.ID).Scan(&state))
		if state == "completed" || state == "discarded" {
			break
		}
	}
	require.Equal(t, "completed", state)
	var n, drafts, withPage int
	require.NoError(t, pool.QueryRow(ctx, `
		SELECT count(*), count(*) FILTER (WHERE status = 'draft' AND card_type = 'cloze' AND paper_id = $2),
		       count(*) FILTER (WHERE chunk_id IS NOT NULL AND page_number IS NOT NULL)
		  FROM cards WHERE user_id = $1 AND deck_id = $3`, user, paper, deck).Scan(&n, &drafts, &withPage))
	require.Positive(t, n)
	require.LessOrEqual(t, n, 3)
	require.Equal(t, n, drafts, "drafts wait for the user")
	require.Equal(t, n, withPage, "each draft cites its passage and page")

	// Someone else's deck is not a target.
	var bob uuid.UUID
	require.NoError(t, pool.QueryRow(ctx, `INSERT INTO users (email) VALUES ('bob@example.org') RETURNING id`).Scan(&bob))
	env, err = svc.Enqueue(ctx, bob, GenerateArgs{PaperID: paper, DeckID: deck})
	require.NoError(t, err)
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		require.NoError(t, pool.QueryRow(ctx, `SELECT state FROM river_job WHERE id = $1`, env.ID).Scan(&state))
		if state == "completed" || state == "discarded" || state == "retryable" {
			break
		}
	}
	require.NotEqual(t, "completed", state)
	require.NoError(t, pool.QueryRow(ctx, `SELECT count(*) FROM cards WHERE deck_id = $1`, deck).Scan(&n))
	require.Equal(t, drafts, n, "Bob's job added nothing to Ann's deck")
}

func TestDraftClozeJoinsWordsBrokenAtLineEnds(t *testing.T) {
	t.Parallel()
	text := "Writers synthesize the source documents in several ways, in-\ncluding selection, grouping and condensation of the synthesize steps of the source documents."
	drafts := draftCloze([]passage{{text: text}}, 1)
	require.Len(t, drafts, 1)
	require.Contains(t, drafts[0].back, "including")
	require.NotContains(t, drafts[0].back, "in- cluding")
}
