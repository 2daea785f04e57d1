//go:build qdrant

// The contract test against a real Qdrant: `make test-qdrant QDRANT_URL=...` (the
// qdrant build tag), kept out of `make test` because no Qdrant runs where that does.

package qdrant

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lectern-research/lectern/host/internal/vectorstore/storetest"
)

func TestContract(t *testing.T) {
	rawURL := os.Getenv("QDRANT_URL")
	require.NotEmpty(t, rawURL, "QDRANT_URL must name a real Qdrant (for example http://localhost:6334)")
	suffix := make([]byte, 4)
	_, err := rand.Read(suffix)
	require.NoError(t, err)
	prefix := "lectern_test_" + hex.EncodeToString(suffix) + "_"

	s, err := New(rawURL, os.Getenv("QDRANT_API_KEY"), WithCollectionPrefix(prefix))
	require.NoError(t, err)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		names, err := s.client.ListCollections(ctx)
		if err != nil {
			t.Errorf("list collections to drop: %v", err)
		}
		for _, name := range names {
			if strings.HasPrefix(name, prefix) {
				if err := s.client.DeleteCollection(ctx, name); err != nil {
					t.Errorf("drop collection %s: %v", name, err)
				}
			}
		}
		require.NoError(t, s.Close())
	})

	storetest.Run(t, s)
}
