package embedded_test

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/google/uuid"

	"github.com/lectern-research/lectern/host/internal/dbtest"
	"github.com/lectern-research/lectern/host/internal/vectorstore"
	"github.com/lectern-research/lectern/host/internal/vectorstore/embedded"
)

// BenchmarkStoreSearch is one search through the Store (what the retriever
// calls) over 2,000 vectors of 384 dimensions in PostgreSQL, with no write in
// between: the partition's in-memory search plus whatever the store asks
// PostgreSQL before it (reading the change log). The partition is loaded before
// the clock starts.
func BenchmarkStoreSearch(b *testing.B) {
	pool := dbtest.NewDB(b)
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(3, 4))
	const n, dim = 2000, 384
	paper := uuid.New()
	if _, err := pool.Exec(ctx, `INSERT INTO papers (id, title, source) VALUES ($1, 'Bench paper', 'test')`, paper); err != nil {
		b.Fatal(err)
	}
	items := make([]vectorstore.Item, n)
	for i := range items {
		id := uuid.New()
		if _, err := pool.Exec(ctx, `
			INSERT INTO paper_chunks (id, paper_id, chunk_index, content, page_start, page_end, char_start, char_end, token_count)
			VALUES ($1, $2, $3, 'text', 1, 1, 0, 4, 1)`, id, paper, i); err != nil {
			b.Fatal(err)
		}
		v := make([]float32, dim)
		for j := range v {
			v[j] = float32(rng.NormFloat64())
		}
		items[i] = vectorstore.Item{ChunkID: id, PaperID: paper, Vector: v}
	}
	s := embedded.New(pool)
	if err := s.Upsert(ctx, "m", items); err != nil {
		b.Fatal(err)
	}
	if _, err := s.Search(ctx, "m", items[0].Vector, 10, vectorstore.Filter{}); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := s.Search(ctx, "m", items[i%n].Vector, 10, vectorstore.Filter{}); err != nil {
			b.Fatal(err)
		}
	}
}
