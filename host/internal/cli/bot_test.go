package cli

import (
	"bytes"
	"context"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestBotRefusesWhatItCannotRun: lectern bot says, in a sentence, what it lacks:
// a usable API URL, or the shared database.
func TestBotRefusesWhatItCannotRun(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		args []string
		env  map[string]string
		want string
	}{
		{"bad api URL", []string{"--api", "ftp://example.org"}, productionEnv(nil), "--api / BOT_API_URL"},
		{"no database URL", nil, map[string]string{"SERVICE_API_KEY": goodAPIKey}, "lectern bot needs DATABASE_URL"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var stdout, stderr bytes.Buffer
			code := Run(context.Background(), append([]string{"bot"}, tc.args...), lookup(tc.env), &stdout, &stderr)
			require.Equal(t, 2, code, stderr.String())
			require.Contains(t, stderr.String(), tc.want)
		})
	}
}

// TestBotNeedsAMessengerPlugin: a host with no messenger plugin has no bot, and
// newBot says so (serve then runs without one).
func TestBotNeedsAMessengerPlugin(t *testing.T) {
	t.Parallel()
	_, err := newBot(nil, nil, nil, nil, nil)
	require.ErrorIs(t, err, errNoMessenger)
}
