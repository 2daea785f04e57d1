package rag_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/lectern-research/lectern/host/internal/dbtest"
	"github.com/lectern-research/lectern/host/internal/jobs"
	"github.com/lectern-research/lectern/host/internal/learning"
	"github.com/lectern-research/lectern/host/internal/llmgw"
	"github.com/lectern-research/lectern/host/internal/rag"
	"github.com/lectern-research/lectern/host/internal/secrets"
	"github.com/lectern-research/lectern/host/internal/userconfig"
	"github.com/lectern-research/lectern/sdk/llm"
	"github.com/lectern-research/lectern/sdk/llm/extractive"
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

func cardsService(t *testing.T, provider llm.Provider) (*rag.Service, *userconfig.Store) {
	t.Helper()
	pool := dbtest.NewDB(t)
	keys, err := secrets.NewKeyring("", "")
	require.NoError(t, err)
	settings := userconfig.New(pool, keys)
	gw := llmgw.New(llmgw.Config{Settings: settings, Builtin: provider, Logger: slog.New(slog.DiscardHandler)})
	return &rag.Service{Pool: pool, GW: gw}, settings
}

func TestGenerateJobDraftsCardsWithTheCardsRole(t *testing.T) {
	t.Parallel()
	svc, _ := cardsService(t, extractive.New(nil))
	pool := svc.Pool
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
	require.NoError(t, learning.RegisterJobs(reg, pool, svc))
	queue, err := jobs.New(ctx, jobs.Config{Pool: pool, Logger: slog.New(slog.DiscardHandler), Registry: reg})
	require.NoError(t, err)
	require.NoError(t, queue.Start(ctx))
	t.Cleanup(func() { _ = queue.Stop(context.Background()) })
	wait := func(id int64) (state string) {
		for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
			require.NoError(t, pool.QueryRow(ctx, `SELECT state FROM river_job WHERE id = $1`, id).Scan(&state))
			if state == "completed" || state == "discarded" || state == "retryable" {
				return state
			}
		}
		return state
	}

	env, err := queue.Enqueue(ctx, user, learning.GenerateArgs{PaperID: paper, DeckID: deck, MaxCards: 3})
	require.NoError(t, err)
	require.Equal(t, "completed", wait(env.ID))
	rows, err := pool.Query(ctx, `SELECT front, back, status, card_type, page_number FROM cards WHERE user_id = $1 AND deck_id = $2 AND paper_id = $3`, user, deck, paper)
	require.NoError(t, err)
	n := 0
	for rows.Next() {
		var front, back, status, kind string
		var page *int
		require.NoError(t, rows.Scan(&front, &back, &status, &kind, &page))
		n++
		require.Equal(t, "draft", status, "drafts wait for the user")
		require.Equal(t, "cloze", kind)
		require.NotNil(t, page, "each draft cites its passage's page")
		require.Contains(t, front, extractive.Blank)
		require.NotContains(t, front, "sum_i", "equations never become cards")
		require.NotContains(t, front, "Buettcher", "nor reference entries")
	}
	require.NoError(t, rows.Err())
	require.Positive(t, n)
	require.LessOrEqual(t, n, 3)

	// Someone else's deck is not a target.
	var bob uuid.UUID
	require.NoError(t, pool.QueryRow(ctx, `INSERT INTO users (email) VALUES ('bob@example.org') RETURNING id`).Scan(&bob))
	env, err = queue.Enqueue(ctx, bob, learning.GenerateArgs{PaperID: paper, DeckID: deck})
	require.NoError(t, err)
	require.NotEqual(t, "completed", wait(env.ID))
	var after int
	require.NoError(t, pool.QueryRow(ctx, `SELECT count(*) FROM cards WHERE deck_id = $1`, deck).Scan(&after))
	require.Equal(t, n, after, "Bob's job added nothing to Ann's deck")
}

func TestCardDraftsQuotingNothingInThePaperAreDropped(t *testing.T) {
	t.Parallel()
	out, err := json.Marshal(llm.CardDrafts{Cards: []llm.CardDraft{
		{Front: "Reciprocal rank fusion combines several ____ into one ranking without training.", Back: "ranked lists",
			Quote: "Reciprocal rank fusion combines several ranked lists into one ranking without training."},
		{Front: "RRF was invented in ____.", Back: "1987", Quote: "Reciprocal rank fusion was first described at a conference in 1987."},
	}})
	require.NoError(t, err)
	svc, _ := cardsService(t, scripted{Provider: extractive.New(nil), text: string(out)})
	passages := []learning.Passage{{ChunkID: uuid.New(), Page: 4, Text: fusionText[0]}}
	drafts, err := svc.DraftCards(context.Background(), "Fusion", passages, 5)
	require.NoError(t, err)
	require.Len(t, drafts, 1, "the draft whose quote is not in the paper is dropped")
	require.Equal(t, passages[0].ChunkID, drafts[0].ChunkID)
	require.Equal(t, 4, drafts[0].Page)
	require.Equal(t, "ranked lists", drafts[0].Back, "the back is the answer alone")
	require.Equal(t, "Reciprocal rank fusion combines several ranked lists into one ranking without training.", drafts[0].Source)
}
