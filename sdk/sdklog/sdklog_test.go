package sdklog

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestLinesUseTheKeysTheHostParses(t *testing.T) {
	t.Parallel()
	tests := []struct {
		level slog.Level
		want  string
	}{
		{LevelTrace, "trace"},
		{slog.LevelDebug, "debug"},
		{slog.LevelInfo, "info"},
		{slog.LevelWarn, "warn"},
		{slog.LevelError, "error"},
		{slog.LevelError + 4, "error"},
	}
	for _, tc := range tests {
		t.Run(tc.want, func(t *testing.T) {
			t.Parallel()
			var buf bytes.Buffer
			log := slog.New(NewHandler(&buf, &Options{Level: LevelTrace}))
			log.Log(t.Context(), tc.level, "hello", "paper", "10.1/x")
			var line map[string]any
			require.NoError(t, json.Unmarshal(buf.Bytes(), &line))
			require.Equal(t, tc.want, line["@level"])
			require.Equal(t, "hello", line["@message"])
			require.Equal(t, "10.1/x", line["paper"])
			ts, ok := line["@timestamp"].(string)
			require.True(t, ok)
			_, err := time.Parse(TimeLayout, ts)
			require.NoError(t, err)
			require.NotContains(t, line, "level")
			require.NotContains(t, line, "msg")
			require.NotContains(t, line, "time")
		})
	}
}
