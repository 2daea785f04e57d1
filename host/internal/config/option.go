package config

// Kind is how an option's value is parsed.
type Kind int

const (
	// KindString is a plain string.
	KindString Kind = iota
	// KindBool accepts true/false, 1/0, yes/no and on/off, case-insensitive.
	KindBool
	// KindInt is a base-10 integer, optionally limited to a range.
	KindInt
	// KindCIDRList is a comma-separated list of CIDRs or bare IP addresses;
	// a bare address means that one host (/32 or /128).
	KindCIDRList
	// KindStringList is a comma-separated list; items are trimmed and empty
	// items dropped.
	KindStringList
	// KindDuration is a Go duration such as "30s" or "5m".
	KindDuration
	// KindLogLevel is one of debug, info, warn or error.
	KindLogLevel
)

// String returns the kind's name as the docs spell it.
func (k Kind) String() string {
	switch k {
	case KindString:
		return "string"
	case KindBool:
		return "bool"
	case KindInt:
		return "int"
	case KindCIDRList:
		return "CIDR list"
	case KindStringList:
		return "string list"
	case KindDuration:
		return "duration"
	case KindLogLevel:
		return "log level"
	default:
		return "unknown"
	}
}

// fileSuffix is appended to a secret's name to form its _FILE variant.
const fileSuffix = "_FILE"

// Option describes one environment variable the host reads.
type Option struct {
	// Name is the environment variable, for example "LISTEN_ADDR".
	Name string
	// Kind is how the value is parsed.
	Kind Kind
	// Default is the value used when the variable is unset, written as it
	// would be in the environment. Empty means no value.
	Default string
	// Secret marks values that are never printed. Secrets also accept the
	// variant Name+"_FILE" (see [Option.FileName]).
	Secret bool
	// Deprecated marks variables that are accepted but ignored.
	Deprecated bool
	// Description says briefly what the variable does.
	Description string
}

// FileName returns the _FILE variant of a secret option (for example
// "SERVICE_API_KEY_FILE"), or "" when the option is not secret.
func (o Option) FileName() string {
	if !o.Secret {
		return ""
	}
	return o.Name + fileSuffix
}

// option is a table row: the public descriptor plus how Load stores and
// checks the value.
type option struct {
	Option
	// field returns a pointer to the Config field that holds the value. A nil
	// field means the variable is accepted and ignored.
	field func(c *Config) any
	// item checks and normalizes a KindString value, or each item of a
	// KindStringList. Its error text becomes the rule of the refusal, so it
	// must never quote a secret.
	item func(string) (string, error)
	// minInt and maxInt bound a KindInt value when maxInt > minInt.
	minInt, maxInt int
	// rejectEmpty refuses an explicit empty or white-space-only value
	// (the SMTP_* rule).
	rejectEmpty bool
}

// Options returns a copy of the option table, in the order Load reports
// errors and the docs list variables.
func Options() []Option {
	table := options()
	out := make([]Option, len(table))
	for i, o := range table {
		out[i] = o.Option
	}
	return out
}

// Names of the development flags, shared by the table and the checks.
const (
	envEnvironment   = "ENVIRONMENT"
	envDevMode       = "DEV_MODE"
	envAuthBypass    = "DEV_AUTH_BYPASS"
	envErrorDetail   = "DEV_ERROR_DETAIL"
	envCORSOpen      = "DEV_CORS_OPEN"
	envSMTPLogOnly   = "DEV_SMTP_LOG_ONLY"
	envCryptoRelaxed = "DEV_CRYPTO_RELAXED"
)

const smtpEmptyRule = "is set to an empty value; leave it unset to disable SMTP"

// options builds the option table. It is a function, not a package
// variable, so that nothing global can be modified.
func options() []option {
	return []option{
		{
			Option: Option{Name: envEnvironment, Kind: KindString, Default: "development",
				Description: "Deployment environment: development, test, staging or production. " +
					"production activates the production refusals."},
			field: func(c *Config) any { return &c.Environment },
			item:  parseEnvironment,
		},
		{
			Option: Option{Name: "LISTEN_ADDR", Kind: KindString, Default: "127.0.0.1:3001",
				Description: "host:port the HTTP server listens on."},
			field: func(c *Config) any { return &c.ListenAddr },
			item:  parseListenAddr,
		},
		{
			Option: Option{Name: "PUBLIC_BASE_URL", Kind: KindString, Default: "http://localhost:3001",
				Description: "Absolute http(s) URL users reach the service at; magic links are built from it."},
			field: func(c *Config) any { return &c.PublicBaseURL },
			item:  parsePublicBaseURL,
		},
		{
			Option: Option{Name: "LOG_LEVEL", Kind: KindLogLevel, Default: "info",
				Description: "Minimum log level: debug, info, warn or error."},
			field: func(c *Config) any { return &c.LogLevel },
		},
		{
			Option: Option{Name: "DATABASE_URL", Kind: KindString, Secret: true,
				Description: "PostgreSQL connection URL. Empty uses the embedded private PostgreSQL."},
			field: func(c *Config) any { return &c.DatabaseURL },
		},
		{
			Option: Option{Name: "LECTERN_DATA_DIR", Kind: KindString, Default: ".lectern",
				Description: "Directory for the host's data (embedded database, caches)."},
			field: func(c *Config) any { return &c.DataDir },
			item:  parseNonEmpty,
		},
		{
			Option: Option{Name: "QDRANT_URL", Kind: KindString,
				Description: "Qdrant gRPC address (http://host:6334 or https://host). Empty keeps vectors in the embedded store."},
			field: func(c *Config) any { return &c.QdrantURL },
		},
		{
			Option: Option{Name: "QDRANT_API_KEY", Kind: KindString, Secret: true,
				Description: "API key for QDRANT_URL, when the Qdrant server asks for one."},
			field: func(c *Config) any { return &c.QdrantAPIKey },
		},
		{
			Option: Option{Name: "LLM_GATEWAY_URL", Kind: KindString,
				Description: "Base URL of the self-hosted LLM gateway (OpenAI-compatible, with a POST /model/new registration call). Empty calls providers directly."},
			field: func(c *Config) any { return &c.LLMGatewayURL },
		},
		{
			Option: Option{Name: "LLM_GATEWAY_KEY", Kind: KindString, Secret: true,
				Description: "The LLM gateway's admin (master) key, used to register models and to call them."},
			field: func(c *Config) any { return &c.LLMGatewayKey },
		},
		{
			Option: Option{Name: "LECTERN_PLUGINS_FILE", Kind: KindString, Default: "plugins.toml",
				Description: "Plugin registry file: which plugin binaries the host may launch."},
			field: func(c *Config) any { return &c.PluginsFile },
			item:  parseNonEmpty,
		},
		{
			Option: Option{Name: "CORS_ORIGINS", Kind: KindStringList,
				Description: "Comma-separated browser origins (scheme://host[:port]) allowed by CORS."},
			field: func(c *Config) any { return &c.CORSOrigins },
			item:  parseOrigin,
		},
		{
			Option: Option{Name: "SERVICE_API_KEY", Kind: KindString, Secret: true,
				Description: "Ops key sent in X-API-Key for service-to-service calls. At least 32 characters; required in production."},
			field: func(c *Config) any { return &c.ServiceAPIKey },
		},
		{
			Option: Option{Name: "SERVICE_CONFIG_KEY", Kind: KindString, Secret: true,
				Description: "Symmetric key encrypting user_config.encrypted_value. At least 32 characters; required in production."},
			field: func(c *Config) any { return &c.ServiceConfigKey },
		},
		{
			Option: Option{Name: "SERVICE_CONFIG_KEY_OLD", Kind: KindString, Secret: true,
				Description: "Previous config key, set only while rotating SERVICE_CONFIG_KEY."},
			field: func(c *Config) any { return &c.ServiceConfigKeyOld },
		},
		{
			Option: Option{Name: "SERVICE_MODEL_HMAC_KEY", Kind: KindString, Secret: true,
				Description: "HMAC-SHA256 key signing Pulse model blobs. At least 32 characters, independent of SERVICE_API_KEY; required in production."},
			field: func(c *Config) any { return &c.ServiceModelHMACKey },
		},
		{
			Option: Option{Name: "GATEWAY_SALT_KEY", Kind: KindString, Secret: true,
				Description: "Salt the LLM gateway encrypts stored model credentials under. Stored only; never rotate it."},
			field: func(c *Config) any { return &c.GatewaySaltKey },
		},
		{
			Option: Option{Name: "LECTERN_BACKUP_DIR", Kind: KindString,
				Description: "Backup folder (restore points). Empty means LECTERN_DATA_DIR/backups. Read-only to the app."},
			field: func(c *Config) any { return &c.BackupDir },
		},
		{
			Option: Option{Name: "LECTERN_BACKUP_TRIGGER_DIR", Kind: KindString,
				Description: "Folder where the app leaves restore and back-up-now requests for the backup sidecar. Empty means LECTERN_DATA_DIR/backup-trigger."},
			field: func(c *Config) any { return &c.BackupTriggerDir },
		},
		{
			Option: Option{Name: "LECTERN_BACKUP_KEEP_LAST", Kind: KindInt, Default: "7",
				Description: "Retention: keep the newest N restore points (0 switches the rule off)."},
			field:  func(c *Config) any { return &c.BackupKeepLast },
			minInt: 0,
			maxInt: 100000,
		},
		{
			Option: Option{Name: "LECTERN_BACKUP_MAX_AGE", Kind: KindDuration, Default: "168h",
				Description: "Retention: keep restore points younger than this (0 switches the rule off)."},
			field: func(c *Config) any { return &c.BackupMaxAge },
		},
		{
			Option: Option{Name: "LECTERN_BACKUP_INTERVAL", Kind: KindDuration, Default: "24h",
				Description: "How often `lectern backup watch` makes a scheduled restore point."},
			field: func(c *Config) any { return &c.BackupInterval },
		},
		{
			Option: Option{Name: "LECTERN_BACKUP_WATCH", Kind: KindBool, Default: "true",
				Description: "On the embedded database (no DATABASE_URL), `lectern serve` runs the backup sidecar's loop itself: daily restore points, Back up now and restores from the panel. Off: run `lectern backup watch` yourself."},
			field: func(c *Config) any { return &c.BackupWatch },
		},
		{
			Option: Option{Name: "LECTERN_BACKUP_AGE_RECIPIENTS", Kind: KindStringList,
				Description: "age public keys (age1…) every archive of a restore point is encrypted to. Empty: no encryption."},
			field: func(c *Config) any { return &c.BackupAgeRecipients },
		},
		{
			Option: Option{Name: "LECTERN_BACKUP_AGE_IDENTITY_FILE", Kind: KindString,
				Description: "age identity file the backup sidecar decrypts restore points with."},
			field: func(c *Config) any { return &c.BackupAgeIdentityFile },
		},
		{
			Option: Option{Name: "BACKUP_SIGNING_KEY", Kind: KindString, Secret: true,
				Description: "HMAC-SHA256 key signing restore-point manifests, at least 32 characters. Unset derives one from SERVICE_API_KEY."},
			field: func(c *Config) any { return &c.BackupSigningKey },
		},
		{
			Option: Option{Name: "SMTP_HOST", Kind: KindString,
				Description: "SMTP relay host for magic-link mail. Unset disables SMTP."},
			field:       func(c *Config) any { return &c.SMTPHost },
			item:        optional(parseHost),
			rejectEmpty: true,
		},
		{
			Option: Option{Name: "SMTP_PORT", Kind: KindInt, Default: "587",
				Description: "SMTP relay port (1-65535)."},
			field:       func(c *Config) any { return &c.SMTPPort },
			minInt:      1,
			maxInt:      65535,
			rejectEmpty: true,
		},
		{
			Option: Option{Name: "SMTP_USER", Kind: KindString,
				Description: "SMTP user name. Requires SMTP_PASS."},
			field:       func(c *Config) any { return &c.SMTPUser },
			item:        optional(parseHeaderText),
			rejectEmpty: true,
		},
		{
			Option: Option{Name: "SMTP_PASS", Kind: KindString, Secret: true,
				Description: "SMTP password. Requires SMTP_USER."},
			field:       func(c *Config) any { return &c.SMTPPass },
			rejectEmpty: true,
		},
		{
			Option: Option{Name: "SMTP_FROM", Kind: KindString,
				Description: "Sender address of outgoing mail, a bare address such as lectern@example.org."},
			field:       func(c *Config) any { return &c.SMTPFrom },
			item:        optional(parseMailAddress),
			rejectEmpty: true,
		},
		{
			Option: Option{Name: "SMTP_REPLY_TO", Kind: KindString,
				Description: "Optional Reply-To address of outgoing mail."},
			field:       func(c *Config) any { return &c.SMTPReplyTo },
			item:        optional(parseMailAddress),
			rejectEmpty: true,
		},
		{
			Option: Option{Name: "SMTP_FROM_NAME", Kind: KindString,
				Description: "Optional display name of the sender."},
			field:       func(c *Config) any { return &c.SMTPFromName },
			item:        optional(parseHeaderText),
			rejectEmpty: true,
		},
		{
			Option: Option{Name: "ALLOW_PRIVATE_SMTP_HOST", Kind: KindBool, Default: "false",
				Description: "Allow an SMTP host that resolves to a private, loopback, link-local or reserved address."},
			field: func(c *Config) any { return &c.AllowPrivateSMTPHost },
		},
		{
			Option: Option{Name: "OWNER_OVERRIDE_ALLOWED_CIDRS", Kind: KindCIDRList, Default: "127.0.0.0/8,::1/128",
				Description: "Source addresses allowed to send X-Owner-User-Id. Empty denies all."},
			field: func(c *Config) any { return &c.OwnerOverrideAllowedCIDRs },
		},
		{
			Option: Option{Name: "INFRA_INGEST_KEY", Kind: KindString, Secret: true,
				Description: "Key for /infra-events. At least 32 characters when set."},
			field: func(c *Config) any { return &c.InfraIngestKey },
		},
		{
			Option: Option{Name: "INFRA_INGEST_ALLOWED_CIDRS", Kind: KindCIDRList,
				Description: "Source addresses allowed to post /infra-events. Empty denies all."},
			field: func(c *Config) any { return &c.InfraIngestAllowedCIDRs },
		},
		{
			Option: Option{Name: "TRUSTED_PROXY_HOSTS", Kind: KindStringList, Default: "dashboard",
				Description: "Reverse proxies whose X-Forwarded-For is trusted: host names, IPs or CIDRs. Never * in production."},
			field: func(c *Config) any { return &c.TrustedProxyHosts },
			item:  parseProxyHost,
		},
		{
			Option: Option{Name: "TRUSTED_PROXY_LOOPBACK", Kind: KindBool, Default: "true",
				Description: "Also trust X-Forwarded-For from loopback peers (127.0.0.1, ::1), so a dashboard or reverse proxy on the same machine passes on the browser's address."},
			field: func(c *Config) any { return &c.TrustedProxyLoopback },
		},
		{
			Option: Option{Name: "DASHBOARD_ENABLED", Kind: KindBool, Default: "true",
				Description: "lectern serve serves the web dashboard on LISTEN_ADDR together with the API. false serves the API alone (for a separate lectern dashboard)."},
			field: func(c *Config) any { return &c.DashboardEnabled },
		},
		{
			Option: Option{Name: "DASHBOARD_ADDR", Kind: KindString, Default: ":3000",
				Description: "host:port lectern dashboard listens on (its --addr flag wins)."},
			field: func(c *Config) any { return &c.DashboardAddr },
			item:  parseListenAddr,
		},
		{
			Option: Option{Name: "DASHBOARD_API_URL", Kind: KindString, Default: "http://127.0.0.1:3001",
				Description: "Base URL of the API that lectern dashboard renders pages from and forwards /api/* to (its --api flag wins)."},
			field: func(c *Config) any { return &c.DashboardAPIURL },
			item:  parsePublicBaseURL,
		},
		{
			Option: Option{Name: "BOT_API_URL", Kind: KindString, Default: "http://127.0.0.1:3001",
				Description: "Base URL of the API that lectern bot calls for each paired user (lectern serve's own bot calls LISTEN_ADDR)."},
			field: func(c *Config) any { return &c.BotAPIURL },
			item:  parsePublicBaseURL,
		},
		{
			Option: Option{Name: "LECTERN_ROLE", Kind: KindString, Default: RoleAll,
				Description: "What lectern serve runs: api (HTTP, enqueues jobs, works none), worker (jobs, periodic jobs and the bot; only a health endpoint on LISTEN_ADDR) or all. Its --role flag wins."},
			field: func(c *Config) any { return &c.Role },
			item:  ParseRole,
		},
		{
			Option: Option{Name: "JOBS_RESCUE_AFTER", Kind: KindDuration, Default: "5m",
				Description: "How long a job must have been running, and past its kind's time limit, before a job held by a host that died is run again."},
			field: func(c *Config) any { return &c.JobsRescueAfter },
		},
		{
			Option: Option{Name: "LECTERN_TEST_JOBS", Kind: KindBool, Default: "false",
				Description: "Tests only: registers the no-op job kind test.noop, which the scale-out test enqueues. Refused in production."},
			field: func(c *Config) any { return &c.TestJobs },
		},
		{
			Option: Option{Name: "MESSENGER_CHAT_ID", Kind: KindString, Deprecated: true,
				Description: "Accepted and ignored; its meaning was never settled. Use the messenger.owner_chat_id setting."},
		},
		{
			Option: Option{Name: envDevMode, Kind: KindBool, Default: "false",
				Description: "Turns on every DEV_* flag below that is not set explicitly."},
			field: func(c *Config) any { return &c.DevMode },
		},
		{
			Option: Option{Name: envAuthBypass, Kind: KindBool, Default: "false",
				Description: "Bypasses all authentication when no SERVICE_API_KEY is configured."},
			field: func(c *Config) any { return &c.DevAuthBypass },
		},
		{
			Option: Option{Name: envErrorDetail, Kind: KindBool, Default: "false",
				Description: "Shows raw error detail in API error responses."},
			field: func(c *Config) any { return &c.DevErrorDetail },
		},
		{
			Option: Option{Name: envCORSOpen, Kind: KindBool, Default: "false",
				Description: "Sends Access-Control-Allow-Origin: * instead of the CORS_ORIGINS allowlist."},
			field: func(c *Config) any { return &c.DevCORSOpen },
		},
		{
			Option: Option{Name: envSMTPLogOnly, Kind: KindBool, Default: "false",
				Description: "Writes magic-link mail to the log instead of sending it."},
			field: func(c *Config) any { return &c.DevSMTPLogOnly },
		},
		{
			Option: Option{Name: envCryptoRelaxed, Kind: KindBool, Default: "false",
				Description: "Relaxes the key length and entropy requirement."},
			field: func(c *Config) any { return &c.DevCryptoRelaxed },
		},
	}
}
