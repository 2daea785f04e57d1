package main

import (
	"context"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lectern-research/lectern/sdk/plugintest"
	"github.com/lectern-research/lectern/sdk/protocol"
	"github.com/lectern-research/lectern/sdk/source"
)

func TestConformance(t *testing.T) {
	t.Parallel()
	bin := plugintest.Build(t, ".")
	plugintest.Run(t, plugintest.Options{Path: bin, Kind: protocol.KindSource, Query: "graph neural"})
}

func TestConformanceWithSettings(t *testing.T) {
	t.Parallel()
	bin := plugintest.Build(t, ".")
	plugintest.Run(t, plugintest.Options{
		Path: bin, Kind: protocol.KindSource, Query: "surface codes", PageSize: 3,
		Settings: map[string]any{"corpus_size": float64(40), "delay": "2ms"},
	})
}

func TestConfigure(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		settings map[string]any
		wantErr  bool
	}{
		{"empty", map[string]any{}, false},
		{"delay", map[string]any{"delay": "10ms"}, false},
		{"corpus size", map[string]any{"corpus_size": float64(12)}, false},
		{"bad delay", map[string]any{"delay": "soon"}, true},
		{"negative delay", map[string]any{"delay": "-1s"}, true},
		{"fractional size", map[string]any{"corpus_size": 1.5}, true},
		{"size too big", map[string]any{"corpus_size": float64(10001)}, true},
		{"unknown key", map[string]any{"api_key": "x"}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := New(slog.New(slog.DiscardHandler))
			_, err := e.Configure(context.Background(), &protocol.ConfigureRequest{Settings: tc.settings})
			if tc.wantErr {
				require.ErrorIs(t, err, protocol.ErrBadRequest)
				return
			}
			require.NoError(t, err)
		})
	}
}

func TestSearchPagesCoverEveryHit(t *testing.T) {
	t.Parallel()
	e := New(slog.New(slog.DiscardHandler))
	ctx := context.Background()
	seen := map[string]bool{}
	cursor := ""
	for {
		page, err := e.Search(ctx, &source.SearchRequest{Query: "protein", Cursor: cursor, PageSize: 7})
		require.NoError(t, err)
		for _, p := range page.Papers {
			require.NoError(t, p.Validate())
			require.False(t, seen[p.IDs.DOI], "duplicate %s", p.IDs.DOI)
			seen[p.IDs.DOI] = true
		}
		require.EqualValues(t, 33, page.TotalEstimate)
		if page.NextCursor == "" {
			break
		}
		cursor = page.NextCursor
	}
	require.Len(t, seen, 33) // every sixth of 200 papers is on protein structure
}
