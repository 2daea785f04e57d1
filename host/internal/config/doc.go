// Package config loads the Lectern host's configuration from environment
// variables.
//
// This package is internal to the host. Its API is not stable.
//
// # Option table
//
// Every variable the host reads is declared once, in a table of option
// descriptors (name, kind, default, secret flag, description). [Load] walks
// that table, so parsing, defaults, error ordering, the redacted startup log
// ([Config.LogValue]) and docs/configuration.md all follow the same list.
// [Options] returns a copy of the table.
//
// A variable that is unset takes its default. A variable that is set is
// used as given, after surrounding white space is trimmed (secrets are used
// verbatim). An explicit empty value therefore means "empty", not "default":
// an empty CIDR list denies everything, and an empty SMTP_* value is refused.
//
// # Secrets
//
// Secret options (keys, passwords, DATABASE_URL) are held in [Secret], which
// never prints its value. Each secret also accepts NAME_FILE, the path of a
// file holding the value (one trailing newline is trimmed). Setting both NAME
// and NAME_FILE is an error.
//
// # Refusals
//
// [Load] collects every problem it finds and returns them together as
// [Errors], one [*Error] per problem, in option-table order. Each error is
// one line of the form "config: VARIABLE: rule" and never contains a secret.
//
// With ENVIRONMENT=production, Load also refuses a missing or short
// SERVICE_API_KEY, a missing SERVICE_CONFIG_KEY, a missing, short or
// API-key-derived SERVICE_MODEL_HMAC_KEY, any DEV_* flag that is true, and
// TRUSTED_PROXY_HOSTS containing "*".
//
// Outside production, DEV_CRYPTO_RELAXED=true relaxes the key length and
// entropy requirement; everywhere else it applies.
package config
