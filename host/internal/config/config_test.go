package config

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/netip"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// testKey returns a deterministic, high-entropy 64-character hex key.
func testKey(label string) string {
	sum := sha256.Sum256([]byte("lectern test key: " + label))
	return hex.EncodeToString(sum[:])
}

const unset = "\x00unset" // in an override map, removes the variable

// merge copies base and applies overrides; the value unset deletes a key.
func merge(base, overrides map[string]string) map[string]string {
	out := make(map[string]string, len(base)+len(overrides))
	for k, v := range base {
		out[k] = v
	}
	for k, v := range overrides {
		if v == unset {
			delete(out, k)
			continue
		}
		out[k] = v
	}
	return out
}

// prodEnv is the smallest environment that loads in production.
func prodEnv(overrides map[string]string) map[string]string {
	return merge(map[string]string{
		"ENVIRONMENT":            "production",
		"SERVICE_API_KEY":        testKey("api"),
		"SERVICE_CONFIG_KEY":     testKey("config"),
		"SERVICE_MODEL_HMAC_KEY": testKey("hmac"),
	}, overrides)
}

// devEnv is a development environment with the given variables.
func devEnv(overrides map[string]string) map[string]string {
	return merge(map[string]string{}, overrides)
}

// digest returns SHA-256 of s.
func digest(s string) []byte {
	sum := sha256.Sum256([]byte(s))
	return sum[:]
}

type loadCase struct {
	name string
	// env is the environment; "{dir}" in a value becomes the case's
	// temporary directory.
	env map[string]string
	// files are written into the temporary directory before loading.
	files map[string]string
	// wantVars is the exact list of variables named by the errors, in
	// order; nil means Load must succeed.
	wantVars []string
	// wantText, when set, must appear in the error text.
	wantText string
	// wantIs, when set, must match the error with errors.Is.
	wantIs error
	// check inspects a successful Config.
	check func(t *testing.T, c *Config)
}

func loadCases() []loadCase {
	api := testKey("api")
	devFlagNames := []string{envDevMode, envAuthBypass, envErrorDetail, envCORSOpen, envSMTPLogOnly, envCryptoRelaxed}
	smtpVars := []string{"SMTP_HOST", "SMTP_PORT", "SMTP_USER", "SMTP_PASS", "SMTP_FROM", "SMTP_REPLY_TO", "SMTP_FROM_NAME"}

	cases := []loadCase{
		// Defaults.
		{
			name: "defaults",
			env:  devEnv(nil),
			check: func(t *testing.T, c *Config) {
				require.Equal(t, "development", c.Environment)
				require.False(t, c.IsProduction())
				require.Equal(t, "127.0.0.1:3001", c.ListenAddr)
				require.Equal(t, "http://localhost:3001", c.PublicBaseURL)
				require.Equal(t, slog.LevelInfo, c.LogLevel)
				require.False(t, c.DatabaseURL.IsSet())
				require.Equal(t, ".lectern", c.DataDir)
				require.Equal(t, "plugins.toml", c.PluginsFile)
				require.Empty(t, c.CORSOrigins)
				require.False(t, c.ServiceAPIKey.IsSet())
				require.False(t, c.ServiceConfigKey.IsSet())
				require.False(t, c.ServiceConfigKeyOld.IsSet())
				require.False(t, c.ServiceModelHMACKey.IsSet())
				require.False(t, c.GatewaySaltKey.IsSet())
				require.Equal(t, "", c.SMTPHost)
				require.Equal(t, 587, c.SMTPPort)
				require.False(t, c.SMTPConfigured())
				require.False(t, c.SMTPPass.IsSet())
				require.False(t, c.AllowPrivateSMTPHost)
				require.Equal(t, []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")}, c.OwnerOverrideAllowedCIDRs)
				require.False(t, c.InfraIngestKey.IsSet())
				require.Empty(t, c.InfraIngestAllowedCIDRs)
				require.Equal(t, []string{"dashboard"}, c.TrustedProxyHosts)
				require.False(t, c.DevMode || c.DevAuthBypass || c.DevErrorDetail || c.DevCORSOpen || c.DevSMTPLogOnly || c.DevCryptoRelaxed)
				require.Empty(t, c.DeprecatedSet)
			},
		},
		{
			name: "strong key outside production",
			env:  devEnv(map[string]string{"SERVICE_API_KEY": api}),
			check: func(t *testing.T, c *Config) {
				require.Equal(t, api, c.ServiceAPIKey.Value())
			},
		},

		// Production: valid configurations.
		{
			name: "production minimal",
			env:  prodEnv(nil),
			check: func(t *testing.T, c *Config) {
				require.True(t, c.IsProduction())
				require.Equal(t, testKey("hmac"), c.ServiceModelHMACKey.Value())
			},
		},
		{
			name: "production full",
			env: prodEnv(map[string]string{
				"ENVIRONMENT":                  "  Production ",
				"LISTEN_ADDR":                  "0.0.0.0:8080",
				"PUBLIC_BASE_URL":              "https://Lectern.Example.org/app/",
				"LOG_LEVEL":                    "WARN",
				"DATABASE_URL":                 "postgres://lectern:pw@db:5432/lectern?sslmode=require",
				"LECTERN_DATA_DIR":             "/var/lib/lectern",
				"LECTERN_PLUGINS_FILE":         "/etc/lectern/plugins.toml",
				"CORS_ORIGINS":                 "https://lectern.example.org, https://App.Example.org:443/",
				"SERVICE_CONFIG_KEY_OLD":       testKey("old config"),
				"GATEWAY_SALT_KEY":             testKey("salt"),
				"SMTP_HOST":                    "smtp.example.org",
				"SMTP_PORT":                    "465",
				"SMTP_USER":                    "lectern",
				"SMTP_PASS":                    "correct horse battery staple",
				"SMTP_FROM":                    "lectern@example.org",
				"SMTP_REPLY_TO":                "help@example.org",
				"SMTP_FROM_NAME":               "Lectern",
				"ALLOW_PRIVATE_SMTP_HOST":      "no",
				"OWNER_OVERRIDE_ALLOWED_CIDRS": "127.0.0.0/8, 10.137.241.0/24",
				"INFRA_INGEST_KEY":             testKey("infra"),
				"INFRA_INGEST_ALLOWED_CIDRS":   "10.137.241.7",
				"TRUSTED_PROXY_HOSTS":          "dashboard, 10.137.241.2",
				"DEV_MODE":                     "false",
				"DEV_AUTH_BYPASS":              "0",
				"DEV_ERROR_DETAIL":             "off",
				"DEV_CORS_OPEN":                "FALSE",
				"DEV_SMTP_LOG_ONLY":            "No",
				"DEV_CRYPTO_RELAXED":           " false ",
			}),
			check: func(t *testing.T, c *Config) {
				require.True(t, c.IsProduction())
				require.Equal(t, "production", c.Environment)
				require.Equal(t, "0.0.0.0:8080", c.ListenAddr)
				require.Equal(t, "https://lectern.example.org/app", c.PublicBaseURL)
				require.Equal(t, slog.LevelWarn, c.LogLevel)
				require.True(t, c.DatabaseURL.IsSet())
				require.Equal(t, []string{"https://lectern.example.org", "https://app.example.org"}, c.CORSOrigins)
				require.True(t, c.SMTPConfigured())
				require.Equal(t, 465, c.SMTPPort)
				require.Equal(t, "correct horse battery staple", c.SMTPPass.Value())
				require.Equal(t, []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("10.137.241.0/24")}, c.OwnerOverrideAllowedCIDRs)
				require.Equal(t, []netip.Prefix{netip.MustParsePrefix("10.137.241.7/32")}, c.InfraIngestAllowedCIDRs)
				require.Equal(t, []string{"dashboard", "10.137.241.2"}, c.TrustedProxyHosts)
			},
		},

		// Production: missing and short secrets.
		{name: "production without SERVICE_API_KEY", env: prodEnv(map[string]string{"SERVICE_API_KEY": unset}),
			wantVars: []string{"SERVICE_API_KEY"}, wantText: "is required when ENVIRONMENT=production"},
		{name: "production with empty SERVICE_API_KEY", env: prodEnv(map[string]string{"SERVICE_API_KEY": ""}),
			wantVars: []string{"SERVICE_API_KEY"}},
		{name: "production with short SERVICE_API_KEY", env: prodEnv(map[string]string{"SERVICE_API_KEY": "k3Y-9xQ!aZ2m"}),
			wantVars: []string{"SERVICE_API_KEY"}, wantText: "config: SERVICE_API_KEY: must be at least 32 characters (got 12)"},
		{name: "production with low-entropy SERVICE_API_KEY", env: prodEnv(map[string]string{"SERVICE_API_KEY": strings.Repeat("a", 40)}),
			wantVars: []string{"SERVICE_API_KEY"}, wantText: "entropy"},
		{name: "production without SERVICE_CONFIG_KEY", env: prodEnv(map[string]string{"SERVICE_CONFIG_KEY": unset}),
			wantVars: []string{"SERVICE_CONFIG_KEY"}},
		{name: "production with short SERVICE_CONFIG_KEY", env: prodEnv(map[string]string{"SERVICE_CONFIG_KEY": "Zq7#pL0v"}),
			wantVars: []string{"SERVICE_CONFIG_KEY"}, wantText: "(got 8)"},
		{name: "production without SERVICE_MODEL_HMAC_KEY", env: prodEnv(map[string]string{"SERVICE_MODEL_HMAC_KEY": unset}),
			wantVars: []string{"SERVICE_MODEL_HMAC_KEY"}},
		{name: "production with short SERVICE_MODEL_HMAC_KEY", env: prodEnv(map[string]string{"SERVICE_MODEL_HMAC_KEY": "hM4c-k3y-7"}),
			wantVars: []string{"SERVICE_MODEL_HMAC_KEY"}, wantText: "(got 10)"},
		{name: "production without any key", env: devEnv(map[string]string{"ENVIRONMENT": "production"}),
			wantVars: []string{"SERVICE_API_KEY", "SERVICE_CONFIG_KEY", "SERVICE_MODEL_HMAC_KEY"}},
		{name: "production ignores DEV_CRYPTO_RELAXED for key checks",
			env:      prodEnv(map[string]string{"SERVICE_API_KEY": "k3Y-9xQ!aZ2m", "DEV_CRYPTO_RELAXED": "true"}),
			wantVars: []string{"SERVICE_API_KEY", "DEV_CRYPTO_RELAXED"}},

		// Production: TRUSTED_PROXY_HOSTS.
		{name: "production with TRUSTED_PROXY_HOSTS *", env: prodEnv(map[string]string{"TRUSTED_PROXY_HOSTS": "*"}),
			wantVars: []string{"TRUSTED_PROXY_HOSTS"}},
		{name: "production with * among TRUSTED_PROXY_HOSTS", env: prodEnv(map[string]string{"TRUSTED_PROXY_HOSTS": "dashboard, *"}),
			wantVars: []string{"TRUSTED_PROXY_HOSTS"}},
		{name: "TRUSTED_PROXY_HOSTS * outside production", env: devEnv(map[string]string{"TRUSTED_PROXY_HOSTS": "*"}),
			check: func(t *testing.T, c *Config) { require.Equal(t, []string{"*"}, c.TrustedProxyHosts) }},

		// Production: DEV_MODE promotion and explicit values.
		{name: "production with DEV_MODE promotes and refuses every flag",
			env:      prodEnv(map[string]string{"DEV_MODE": "true"}),
			wantVars: devFlagNames, wantText: "config: DEV_CORS_OPEN: must not be true when ENVIRONMENT=production (it was promoted to true by DEV_MODE=true)"},
		{name: "production with DEV_MODE and explicit false flags",
			env: prodEnv(map[string]string{"DEV_MODE": "true", "DEV_AUTH_BYPASS": "false", "DEV_ERROR_DETAIL": "false",
				"DEV_CORS_OPEN": "false", "DEV_SMTP_LOG_ONLY": "false", "DEV_CRYPTO_RELAXED": "false"}),
			wantVars: []string{envDevMode}},
		{name: "production with DEV_MODE and one explicit false",
			env:      prodEnv(map[string]string{"DEV_MODE": "on", "DEV_AUTH_BYPASS": "off"}),
			wantVars: []string{envDevMode, envErrorDetail, envCORSOpen, envSMTPLogOnly, envCryptoRelaxed}},

		// Everywhere: key length and entropy unless DEV_CRYPTO_RELAXED.
		{name: "short SERVICE_API_KEY outside production", env: devEnv(map[string]string{"SERVICE_API_KEY": "k3Y-9xQ!aZ2m"}),
			wantVars: []string{"SERVICE_API_KEY"}},
		{name: "short SERVICE_MODEL_HMAC_KEY outside production", env: devEnv(map[string]string{"SERVICE_MODEL_HMAC_KEY": "hM4c-k3y-7"}),
			wantVars: []string{"SERVICE_MODEL_HMAC_KEY"}},
		{name: "short SERVICE_CONFIG_KEY outside production", env: devEnv(map[string]string{"SERVICE_CONFIG_KEY": "Zq7#pL0v"}),
			wantVars: []string{"SERVICE_CONFIG_KEY"}},
		{name: "repetitive SERVICE_CONFIG_KEY", env: devEnv(map[string]string{"SERVICE_CONFIG_KEY": strings.Repeat("abc", 12)}),
			wantVars: []string{"SERVICE_CONFIG_KEY"}, wantText: "entropy"},
		{name: "repetitive SERVICE_CONFIG_KEY_OLD",
			env:      devEnv(map[string]string{"SERVICE_CONFIG_KEY": testKey("config"), "SERVICE_CONFIG_KEY_OLD": strings.Repeat("ab", 20)}),
			wantVars: []string{"SERVICE_CONFIG_KEY_OLD"}},
		{name: "short INFRA_INGEST_KEY", env: devEnv(map[string]string{"INFRA_INGEST_KEY": "infra"}),
			wantVars: []string{"INFRA_INGEST_KEY"}},
		{name: "DEV_CRYPTO_RELAXED accepts weak keys outside production",
			env: devEnv(map[string]string{"DEV_CRYPTO_RELAXED": "true", "SERVICE_API_KEY": "dev", "SERVICE_CONFIG_KEY": "aaaa",
				"SERVICE_MODEL_HMAC_KEY": "dev", "INFRA_INGEST_KEY": "x"}),
			check: func(t *testing.T, c *Config) { require.Equal(t, "dev", c.ServiceAPIKey.Value()) }},
		{name: "DEV_MODE relaxes crypto outside production",
			env:   devEnv(map[string]string{"DEV_MODE": "true", "SERVICE_API_KEY": "dev"}),
			check: func(t *testing.T, c *Config) { require.True(t, c.DevCryptoRelaxed) }},

		// Config key rotation.
		{name: "SERVICE_CONFIG_KEY_OLD without SERVICE_CONFIG_KEY", env: devEnv(map[string]string{"SERVICE_CONFIG_KEY_OLD": testKey("old")}),
			wantVars: []string{"SERVICE_CONFIG_KEY_OLD"}},
		{name: "SERVICE_CONFIG_KEY_OLD equal to SERVICE_CONFIG_KEY",
			env:      prodEnv(map[string]string{"SERVICE_CONFIG_KEY_OLD": testKey("config")}),
			wantVars: []string{"SERVICE_CONFIG_KEY_OLD"}, wantText: "must differ"},
		{name: "SERVICE_CONFIG_KEY_OLD during rotation", env: prodEnv(map[string]string{"SERVICE_CONFIG_KEY_OLD": testKey("old")}),
			check: func(t *testing.T, c *Config) { require.Equal(t, testKey("old"), c.ServiceConfigKeyOld.Value()) }},

		// SMTP pairing and values.
		{name: "SMTP_USER without SMTP_PASS", env: devEnv(map[string]string{"SMTP_HOST": "smtp.example.org", "SMTP_USER": "u"}),
			wantVars: []string{"SMTP_PASS"}},
		{name: "SMTP_PASS without SMTP_USER", env: devEnv(map[string]string{"SMTP_HOST": "smtp.example.org", "SMTP_PASS": "p4ssw0rd-secret"}),
			wantVars: []string{"SMTP_USER"}},
		{name: "SMTP_PORT out of range", env: devEnv(map[string]string{"SMTP_PORT": "70000"}), wantVars: []string{"SMTP_PORT"}},
		{name: "SMTP_PORT zero", env: devEnv(map[string]string{"SMTP_PORT": "0"}), wantVars: []string{"SMTP_PORT"}},
		{name: "SMTP_PORT not a number", env: devEnv(map[string]string{"SMTP_PORT": "smtp"}), wantVars: []string{"SMTP_PORT"}},
		{name: "SMTP_HOST with port", env: devEnv(map[string]string{"SMTP_HOST": "smtp.example.org:587"}), wantVars: []string{"SMTP_HOST"}},
		{name: "SMTP_FROM with display name", env: devEnv(map[string]string{"SMTP_FROM": "Lectern <lectern@example.org>"}),
			wantVars: []string{"SMTP_FROM"}},
		{name: "SMTP_REPLY_TO not an address", env: devEnv(map[string]string{"SMTP_REPLY_TO": "nobody"}), wantVars: []string{"SMTP_REPLY_TO"}},
		{name: "SMTP_FROM_NAME with a line break", env: devEnv(map[string]string{"SMTP_FROM_NAME": "Lectern\r\nBcc: x@example.org"}),
			wantVars: []string{"SMTP_FROM_NAME"}},
		{name: "SMTP configured", env: devEnv(map[string]string{"SMTP_HOST": "SMTP.Example.org", "SMTP_FROM": "lectern@example.org"}),
			check: func(t *testing.T, c *Config) {
				require.True(t, c.SMTPConfigured())
				require.Equal(t, "smtp.example.org", c.SMTPHost)
			}},

		// Bad bools.
		{name: "DEV_MODE not a bool", env: devEnv(map[string]string{"DEV_MODE": "maybe"}), wantVars: []string{envDevMode}},
		{name: "ALLOW_PRIVATE_SMTP_HOST empty", env: devEnv(map[string]string{"ALLOW_PRIVATE_SMTP_HOST": ""}),
			wantVars: []string{"ALLOW_PRIVATE_SMTP_HOST"}},
		{name: "DEV_CRYPTO_RELAXED typo", env: devEnv(map[string]string{"DEV_CRYPTO_RELAXED": "ture"}),
			wantVars: []string{envCryptoRelaxed}, wantText: `(got "ture")`},
		{name: "bools accept yes and ON", env: devEnv(map[string]string{"ALLOW_PRIVATE_SMTP_HOST": " YES ", "DEV_ERROR_DETAIL": "ON"}),
			check: func(t *testing.T, c *Config) {
				require.True(t, c.AllowPrivateSMTPHost)
				require.True(t, c.DevErrorDetail)
				require.False(t, c.DevAuthBypass)
			}},

		// Bad CIDRs.
		{name: "OWNER_OVERRIDE_ALLOWED_CIDRS prefix too long", env: devEnv(map[string]string{"OWNER_OVERRIDE_ALLOWED_CIDRS": "10.0.0.0/33"}),
			wantVars: []string{"OWNER_OVERRIDE_ALLOWED_CIDRS"}},
		{name: "OWNER_OVERRIDE_ALLOWED_CIDRS not an address", env: devEnv(map[string]string{"OWNER_OVERRIDE_ALLOWED_CIDRS": "localhost"}),
			wantVars: []string{"OWNER_OVERRIDE_ALLOWED_CIDRS"}},
		{name: "OWNER_OVERRIDE_ALLOWED_CIDRS host bits set", env: devEnv(map[string]string{"OWNER_OVERRIDE_ALLOWED_CIDRS": "10.0.0.1/8"}),
			wantVars: []string{"OWNER_OVERRIDE_ALLOWED_CIDRS"}, wantText: "did you mean 10.0.0.0/8?"},
		{name: "INFRA_INGEST_ALLOWED_CIDRS two bad entries", env: devEnv(map[string]string{"INFRA_INGEST_ALLOWED_CIDRS": "*, fe80::1%eth0, 10.0.0.0/8"}),
			wantVars: []string{"INFRA_INGEST_ALLOWED_CIDRS", "INFRA_INGEST_ALLOWED_CIDRS"}},
		{name: "empty OWNER_OVERRIDE_ALLOWED_CIDRS denies all", env: devEnv(map[string]string{"OWNER_OVERRIDE_ALLOWED_CIDRS": ""}),
			check: func(t *testing.T, c *Config) { require.Empty(t, c.OwnerOverrideAllowedCIDRs) }},
		{name: "CIDR list with bare addresses", env: devEnv(map[string]string{"INFRA_INGEST_ALLOWED_CIDRS": " 10.0.0.0/8, 192.168.1.5 ,, ::1 "}),
			check: func(t *testing.T, c *Config) {
				require.Equal(t, []netip.Prefix{
					netip.MustParsePrefix("10.0.0.0/8"),
					netip.MustParsePrefix("192.168.1.5/32"),
					netip.MustParsePrefix("::1/128"),
				}, c.InfraIngestAllowedCIDRs)
			}},
		{name: "TRUSTED_PROXY_HOSTS with a URL", env: devEnv(map[string]string{"TRUSTED_PROXY_HOSTS": "http://dashboard"}),
			wantVars: []string{"TRUSTED_PROXY_HOSTS"}},
		{name: "TRUSTED_PROXY_HOSTS mixed", env: devEnv(map[string]string{"TRUSTED_PROXY_HOSTS": "Proxy.local, 10.0.0.0/8,10.1.2.3"}),
			check: func(t *testing.T, c *Config) {
				require.Equal(t, []string{"proxy.local", "10.0.0.0/8", "10.1.2.3"}, c.TrustedProxyHosts)
			}},

		// Bad CORS origins.
		{name: "CORS_ORIGINS *", env: devEnv(map[string]string{"CORS_ORIGINS": "*"}),
			wantVars: []string{"CORS_ORIGINS"}, wantText: "DEV_CORS_OPEN"},
		{name: "CORS_ORIGINS ftp", env: devEnv(map[string]string{"CORS_ORIGINS": "ftp://example.org"}), wantVars: []string{"CORS_ORIGINS"}},
		{name: "CORS_ORIGINS with path", env: devEnv(map[string]string{"CORS_ORIGINS": "https://example.org/app"}), wantVars: []string{"CORS_ORIGINS"}},
		{name: "CORS_ORIGINS with user info", env: devEnv(map[string]string{"CORS_ORIGINS": "https://me@example.org"}), wantVars: []string{"CORS_ORIGINS"}},
		{name: "CORS_ORIGINS with query", env: devEnv(map[string]string{"CORS_ORIGINS": "https://example.org?x=1"}), wantVars: []string{"CORS_ORIGINS"}},
		{name: "CORS_ORIGINS with fragment", env: devEnv(map[string]string{"CORS_ORIGINS": "https://example.org#top"}), wantVars: []string{"CORS_ORIGINS"}},
		{name: "CORS_ORIGINS without scheme", env: devEnv(map[string]string{"CORS_ORIGINS": "example.org"}), wantVars: []string{"CORS_ORIGINS"}},
		{name: "CORS_ORIGINS two bad of three", env: devEnv(map[string]string{"CORS_ORIGINS": "https://ok.example.org, *, http://x/y"}),
			wantVars: []string{"CORS_ORIGINS", "CORS_ORIGINS"}},
		{name: "CORS_ORIGINS normalized", env: devEnv(map[string]string{"CORS_ORIGINS": "HTTPS://App.Example.org:443/, http://localhost:5173, http://a.example:80"}),
			check: func(t *testing.T, c *Config) {
				require.Equal(t, []string{"https://app.example.org", "http://localhost:5173", "http://a.example"}, c.CORSOrigins)
			}},

		// Other values.
		{name: "ENVIRONMENT typo", env: devEnv(map[string]string{"ENVIRONMENT": "prod"}), wantVars: []string{envEnvironment}},
		{name: "LISTEN_ADDR without port", env: devEnv(map[string]string{"LISTEN_ADDR": "3001"}), wantVars: []string{"LISTEN_ADDR"}},
		{name: "LISTEN_ADDR named port", env: devEnv(map[string]string{"LISTEN_ADDR": "localhost:http"}), wantVars: []string{"LISTEN_ADDR"}},
		{name: "LISTEN_ADDR port too large", env: devEnv(map[string]string{"LISTEN_ADDR": ":65536"}), wantVars: []string{"LISTEN_ADDR"}},
		{name: "LISTEN_ADDR any port", env: devEnv(map[string]string{"LISTEN_ADDR": "[::1]:0"}),
			check: func(t *testing.T, c *Config) { require.Equal(t, "[::1]:0", c.ListenAddr) }},
		{name: "PUBLIC_BASE_URL relative", env: devEnv(map[string]string{"PUBLIC_BASE_URL": "/lectern"}), wantVars: []string{"PUBLIC_BASE_URL"}},
		{name: "PUBLIC_BASE_URL with user info", env: devEnv(map[string]string{"PUBLIC_BASE_URL": "https://u:p@example.org"}),
			wantVars: []string{"PUBLIC_BASE_URL"}},
		{name: "PUBLIC_BASE_URL with query", env: devEnv(map[string]string{"PUBLIC_BASE_URL": "https://example.org/?a=b"}),
			wantVars: []string{"PUBLIC_BASE_URL"}},
		{name: "PUBLIC_BASE_URL with fragment", env: devEnv(map[string]string{"PUBLIC_BASE_URL": "https://example.org/#x"}),
			wantVars: []string{"PUBLIC_BASE_URL"}},
		{name: "PUBLIC_BASE_URL javascript", env: devEnv(map[string]string{"PUBLIC_BASE_URL": "javascript:alert(1)"}),
			wantVars: []string{"PUBLIC_BASE_URL"}},
		{name: "LOG_LEVEL unknown", env: devEnv(map[string]string{"LOG_LEVEL": "verbose"}), wantVars: []string{"LOG_LEVEL"}},
		{name: "LOG_LEVEL debug", env: devEnv(map[string]string{"LOG_LEVEL": "Debug"}),
			check: func(t *testing.T, c *Config) { require.Equal(t, slog.LevelDebug, c.LogLevel) }},
		{name: "LECTERN_DATA_DIR empty", env: devEnv(map[string]string{"LECTERN_DATA_DIR": " "}), wantVars: []string{"LECTERN_DATA_DIR"}},
		{name: "MESSENGER_CHAT_ID accepted and ignored", env: devEnv(map[string]string{"MESSENGER_CHAT_ID": "12345"}),
			check: func(t *testing.T, c *Config) { require.Equal(t, []string{"MESSENGER_CHAT_ID"}, c.DeprecatedSet) }},
		{name: "errors come in table order",
			env: devEnv(map[string]string{"DEV_MODE": "maybe", "SMTP_HOST": "", "LISTEN_ADDR": "x", "ENVIRONMENT": "prod",
				"SERVICE_API_KEY": "short-but-set!"}),
			wantVars: []string{envEnvironment, "LISTEN_ADDR", "SERVICE_API_KEY", "SMTP_HOST", envDevMode}},

		// DEV_MODE outside production.
		{name: "DEV_MODE promotes every flag outside production", env: devEnv(map[string]string{"DEV_MODE": "1"}),
			check: func(t *testing.T, c *Config) {
				require.True(t, c.DevMode)
				require.True(t, c.DevAuthBypass)
				require.True(t, c.DevErrorDetail)
				require.True(t, c.DevCORSOpen)
				require.True(t, c.DevSMTPLogOnly)
				require.True(t, c.DevCryptoRelaxed)
			}},
		{name: "explicit false beats DEV_MODE outside production", env: devEnv(map[string]string{"DEV_MODE": "yes", "DEV_CORS_OPEN": "false", "DEV_AUTH_BYPASS": "0"}),
			check: func(t *testing.T, c *Config) {
				require.False(t, c.DevCORSOpen)
				require.False(t, c.DevAuthBypass)
				require.True(t, c.DevErrorDetail)
				require.True(t, c.DevSMTPLogOnly)
				require.True(t, c.DevCryptoRelaxed)
			}},
		{name: "explicit true without DEV_MODE", env: devEnv(map[string]string{"DEV_SMTP_LOG_ONLY": "true"}),
			check: func(t *testing.T, c *Config) {
				require.False(t, c.DevMode)
				require.True(t, c.DevSMTPLogOnly)
				require.False(t, c.DevCORSOpen)
			}},

		// _FILE variants.
		{name: "SERVICE_API_KEY_FILE", env: devEnv(map[string]string{"SERVICE_API_KEY_FILE": "{dir}/api"}),
			files: map[string]string{"api": api + "\n"},
			check: func(t *testing.T, c *Config) { require.Equal(t, api, c.ServiceAPIKey.Value()) }},
		{name: "production from _FILE variants",
			env: prodEnv(map[string]string{
				"SERVICE_API_KEY": unset, "SERVICE_CONFIG_KEY": unset, "SERVICE_MODEL_HMAC_KEY": unset,
				"SERVICE_API_KEY_FILE": "{dir}/api", "SERVICE_CONFIG_KEY_FILE": "{dir}/config",
				"SERVICE_MODEL_HMAC_KEY_FILE": "{dir}/hmac", "DATABASE_URL_FILE": "{dir}/db",
				"SMTP_HOST": "smtp.example.org", "SMTP_USER": "lectern", "SMTP_PASS_FILE": "{dir}/smtp",
			}),
			files: map[string]string{"api": api + "\r\n", "config": testKey("config"), "hmac": testKey("hmac") + "\n",
				"db": "postgres://u:pw@db/lectern\n", "smtp": "s3cret-pass\n"},
			check: func(t *testing.T, c *Config) {
				require.Equal(t, api, c.ServiceAPIKey.Value())
				require.Equal(t, testKey("config"), c.ServiceConfigKey.Value())
				require.Equal(t, testKey("hmac"), c.ServiceModelHMACKey.Value())
				require.Equal(t, "postgres://u:pw@db/lectern", c.DatabaseURL.Value())
				require.Equal(t, "s3cret-pass", c.SMTPPass.Value())
			}},
		{name: "both SERVICE_API_KEY and SERVICE_API_KEY_FILE",
			env:      devEnv(map[string]string{"SERVICE_API_KEY": api, "SERVICE_API_KEY_FILE": "{dir}/api"}),
			files:    map[string]string{"api": api},
			wantVars: []string{"SERVICE_API_KEY"}, wantText: "set only one"},
		{name: "missing secret file in production",
			env:      prodEnv(map[string]string{"SERVICE_API_KEY": unset, "SERVICE_API_KEY_FILE": "{dir}/nope"}),
			wantVars: []string{"SERVICE_API_KEY_FILE"}, wantIs: fs.ErrNotExist},
		{name: "empty secret file", env: devEnv(map[string]string{"GATEWAY_SALT_KEY_FILE": "{dir}/salt"}),
			files: map[string]string{"salt": "\n"}, wantVars: []string{"GATEWAY_SALT_KEY_FILE"}},
		{name: "secret file is a directory", env: devEnv(map[string]string{"INFRA_INGEST_KEY_FILE": "{dir}"}),
			wantVars: []string{"INFRA_INGEST_KEY_FILE"}},
		{name: "empty _FILE variable is unset", env: devEnv(map[string]string{"SERVICE_API_KEY_FILE": ""}),
			check: func(t *testing.T, c *Config) { require.False(t, c.ServiceAPIKey.IsSet()) }},
		{name: "short key from file", env: devEnv(map[string]string{"SERVICE_MODEL_HMAC_KEY_FILE": "{dir}/hmac"}),
			files: map[string]string{"hmac": "hM4c-k3y-7\n"}, wantVars: []string{"SERVICE_MODEL_HMAC_KEY"}},
	}

	// HMAC key derived from the API key, in every encoding.
	derived := map[string]string{
		"equal to the API key":  api,
		"model-signing: prefix": "model-signing:" + api,
	}
	for label, input := range map[string]string{"sha256(model-signing:+key)": "model-signing:" + api, "sha256(key)": api} {
		sum := digest(input)
		derived[label+" hex"] = hex.EncodeToString(sum)
		derived[label+" upper hex"] = strings.ToUpper(hex.EncodeToString(sum))
		derived[label+" std base64"] = base64.StdEncoding.EncodeToString(sum)
		derived[label+" raw std base64"] = base64.RawStdEncoding.EncodeToString(sum)
		derived[label+" url base64"] = base64.URLEncoding.EncodeToString(sum)
		derived[label+" raw url base64"] = base64.RawURLEncoding.EncodeToString(sum)
	}
	for label, hmacKey := range derived {
		cases = append(cases, loadCase{
			name:     "production HMAC key derived: " + label,
			env:      prodEnv(map[string]string{"SERVICE_MODEL_HMAC_KEY": hmacKey}),
			wantVars: []string{"SERVICE_MODEL_HMAC_KEY"}, wantText: "must not be derived from SERVICE_API_KEY",
		})
	}
	cases = append(cases, loadCase{
		name:  "derived HMAC key is allowed outside production",
		env:   devEnv(map[string]string{"SERVICE_API_KEY": api, "SERVICE_MODEL_HMAC_KEY": "model-signing:" + api}),
		check: func(t *testing.T, c *Config) { require.True(t, c.ServiceModelHMACKey.IsSet()) },
	})

	// Each of the five promotable DEV_* flags set explicitly in production
	// (DEV_MODE itself is covered by the promotion cases above).
	for _, flag := range devFlagNames[1:] {
		cases = append(cases, loadCase{
			name:     "production with " + flag,
			env:      prodEnv(map[string]string{flag: "true"}),
			wantVars: []string{flag}, wantText: "config: " + flag + ": must not be true when ENVIRONMENT=production",
		})
	}

	// Each SMTP_* variable set to an explicit empty or blank value.
	for _, v := range smtpVars {
		for _, blank := range []string{"", "  "} {
			cases = append(cases, loadCase{
				name:     fmt.Sprintf("%s=%q", v, blank),
				env:      devEnv(map[string]string{v: blank}),
				wantVars: []string{v}, wantText: "config: " + v + ": " + smtpEmptyRule,
			})
		}
	}
	return cases
}

func TestLoad(t *testing.T) {
	t.Parallel()

	for _, tc := range loadCases() {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()

			dir := t.TempDir()
			for name, content := range tc.files {
				require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600))
			}
			env := make(map[string]string, len(tc.env))
			for k, v := range tc.env {
				env[k] = strings.ReplaceAll(v, "{dir}", dir)
			}
			lookup := func(name string) (string, bool) {
				v, ok := env[name]
				return v, ok
			}

			cfg, err := Load(lookup)
			if tc.wantVars == nil {
				require.NoError(t, err)
				require.NotNil(t, cfg)
				if tc.check != nil {
					tc.check(t, cfg)
				}
				return
			}

			require.Error(t, err)
			require.Nil(t, cfg)
			var errs Errors
			require.ErrorAs(t, err, &errs)
			require.Equal(t, tc.wantVars, errs.Variables())

			lines := strings.Split(err.Error(), "\n")
			require.Len(t, lines, len(errs))
			linePattern := regexp.MustCompile(`^config: [A-Z_]+: \S.*$`)
			for _, line := range lines {
				require.Regexp(t, linePattern, line)
			}
			if tc.wantText != "" {
				require.Contains(t, err.Error(), tc.wantText)
			}
			if tc.wantIs != nil {
				require.ErrorIs(t, err, tc.wantIs)
			}

			// No secret value may appear in the error text.
			for _, o := range Options() {
				if !o.Secret {
					continue
				}
				if v := env[o.Name]; strings.TrimSpace(v) != "" {
					require.NotContains(t, err.Error(), v, "error leaks %s", o.Name)
				}
			}
			for _, content := range tc.files {
				if s := strings.TrimSpace(content); s != "" {
					require.NotContains(t, err.Error(), s)
				}
			}
		})
	}
}

func TestErrors(t *testing.T) {
	t.Parallel()

	env := map[string]string{"SERVICE_API_KEY": "k3Y-9xQ!aZ2m", "DEV_MODE": "maybe"}
	_, err := Load(func(name string) (string, bool) {
		v, ok := env[name]
		return v, ok
	})
	require.Error(t, err)

	tests := []struct {
		name  string
		check func(t *testing.T)
	}{
		{"joined lines", func(t *testing.T) {
			require.Equal(t,
				"config: SERVICE_API_KEY: must be at least 32 characters (got 12)\n"+
					`config: DEV_MODE: must be one of true, false, 1, 0, yes, no, on, off (got "maybe")`,
				err.Error())
		}},
		{"errors.As finds the first *Error", func(t *testing.T) {
			var e *Error
			require.ErrorAs(t, err, &e)
			require.Equal(t, "SERVICE_API_KEY", e.Variable)
			require.Equal(t, "must be at least 32 characters (got 12)", e.Rule)
		}},
		{"Unwrap returns every error", func(t *testing.T) {
			var errs Errors
			require.ErrorAs(t, err, &errs)
			require.Len(t, errs.Unwrap(), 2)
			require.Equal(t, []string{"SERVICE_API_KEY", envDevMode}, errs.Variables())
		}},
		{"Error keeps one line", func(t *testing.T) {
			e := &Error{Variable: "X", Rule: "a\nb\r\nc"}
			require.Equal(t, "config: X: a b c", e.Error())
		}},
		{"Error unwraps its cause", func(t *testing.T) {
			e := &Error{Variable: "X_FILE", Rule: "cannot read", Err: fs.ErrPermission}
			require.ErrorIs(t, e, fs.ErrPermission)
			require.ErrorIs(t, Errors{e}, fs.ErrPermission)
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.check(t)
		})
	}
}

func TestLoadNilLookup(t *testing.T) {
	t.Parallel()

	cfg, err := Load(nil)
	require.NoError(t, err)
	require.Equal(t, "development", cfg.Environment)
}

func TestOptions(t *testing.T) {
	t.Parallel()

	opts := Options()
	seen := make(map[string]bool)
	for _, o := range opts {
		t.Run(o.Name, func(t *testing.T) {
			t.Parallel()
			require.Regexp(t, `^[A-Z][A-Z0-9_]*$`, o.Name)
			require.NotEmpty(t, o.Description)
			require.NotEqual(t, "unknown", o.Kind.String())
			if o.Secret {
				require.Equal(t, KindString, o.Kind)
				require.Empty(t, o.Default, "secrets have no default")
				require.Equal(t, o.Name+"_FILE", o.FileName())
			} else {
				require.Empty(t, o.FileName())
			}
		})
		require.False(t, seen[o.Name], "duplicate option %s", o.Name)
		seen[o.Name] = true
	}

	// Options returns a copy.
	opts[0].Name = "CHANGED"
	require.NotEqual(t, "CHANGED", Options()[0].Name)
}

func TestDocsMentionEveryOption(t *testing.T) {
	t.Parallel()

	data, err := os.ReadFile(filepath.Join("..", "..", "..", "docs", "configuration.md"))
	require.NoError(t, err)
	docs := string(data)

	for _, o := range Options() {
		t.Run(o.Name, func(t *testing.T) {
			t.Parallel()
			require.Contains(t, docs, "`"+o.Name+"`")
			if o.Secret {
				require.Contains(t, docs, "`"+o.FileName()+"`")
			}
		})
	}
}

func TestSecretsNeverPrinted(t *testing.T) {
	t.Parallel()

	env := prodEnv(map[string]string{
		"DATABASE_URL":           "postgres://lectern:db-pass-0xDEADBEEF@db/lectern",
		"SERVICE_CONFIG_KEY_OLD": testKey("old"),
		"GATEWAY_SALT_KEY":       testKey("salt"),
		"SMTP_HOST":              "smtp.example.org",
		"SMTP_USER":              "lectern",
		"SMTP_PASS":              "smtp-pass-0xFEEDFACE",
		"INFRA_INGEST_KEY":       testKey("infra"),
	})
	cfg, err := Load(func(name string) (string, bool) {
		v, ok := env[name]
		return v, ok
	})
	require.NoError(t, err)

	var logged bytes.Buffer
	slog.New(slog.NewJSONHandler(&logged, nil)).Info("starting", "config", cfg)
	jsonBytes, err := json.Marshal(cfg)
	require.NoError(t, err)

	renders := map[string]string{
		"slog":   logged.String(),
		"json":   string(jsonBytes),
		"%v":     fmt.Sprintf("%v", cfg),
		"%+v":    fmt.Sprintf("%+v", *cfg),
		"%#v":    fmt.Sprintf("%#v", *cfg),
		"%s":     fmt.Sprintf("%s", cfg.ServiceAPIKey),
		"%q":     fmt.Sprintf("%q", cfg.ServiceAPIKey),
		"%x":     fmt.Sprintf("%x", cfg.ServiceAPIKey),
		"String": cfg.DatabaseURL.String(),
	}
	for name, out := range renders {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			for _, o := range Options() {
				if o.Secret && env[o.Name] != "" {
					require.NotContains(t, out, env[o.Name], "%s leaked", o.Name)
				}
			}
			require.NotContains(t, out, "DEADBEEF")
			require.NotContains(t, out, "FEEDFACE")
		})
	}

	t.Run("log line shows set and unset", func(t *testing.T) {
		t.Parallel()
		var line struct {
			Config map[string]string `json:"config"`
		}
		require.NoError(t, json.Unmarshal(logged.Bytes(), &line))
		require.Equal(t, "set", line.Config["SERVICE_API_KEY"])
		require.Equal(t, "set", line.Config["DATABASE_URL"])
		require.Equal(t, "set", line.Config["SMTP_PASS"])
		require.Equal(t, "production", line.Config["ENVIRONMENT"])
		require.Equal(t, "smtp.example.org", line.Config["SMTP_HOST"])
		require.Equal(t, "127.0.0.0/8,::1/128", line.Config["OWNER_OVERRIDE_ALLOWED_CIDRS"])
		require.Equal(t, "INFO", line.Config["LOG_LEVEL"])
	})
	t.Run("unset secret", func(t *testing.T) {
		t.Parallel()
		var s Secret
		require.Equal(t, "[unset]", s.String())
		require.False(t, s.IsSet())
		require.Equal(t, "[redacted]", NewSecret("x").String())
		require.Equal(t, "x", NewSecret("x").Value())
	})
}

func TestParseKinds(t *testing.T) {
	t.Parallel()

	tests := []struct {
		name    string
		opt     option
		raw     string
		want    any
		wantErr bool
	}{
		{name: "bool true", opt: option{Option: Option{Kind: KindBool}}, raw: "True", want: true},
		{name: "bool off", opt: option{Option: Option{Kind: KindBool}}, raw: "off", want: false},
		{name: "bool empty", opt: option{Option: Option{Kind: KindBool}}, raw: "", wantErr: true},
		{name: "bool 2", opt: option{Option: Option{Kind: KindBool}}, raw: "2", wantErr: true},
		{name: "int", opt: option{Option: Option{Kind: KindInt}}, raw: "-5", want: -5},
		{name: "int in range", opt: option{Option: Option{Kind: KindInt}, minInt: 1, maxInt: 10}, raw: "10", want: 10},
		{name: "int out of range", opt: option{Option: Option{Kind: KindInt}, minInt: 1, maxInt: 10}, raw: "11", wantErr: true},
		{name: "duration", opt: option{Option: Option{Kind: KindDuration}}, raw: "90s", want: 90 * time.Second},
		{name: "duration bad", opt: option{Option: Option{Kind: KindDuration}}, raw: "soon", wantErr: true},
		{name: "duration negative", opt: option{Option: Option{Kind: KindDuration}}, raw: "-1s", wantErr: true},
		{name: "log level", opt: option{Option: Option{Kind: KindLogLevel}}, raw: "ERROR", want: slog.LevelError},
		{name: "log level bad", opt: option{Option: Option{Kind: KindLogLevel}}, raw: "trace", wantErr: true},
		{name: "string list", opt: option{Option: Option{Kind: KindStringList}}, raw: " a, ,b ", want: []string{"a", "b"}},
		{name: "unknown kind", opt: option{Option: Option{Kind: Kind(99)}}, raw: "x", wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, errs := tc.opt.parse(tc.raw)
			if tc.wantErr {
				require.NotEmpty(t, errs)
				return
			}
			require.Empty(t, errs)
			require.Equal(t, tc.want, got)
		})
	}
}

func TestEntropy(t *testing.T) {
	t.Parallel()

	random := make([]byte, 32)
	for i := range random {
		random[i] = byte(i*37 + 11)
	}
	tests := []struct {
		name    string
		key     string
		wantErr bool
	}{
		{name: "one repeated character", key: strings.Repeat("a", 64), wantErr: true},
		{name: "three repeated characters", key: strings.Repeat("abc", 16), wantErr: true},
		{name: "repeated word", key: strings.Repeat("password", 6), wantErr: true},
		{name: "hex key", key: testKey("entropy hex")},
		{name: "base64 key", key: base64.StdEncoding.EncodeToString(digest("entropy b64"))},
		{name: "binary key", key: string(random)},
		{name: "too short", key: "Xk9#", wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := checkKeyStrength(tc.key)
			if tc.wantErr {
				require.Error(t, err)
				require.NotContains(t, err.Error(), tc.key)
				return
			}
			require.NoError(t, err)
		})
	}
}

func TestErrorsAsInterop(t *testing.T) {
	t.Parallel()

	var err error = Errors{{Variable: "A", Rule: "r"}}
	wrapped := fmt.Errorf("cli: load config: %w", err)
	var e *Error
	require.True(t, errors.As(wrapped, &e))
	require.Equal(t, "A", e.Variable)
}
