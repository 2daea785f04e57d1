package config

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"time"
)

// environmentProduction is the ENVIRONMENT value that activates the
// production refusals.
const environmentProduction = "production"

// Config is the host's configuration. Build it with [Load] or
// [FromEnvironment] and pass it explicitly; there is no global instance.
// Each field names its environment variable and default.
type Config struct {
	// Environment is ENVIRONMENT, trimmed and lowercased: development, test,
	// staging or production. Default "development".
	Environment string
	// ListenAddr is LISTEN_ADDR, a host:port with a numeric port. Default
	// "127.0.0.1:3001".
	ListenAddr string
	// PublicBaseURL is PUBLIC_BASE_URL, an absolute http(s) URL without user
	// info, query, fragment or trailing slash. Default
	// "http://localhost:3001".
	PublicBaseURL string
	// LogLevel is LOG_LEVEL. Default slog.LevelInfo.
	LogLevel slog.Level
	// DatabaseURL is DATABASE_URL. Unset (the default) means the embedded
	// private PostgreSQL.
	DatabaseURL Secret
	// DataDir is LECTERN_DATA_DIR. Default ".lectern".
	DataDir string
	// QdrantURL is QDRANT_URL, the gRPC address of a Qdrant server
	// (http://host:6334). Empty (the default) keeps vectors in the embedded store.
	QdrantURL string
	// QdrantAPIKey is QDRANT_API_KEY. Default unset.
	QdrantAPIKey Secret
	// LLMGatewayURL is LLM_GATEWAY_URL, the self-hosted LLM gateway. Empty (the
	// default) calls providers directly.
	LLMGatewayURL string
	// LLMGatewayKey is LLM_GATEWAY_KEY, the gateway's admin key. Default unset.
	LLMGatewayKey Secret
	// PluginsFile is LECTERN_PLUGINS_FILE. Default "plugins.toml".
	PluginsFile string
	// CORSOrigins is CORS_ORIGINS, each origin normalized to the form
	// browsers send (lowercase scheme://host[:port], default port dropped).
	// Default empty.
	CORSOrigins []string

	// ServiceAPIKey is SERVICE_API_KEY, the ops key. Default unset;
	// required in production.
	ServiceAPIKey Secret
	// ServiceConfigKey is SERVICE_CONFIG_KEY, which encrypts
	// user_config.encrypted_value. Default unset; required in production.
	ServiceConfigKey Secret
	// ServiceConfigKeyOld is SERVICE_CONFIG_KEY_OLD, the previous config key
	// during rotation. Default unset.
	ServiceConfigKeyOld Secret
	// ServiceModelHMACKey is SERVICE_MODEL_HMAC_KEY, which signs Pulse model
	// blobs. Default unset; required in production.
	ServiceModelHMACKey Secret
	// GatewaySaltKey is GATEWAY_SALT_KEY, stored for the LLM gateway.
	// Default unset.
	GatewaySaltKey Secret

	// BackupDir is LECTERN_BACKUP_DIR, the backup folder. Default
	// LECTERN_DATA_DIR/backups (see BackupFolder).
	BackupDir string
	// BackupTriggerDir is LECTERN_BACKUP_TRIGGER_DIR, the one folder the app
	// writes for the backup sidecar. Default LECTERN_DATA_DIR/backup-trigger.
	BackupTriggerDir string
	// BackupKeepLast is LECTERN_BACKUP_KEEP_LAST. Default 7; 0 switches the rule off.
	BackupKeepLast int
	// BackupMaxAge is LECTERN_BACKUP_MAX_AGE. Default 168h; 0 switches the rule off.
	BackupMaxAge time.Duration
	// BackupInterval is LECTERN_BACKUP_INTERVAL. Default 24h.
	BackupInterval time.Duration
	// BackupWatch is LECTERN_BACKUP_WATCH: on the embedded database, serve runs
	// the backup sidecar's loop itself. Default true.
	BackupWatch bool
	// BackupAgeRecipients is LECTERN_BACKUP_AGE_RECIPIENTS (age1… keys). Default
	// empty: points are not encrypted.
	BackupAgeRecipients []string
	// BackupAgeIdentityFile is LECTERN_BACKUP_AGE_IDENTITY_FILE. Default empty.
	BackupAgeIdentityFile string
	// BackupSigningKey is BACKUP_SIGNING_KEY, the manifests' HMAC key. Default
	// unset: derived from SERVICE_API_KEY.
	BackupSigningKey Secret

	// SMTPHost is SMTP_HOST. Default empty: SMTP disabled.
	SMTPHost string
	// SMTPPort is SMTP_PORT. Default 587.
	SMTPPort int
	// SMTPUser is SMTP_USER. Default empty.
	SMTPUser string
	// SMTPPass is SMTP_PASS. Default unset.
	SMTPPass Secret
	// SMTPFrom is SMTP_FROM, a bare sender address. Default empty.
	SMTPFrom string
	// SMTPReplyTo is SMTP_REPLY_TO, a bare address. Default empty.
	SMTPReplyTo string
	// SMTPFromName is SMTP_FROM_NAME, the sender's display name. Default
	// empty.
	SMTPFromName string
	// AllowPrivateSMTPHost is ALLOW_PRIVATE_SMTP_HOST. Default false.
	AllowPrivateSMTPHost bool

	// OwnerOverrideAllowedCIDRs is OWNER_OVERRIDE_ALLOWED_CIDRS: source
	// addresses allowed to use X-Owner-User-Id. Default 127.0.0.0/8 and
	// ::1/128; empty denies all.
	OwnerOverrideAllowedCIDRs []netip.Prefix
	// InfraIngestKey is INFRA_INGEST_KEY, the /infra-events key. Default
	// unset.
	InfraIngestKey Secret
	// InfraIngestAllowedCIDRs is INFRA_INGEST_ALLOWED_CIDRS. Default empty,
	// which denies all.
	InfraIngestAllowedCIDRs []netip.Prefix
	// TrustedProxyHosts is TRUSTED_PROXY_HOSTS: host names (lowercased), IP
	// addresses and CIDRs, or "*" outside production. Default ["dashboard"].
	TrustedProxyHosts []string
	// TrustedProxyLoopback is TRUSTED_PROXY_LOOPBACK: lectern serve adds 127.0.0.1
	// and ::1 to the trusted proxies. Default true.
	TrustedProxyLoopback bool
	// DashboardEnabled is DASHBOARD_ENABLED: lectern serve serves the dashboard
	// with the API on LISTEN_ADDR. Default true.
	DashboardEnabled bool
	// DashboardAddr is DASHBOARD_ADDR, where lectern dashboard listens. Default
	// ":3000".
	DashboardAddr string
	// DashboardAPIURL is DASHBOARD_API_URL, the API lectern dashboard calls,
	// without a trailing slash. Default "http://127.0.0.1:3001".
	DashboardAPIURL string
	// BotAPIURL is BOT_API_URL, the API lectern bot calls, without a trailing
	// slash. Default "http://127.0.0.1:3001".
	BotAPIURL string

	// Role is LECTERN_ROLE, what lectern serve runs: RoleAPI, RoleWorker or
	// RoleAll (its --role flag wins). Default RoleAll.
	Role string
	// JobsRescueAfter is JOBS_RESCUE_AFTER: how long a job must have been
	// running (and past its kind's time limit) before a job a dead host held is
	// run again. Default 5m.
	JobsRescueAfter time.Duration
	// TestJobs is LECTERN_TEST_JOBS: registers the test.noop job kind, for tests
	// of real serve processes. Default false; refused in production.
	TestJobs bool

	// DevMode is DEV_MODE. Default false. When true, each DEV_* flag below
	// that is not set explicitly is true.
	DevMode bool
	// DevAuthBypass is DEV_AUTH_BYPASS. Default false (or DEV_MODE).
	DevAuthBypass bool
	// DevErrorDetail is DEV_ERROR_DETAIL. Default false (or DEV_MODE).
	DevErrorDetail bool
	// DevCORSOpen is DEV_CORS_OPEN. Default false (or DEV_MODE).
	DevCORSOpen bool
	// DevSMTPLogOnly is DEV_SMTP_LOG_ONLY. Default false (or DEV_MODE).
	DevSMTPLogOnly bool
	// DevCryptoRelaxed is DEV_CRYPTO_RELAXED. Default false (or DEV_MODE).
	DevCryptoRelaxed bool

	// DeprecatedSet lists deprecated variables (such as MESSENGER_CHAT_ID)
	// that were set and ignored, so the caller can warn about them.
	DeprecatedSet []string
}

// Load reads the configuration through lookup, which has the signature of
// os.LookupEnv (tests pass a map lookup; nil means an empty environment).
// It parses every option in the table, applies DEV_MODE promotion, then
// checks the cross-field and production rules. If anything is wrong it
// returns a nil *Config and an [Errors] value holding every refusal, in
// option-table order.
func Load(lookup func(string) (string, bool)) (*Config, error) {
	if lookup == nil {
		lookup = func(string) (string, bool) { return "", false }
	}
	opts := options()
	l := &loader{
		lookup:   lookup,
		errs:     newCollector(opts),
		explicit: make(map[string]bool),
		bad:      make(map[string]bool),
		promoted: make(map[string]bool),
	}
	c := &Config{}
	for i := range opts {
		l.load(c, &opts[i])
	}
	l.promoteDevFlags(c)
	l.validate(c)
	if err := l.errs.result(); err != nil {
		return nil, err
	}
	return c, nil
}

// FromEnvironment loads the configuration from the process environment.
func FromEnvironment() (*Config, error) {
	return Load(os.LookupEnv)
}

// IsProduction reports whether ENVIRONMENT is production.
func (c *Config) IsProduction() bool {
	return c.Environment == environmentProduction
}

// SMTPConfigured reports whether SMTP_HOST is set, that is whether magic
// links can be mailed.
func (c *Config) SMTPConfigured() bool {
	return c.SMTPHost != ""
}

// LogValue implements slog.LogValuer for the startup log line. It lists
// every option by variable name in table order; secrets appear only as
// "set" or "unset".
func (c *Config) LogValue() slog.Value {
	if c == nil {
		return slog.StringValue("<nil>")
	}
	var attrs []slog.Attr
	for _, o := range options() {
		if o.field == nil {
			continue
		}
		attrs = append(attrs, slog.String(o.Name, display(o.field(c))))
	}
	if len(c.DeprecatedSet) > 0 {
		attrs = append(attrs, slog.String("ignored_deprecated", strings.Join(c.DeprecatedSet, ",")))
	}
	return slog.GroupValue(attrs...)
}

var _ slog.LogValuer = (*Config)(nil)

// display renders a field for LogValue. Secrets become "set" or "unset".
func display(field any) string {
	switch p := field.(type) {
	case *Secret:
		if p.IsSet() {
			return "set"
		}
		return "unset"
	case *string:
		return *p
	case *bool:
		return strconv.FormatBool(*p)
	case *int:
		return strconv.Itoa(*p)
	case *time.Duration:
		return p.String()
	case *slog.Level:
		return p.String()
	case *[]string:
		return strings.Join(*p, ",")
	case *[]netip.Prefix:
		s := make([]string, len(*p))
		for i, pfx := range *p {
			s[i] = pfx.String()
		}
		return strings.Join(s, ",")
	default:
		return fmt.Sprintf("<%T>", field)
	}
}

// store assigns a parsed value to the field it belongs to. A mismatch
// between an option's kind and its field type is a bug in the table; the
// tests load every default, so it cannot ship.
func store(field any, v any) {
	switch p := field.(type) {
	case *Secret:
		*p = Secret{value: v.(string)}
	case *string:
		*p = v.(string)
	case *bool:
		*p = v.(bool)
	case *int:
		*p = v.(int)
	case *time.Duration:
		*p = v.(time.Duration)
	case *slog.Level:
		*p = v.(slog.Level)
	case *[]string:
		*p = v.([]string)
	case *[]netip.Prefix:
		*p = v.([]netip.Prefix)
	default:
		panic(fmt.Sprintf("config: unsupported field type %T", field))
	}
}

// maxSecretFileSize bounds what a _FILE variant may hold, so pointing one
// at a device or a huge file fails instead of hanging.
const maxSecretFileSize = 64 << 10

// loader holds the state of one Load call.
type loader struct {
	lookup func(string) (string, bool)
	errs   *collector
	// explicit holds the options present in the environment.
	explicit map[string]bool
	// bad holds the options that already failed, so later checks do not
	// report the same variable twice.
	bad map[string]bool
	// promoted holds the DEV_* flags DEV_MODE turned on.
	promoted map[string]bool
}

func (l *loader) fail(variable, rule string, cause error) {
	l.errs.add(variable, rule, cause)
	l.bad[strings.TrimSuffix(variable, fileSuffix)] = true
}

// load reads, parses and stores one option.
func (l *loader) load(c *Config, o *option) {
	raw, ok := l.lookup(o.Name)
	if o.Secret {
		var failed bool
		raw, ok, failed = l.secretValue(o, raw, ok)
		if failed {
			return
		}
	}
	if ok {
		l.explicit[o.Name] = true
	}
	if o.field == nil {
		if ok && o.Deprecated {
			c.DeprecatedSet = append(c.DeprecatedSet, o.Name)
		}
		return
	}
	if ok && o.rejectEmpty && strings.TrimSpace(raw) == "" {
		l.fail(o.Name, smtpEmptyRule, nil)
		return
	}
	if !ok {
		raw = o.Default
	}
	if o.Secret {
		store(o.field(c), raw) // verbatim; empty means unset
		return
	}
	v, errs := o.parse(strings.TrimSpace(raw))
	if len(errs) > 0 {
		for _, err := range errs {
			l.fail(o.Name, err.Error(), nil)
		}
		return
	}
	store(o.field(c), v)
}

// secretValue resolves a secret from NAME or NAME_FILE. Empty values of
// either count as unset. It reports failed when it recorded an error.
func (l *loader) secretValue(o *option, raw string, ok bool) (value string, set, failed bool) {
	fileVar := o.FileName()
	path, fok := l.lookup(fileVar)
	path = strings.TrimSpace(path)
	if !fok || path == "" {
		return raw, ok, false
	}
	if ok && raw != "" {
		l.fail(o.Name, fmt.Sprintf("both %s and %s are set; set only one", o.Name, fileVar), nil)
		return "", false, true
	}
	value, err := readSecretFile(path)
	if err != nil {
		l.fail(fileVar, err.Error(), err)
		return "", false, true
	}
	if value == "" {
		l.fail(fileVar, fmt.Sprintf("file %q is empty; it must hold %s", path, o.Name), nil)
		return "", false, true
	}
	return value, true, false
}

// readSecretFile returns the file's content without its trailing newline.
func readSecretFile(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("cannot read secret file: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxSecretFileSize+1))
	if err != nil {
		return "", fmt.Errorf("cannot read secret file: %w", err)
	}
	if len(data) > maxSecretFileSize {
		return "", fmt.Errorf("secret file %q is larger than %d bytes", path, maxSecretFileSize)
	}
	s := strings.TrimSuffix(string(data), "\n")
	return strings.TrimSuffix(s, "\r"), nil
}

// devFlags returns the five flags DEV_MODE promotes, in table order.
func devFlags(c *Config) []struct {
	name string
	ptr  *bool
} {
	return []struct {
		name string
		ptr  *bool
	}{
		{envAuthBypass, &c.DevAuthBypass},
		{envErrorDetail, &c.DevErrorDetail},
		{envCORSOpen, &c.DevCORSOpen},
		{envSMTPLogOnly, &c.DevSMTPLogOnly},
		{envCryptoRelaxed, &c.DevCryptoRelaxed},
	}
}

// promoteDevFlags sets every DEV_* flag not present in the environment to
// true when DEV_MODE is true. An explicit value, true or false, wins.
func (l *loader) promoteDevFlags(c *Config) {
	if !c.DevMode {
		return
	}
	for _, f := range devFlags(c) {
		if !l.explicit[f.name] {
			*f.ptr = true
			l.promoted[f.name] = true
		}
	}
}

// Key requirements. DEV_CRYPTO_RELAXED lifts them outside production.
const (
	minKeyLength  = 32
	minKeyEntropy = 3.0 // bits per character
)

const keyHint = "generate one with: openssl rand -hex 32"

// validate applies the cross-field and production rules.
func (l *loader) validate(c *Config) {
	prod := c.IsProduction()
	strict := prod || !c.DevCryptoRelaxed

	keys := []struct {
		name     string
		value    Secret
		required bool // in production
	}{
		{"SERVICE_API_KEY", c.ServiceAPIKey, true},
		{"SERVICE_CONFIG_KEY", c.ServiceConfigKey, true},
		{"SERVICE_CONFIG_KEY_OLD", c.ServiceConfigKeyOld, false},
		{"SERVICE_MODEL_HMAC_KEY", c.ServiceModelHMACKey, true},
		{"INFRA_INGEST_KEY", c.InfraIngestKey, false},
		{"BACKUP_SIGNING_KEY", c.BackupSigningKey, false},
	}
	for _, k := range keys {
		if l.bad[k.name] {
			continue
		}
		if !k.value.IsSet() {
			if prod && k.required {
				l.fail(k.name, fmt.Sprintf("is required when ENVIRONMENT=production (set %s or %s%s; %s)",
					k.name, k.name, fileSuffix, keyHint), nil)
			}
			continue
		}
		if strict {
			if err := checkKeyStrength(k.value.Value()); err != nil {
				l.fail(k.name, err.Error(), nil)
				continue
			}
		}
		if prod {
			if err := checkKeyPattern(k.value.Value()); err != nil {
				l.fail(k.name, err.Error(), nil)
			}
		}
	}

	const oldKey, newKey = "SERVICE_CONFIG_KEY_OLD", "SERVICE_CONFIG_KEY"
	if c.ServiceConfigKeyOld.IsSet() && !l.bad[oldKey] && !l.bad[newKey] {
		switch {
		case !c.ServiceConfigKey.IsSet():
			l.fail(oldKey, "is set but SERVICE_CONFIG_KEY is not; during rotation set SERVICE_CONFIG_KEY to the new key and SERVICE_CONFIG_KEY_OLD to the old one", nil)
		case secretsEqual(c.ServiceConfigKeyOld.Value(), c.ServiceConfigKey.Value()):
			l.fail(oldKey, "must differ from SERVICE_CONFIG_KEY; unset it when rotation is done", nil)
		}
	}

	const hmacKey = "SERVICE_MODEL_HMAC_KEY"
	if prod && !l.bad[hmacKey] && c.ServiceAPIKey.IsSet() && c.ServiceModelHMACKey.IsSet() &&
		derivedFromAPIKey(c.ServiceModelHMACKey.Value(), c.ServiceAPIKey.Value()) {
		l.fail(hmacKey, "must not be derived from SERVICE_API_KEY in production; "+keyHint, nil)
	}

	if prod {
		l.refuseSharedKeys(c)
	}

	const user, pass = "SMTP_USER", "SMTP_PASS"
	if !l.bad[user] && !l.bad[pass] {
		switch {
		case c.SMTPUser != "" && !c.SMTPPass.IsSet():
			l.fail(pass, "must be set when SMTP_USER is set", nil)
		case c.SMTPUser == "" && c.SMTPPass.IsSet():
			l.fail(user, "must be set when SMTP_PASS is set", nil)
		}
	}

	if !prod {
		return
	}
	if c.DevMode {
		l.fail(envDevMode, "must not be true when ENVIRONMENT=production", nil)
	}
	for _, f := range devFlags(c) {
		switch {
		case !*f.ptr:
		case l.promoted[f.name]:
			l.fail(f.name, "must not be true when ENVIRONMENT=production (it was promoted to true by DEV_MODE=true)", nil)
		default:
			l.fail(f.name, "must not be true when ENVIRONMENT=production", nil)
		}
	}
	if c.TestJobs {
		l.fail("LECTERN_TEST_JOBS", "must not be true when ENVIRONMENT=production (it adds a job kind for tests)", nil)
	}
	const proxies = "TRUSTED_PROXY_HOSTS"
	for _, h := range c.TrustedProxyHosts {
		if h == "*" {
			l.fail(proxies, `must not contain "*" when ENVIRONMENT=production; list only the reverse proxy (default: dashboard)`, nil)
			break
		}
	}
}

// checkKeyStrength applies the length and entropy requirement. Its error
// never contains the key.
func checkKeyStrength(key string) error {
	if n := len([]rune(key)); n < minKeyLength {
		return fmt.Errorf("must be at least %d characters (got %d)", minKeyLength, n)
	}
	if entropy(key) < minKeyEntropy {
		return errors.New("is too predictable: it needs at least 3.0 bits of entropy per character; " + keyHint)
	}
	return nil
}
