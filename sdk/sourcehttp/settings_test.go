package sourcehttp

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lectern-research/lectern/sdk/protocol"
)

func TestDurationSettings(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name         string
		v            any
		want         time.Duration
		wantErr      bool
		wantPositive bool // PositiveDurationSetting accepts it too
	}{
		{"string", "3s", 3 * time.Second, false, true},
		{"milliseconds", "250ms", 250 * time.Millisecond, false, true},
		{"seconds as a number", 1.5, 1500 * time.Millisecond, false, true},
		{"zero", "0s", 0, false, false},
		{"zero number", float64(0), 0, false, false},
		{"negative", "-1s", 0, true, false},
		{"negative number", float64(-2), 0, true, false},
		{"not a duration", "soon", 0, true, false},
		{"bool", true, 0, true, false},
		{"nil", nil, 0, true, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			d, err := DurationSetting("rate_interval", tc.v)
			if tc.wantErr {
				require.ErrorIs(t, err, protocol.ErrBadRequest)
				require.Contains(t, err.Error(), "setting rate_interval")
			} else {
				require.NoError(t, err)
				require.Equal(t, tc.want, d)
			}
			d, err = PositiveDurationSetting("timeout", tc.v)
			if !tc.wantPositive {
				require.ErrorIs(t, err, protocol.ErrBadRequest)
				require.Contains(t, err.Error(), "setting timeout")
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, d)
		})
	}
}

func TestIntSetting(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		v       any
		want    int
		wantErr bool
	}{
		{"in range", float64(4), 4, false},
		{"low bound", float64(1), 1, false},
		{"high bound", float64(20), 20, false},
		{"below", float64(0), 0, true},
		{"above", float64(21), 0, true},
		{"fraction", 1.5, 0, true},
		{"string", "3", 0, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			n, err := IntSetting("max_attempts", tc.v, 1, 20)
			if tc.wantErr {
				require.ErrorIs(t, err, protocol.ErrBadRequest)
				require.Contains(t, err.Error(), "setting max_attempts must be a whole number from 1 to 20")
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, n)
		})
	}
}

func TestURLSetting(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		v       any
		wantErr bool
	}{
		{"https", "https://api.example.org/v1/", false},
		{"http with port", "http://127.0.0.1:8080", false},
		{"relative", "api.example.org", true},
		{"path only", "/graph", true},
		{"ftp", "ftp://example.org", true},
		{"not a string", 42.0, true},
		{"unparsable", "http://[::1", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			u, err := URLSetting("base_url", tc.v)
			if tc.wantErr {
				require.ErrorIs(t, err, protocol.ErrBadRequest)
				require.Contains(t, err.Error(), "setting base_url")
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.v, u.String())
		})
	}
}

func TestApplyPolicySetting(t *testing.T) {
	t.Parallel()
	var p Policy
	for key, v := range map[string]any{"rate_interval": "3s", "max_attempts": float64(4), "backoff_base": 0.5, "max_backoff": "10s", "timeout": "90s"} {
		ok, err := ApplyPolicySetting(&p, key, v)
		require.True(t, ok, key)
		require.NoError(t, err, key)
	}
	require.Equal(t, Policy{Interval: 3 * time.Second, MaxAttempts: 4, Backoff: 500 * time.Millisecond,
		MaxBackoff: 10 * time.Second, MaxRetryAfter: 10 * time.Second, Timeout: 90 * time.Second}, p)

	ok, err := ApplyPolicySetting(&p, "timeout", "0s")
	require.True(t, ok)
	require.ErrorContains(t, err, "setting timeout")
	ok, err = ApplyPolicySetting(&p, "base_url", "https://example.org")
	require.False(t, ok, "other keys are the plugin's")
	require.NoError(t, err)
}

func TestBackoffDoublesCapsAndSpreads(t *testing.T) {
	t.Parallel()
	for n, want := range map[int]time.Duration{0: 100 * time.Millisecond, 1: 200 * time.Millisecond, 2: 400 * time.Millisecond, 5: time.Second, 40: time.Second} {
		for range 50 {
			d := Backoff(100*time.Millisecond, time.Second, n)
			require.LessOrEqual(t, d, want, "retry %d", n)
			require.GreaterOrEqual(t, d, want*3/4, "retry %d", n)
		}
	}
	require.Zero(t, Backoff(0, time.Second, 3))
}
