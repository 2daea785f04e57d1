package config

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// loadErr loads env and returns the refusal's variables and text.
func loadErr(t *testing.T, env map[string]string) ([]string, string) {
	t.Helper()
	_, err := Load(func(name string) (string, bool) { v, ok := env[name]; return v, ok })
	if err == nil {
		return nil, ""
	}
	var errs Errors
	require.ErrorAs(t, err, &errs)
	return errs.Variables(), err.Error()
}

func TestWeakKeysAreRefusedInProduction(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, key, want string
	}{
		{"alphabet run", "abcdefghijklmnopqrstuvwxyz0123456789", "run of neighbouring characters"},
		{"digits and letters run", "0123456789abcdefghijklmnopqrstuv", "run of neighbouring characters"},
		{"descending run", "zyxwvutsrqponmlkjihgfedcba9876543210", "run of neighbouring characters"},
		{"repeated hex pattern", strings.Repeat("0123456789abcdef", 3), "repeats a short pattern"},
		{"repeated phrase", strings.Repeat("Tr0ub4dor&3xZq!", 3), "repeats a short pattern"},
		{"repeated phrase, changed at the end", strings.Repeat("Tr0ub4dor&3x", 3) + "Q7", "repeats a short pattern"},
		{"repeated phrase, case changed", "LightningBolt97xQ" + "lightningbolt97xq", "repeats a short pattern"},
		{"few characters", "passwordpasswd1234drowssap4321pd", "different characters"},
		{"few hex digits", "ac89ec900ce06428829480a6624ceea6a942", "different characters"},
	} {
		for _, name := range []string{"SERVICE_API_KEY", "SERVICE_MODEL_HMAC_KEY"} {
			t.Run(tc.name+" as "+name, func(t *testing.T) {
				t.Parallel()
				// Strong enough for the rules everywhere, so only production refuses it.
				require.NoError(t, checkKeyStrength(tc.key), "the case must pass the older rules")
				vars, text := loadErr(t, prodEnv(map[string]string{name: tc.key}))
				require.Equal(t, []string{name}, vars, text)
				require.Contains(t, text, tc.want)
				require.Contains(t, text, "openssl rand -hex 32")
				require.NotContains(t, text, tc.key)

				vars, text = loadErr(t, devEnv(map[string]string{name: tc.key}))
				require.Nil(t, vars, "outside production the key is accepted: %s", text)
			})
		}
	}
}

func TestRandomKeysPassInProduction(t *testing.T) {
	t.Parallel()
	gen := map[string]func([]byte) string{
		"openssl rand -hex 32":    hex.EncodeToString,
		"openssl rand -base64 32": base64.StdEncoding.EncodeToString,
		"32 bytes, URL base64":    base64.RawURLEncoding.EncodeToString,
	}
	for name, enc := range gen {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			for range 2000 {
				b := make([]byte, 32)
				_, _ = rand.Read(b)
				k := enc(b)
				require.NoError(t, checkKeyStrength(k), k)
				require.NoError(t, checkKeyPattern(k), k)
			}
		})
	}
}

func TestKeysMustNotShareAValueInProduction(t *testing.T) {
	t.Parallel()
	api, hmac := testKey("api"), testKey("hmac")
	for _, tc := range []struct {
		name     string
		env      map[string]string
		wantVars []string
		wantText string
	}{
		{"HMAC key is the API key in other case", map[string]string{"SERVICE_MODEL_HMAC_KEY": strings.ToUpper(api)},
			[]string{"SERVICE_MODEL_HMAC_KEY"}, "config: SERVICE_MODEL_HMAC_KEY: must not have the same value as SERVICE_API_KEY (case is ignored)"},
		{"config key is the API key", map[string]string{"SERVICE_CONFIG_KEY": api},
			[]string{"SERVICE_CONFIG_KEY"}, "must not have the same value as SERVICE_API_KEY"},
		{"HMAC key is the config key", map[string]string{"SERVICE_CONFIG_KEY": strings.ToUpper(hmac)},
			[]string{"SERVICE_MODEL_HMAC_KEY"}, "must not have the same value as SERVICE_CONFIG_KEY"},
		{"infra ingest key is the HMAC key", map[string]string{"INFRA_INGEST_KEY": hmac},
			[]string{"INFRA_INGEST_KEY"}, "must not have the same value as SERVICE_MODEL_HMAC_KEY"},
		{"gateway salt is the API key", map[string]string{"GATEWAY_SALT_KEY": api},
			[]string{"GATEWAY_SALT_KEY"}, "must not have the same value as SERVICE_API_KEY"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			vars, text := loadErr(t, prodEnv(tc.env))
			require.Equal(t, tc.wantVars, vars, text)
			require.Contains(t, text, tc.wantText)
			require.Len(t, strings.Split(text, "\n"), 1)
			require.NotContains(t, strings.ToLower(text), api)
			require.NotContains(t, strings.ToLower(text), hmac)
		})
	}
	vars, text := loadErr(t, devEnv(map[string]string{"SERVICE_API_KEY": api, "SERVICE_MODEL_HMAC_KEY": strings.ToUpper(api)}))
	require.Nil(t, vars, "outside production keys may share a value: %s", text)
}
