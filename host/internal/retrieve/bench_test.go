package retrieve

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/lectern-research/lectern/host/internal/dbtest"
	"github.com/lectern-research/lectern/host/internal/embedding"
	"github.com/lectern-research/lectern/host/internal/vectorstore"
	"github.com/lectern-research/lectern/host/internal/vectorstore/embedded"
	"github.com/lectern-research/lectern/sdk/llm/extractive"
)

func TestMain(m *testing.M) { dbtest.Main(m) }

// BenchmarkHybridSearch measures GET /api/search/chunks' work (lexical rank,
// vector search, ownership filter, fusion) over 100k synthetic passages of 120
// words each, drawn from a Zipf vocabulary of 20k words, in 5k public papers:
// a selective query (two rare words) and a common one (the three most frequent).
func BenchmarkHybridSearch(b *testing.B) {
	const chunks, perPaper, words = 100_000, 20, 120
	pool := dbtest.NewDB(b)
	ctx := context.Background()
	zipf := rand.NewZipf(rand.New(rand.NewPCG(7, 8)), 1.1, 1, 19_999)
	vocab := make([]string, 20_000)
	for i := range vocab {
		vocab[i] = fmt.Sprintf("w%c%c%c%d", 'a'+rune(i%26), 'a'+rune(i/26%26), 'a'+rune(i/676%26), i)
	}
	var user uuid.UUID
	require.NoError(b, pool.QueryRow(ctx, `INSERT INTO users (email) VALUES ('bench@example.org') RETURNING id`).Scan(&user))

	store := embedded.New(pool)
	lex := embedding.Provider{P: extractive.New(nil), Name: "lectern-lexical-v2-384"}
	rows := make([][]any, 0, chunks)
	var paperIDs []uuid.UUID
	var items []vectorstore.Item
	var texts []string
	for i := range chunks {
		if i%perPaper == 0 {
			paperIDs = append(paperIDs, uuid.New())
		}
		var sb strings.Builder
		for w := range words {
			if w > 0 {
				sb.WriteByte(' ')
			}
			sb.WriteString(vocab[zipf.Uint64()])
		}
		id := uuid.New()
		rows = append(rows, []any{id, paperIDs[len(paperIDs)-1], i % perPaper, sb.String(), 1, 1, 0, sb.Len(), words})
		items = append(items, vectorstore.Item{ChunkID: id, PaperID: paperIDs[len(paperIDs)-1]})
		texts = append(texts, sb.String())
	}
	_, err := pool.CopyFrom(ctx, pgx.Identifier{"papers"}, []string{"id", "title", "source", "visibility"},
		pgx.CopyFromSlice(len(paperIDs), func(i int) ([]any, error) {
			return []any{paperIDs[i], fmt.Sprintf("Paper %d", i), "bench", "public"}, nil
		}))
	require.NoError(b, err)
	_, err = pool.CopyFrom(ctx, pgx.Identifier{"paper_chunks"},
		[]string{"id", "paper_id", "chunk_index", "content", "page_start", "page_end", "char_start", "char_end", "token_count"},
		pgx.CopyFromRows(rows))
	require.NoError(b, err)
	emb, err := lex.Embed(ctx, texts)
	require.NoError(b, err)
	for i := range items {
		items[i].Vector = emb.Vectors[i]
	}
	for start := 0; start < len(items); start += 2000 {
		require.NoError(b, store.Upsert(ctx, emb.Model, items[start:min(start+2000, len(items))]))
	}
	_, err = pool.Exec(ctx, `ANALYZE papers; ANALYZE paper_chunks; ANALYZE chunk_embeddings`)
	require.NoError(b, err)
	indexed := New(pool, lex, store)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	start := time.Now()
	require.NoError(b, indexed.Warm(ctx))
	took := time.Since(start)
	runtime.GC()
	runtime.ReadMemStats(&after)
	b.Logf("lexical index of %d passages: loaded in %v, %.1f MiB of heap", indexed.lex.index.Len(), took,
		float64(after.HeapAlloc-before.HeapAlloc)/(1<<20))
	capped := New(pool, lex, store)
	capped.capped = true

	for _, q := range []struct{ name, text string }{
		{"selective", vocab[15_001] + " " + vocab[17_003]},
		{"common", vocab[1] + " " + vocab[2] + " " + vocab[3]},
	} {
		for _, mode := range []struct {
			name string
			r    *Retriever
		}{{"capped-1000", capped}, {"bm25-index", indexed}} {
			b.Run(q.name+"/"+mode.name, func(b *testing.B) { benchSearch(b, mode.r, user, q.text) })
		}
	}
}

// benchSearch times r.Search(q) b.N times and reports the median and 95th
// percentile.
func benchSearch(b *testing.B, r *Retriever, user uuid.UUID, q string) {
	ctx := context.Background()
	if _, err := r.Search(ctx, user, q, nil, 20); err != nil { // loads the partition
		b.Fatal(err)
	}
	durations := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		got, err := r.Search(ctx, user, q, nil, 20)
		durations = append(durations, time.Since(start))
		if err != nil || len(got) == 0 {
			b.Fatalf("%d passages, %v", len(got), err)
		}
	}
	b.StopTimer()
	slices.Sort(durations)
	b.ReportMetric(float64(durations[len(durations)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(durations[len(durations)*95/100].Microseconds())/1000, "p95-ms")
}
