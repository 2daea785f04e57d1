package config

import (
	"fmt"
	"log/slog"
)

// Secret holds a sensitive configuration value such as a key, a password or
// a database URL that may embed a password. Printing, logging or marshaling
// a Secret never shows its value: every form renders as "[redacted]" when the
// secret is set and "[unset]" when it is empty. Call [Secret.Value] to get
// the value itself. The zero value is an unset secret.
type Secret struct {
	value string
}

// NewSecret wraps value as a [Secret]. It is meant for tests and for callers
// that build a [Config] by hand.
func NewSecret(value string) Secret {
	return Secret{value: value}
}

// Value returns the secret value. Never log or print it.
func (s Secret) Value() string {
	return s.value
}

// IsSet reports whether the secret holds a non-empty value.
func (s Secret) IsSet() bool {
	return s.value != ""
}

// String returns "[redacted]" or "[unset]", never the value.
func (s Secret) String() string {
	if s.IsSet() {
		return "[redacted]"
	}
	return "[unset]"
}

// GoString returns the same text as [Secret.String], so %#v does not leak
// the value.
func (s Secret) GoString() string {
	return s.String()
}

// Format implements fmt.Formatter so that every verb (%s, %v, %q, %x, ...)
// prints the redacted form.
func (s Secret) Format(f fmt.State, verb rune) {
	if verb == 'q' {
		fmt.Fprintf(f, "%q", s.String())
		return
	}
	fmt.Fprint(f, s.String())
}

// LogValue implements slog.LogValuer with the redacted form.
func (s Secret) LogValue() slog.Value {
	return slog.StringValue(s.String())
}

// MarshalText implements encoding.TextMarshaler with the redacted form, so
// JSON, YAML and similar encoders do not leak the value either.
func (s Secret) MarshalText() ([]byte, error) {
	return []byte(s.String()), nil
}

var (
	_ fmt.Stringer   = Secret{}
	_ fmt.GoStringer = Secret{}
	_ fmt.Formatter  = Secret{}
	_ slog.LogValuer = Secret{}
)
