package sourcehttp

import (
	"net/url"
	"time"

	"github.com/lectern-research/lectern/sdk/protocol"
)

// The helpers below read one value of protocol.ConfigureRequest.Settings, which is
// JSON-shaped: numbers arrive as float64. Each refuses a bad value with a protocol
// BadRequest error naming the setting, which is what Configure should return.

// DurationSetting reads a non-negative duration given as a Go duration string
// ("3s", "250ms") or as a number of seconds (1.5).
func DurationSetting(key string, v any) (time.Duration, error) {
	d, ok := duration(v)
	if !ok || d < 0 {
		return 0, protocol.BadRequest("setting %s must be a non-negative duration such as \"3s\" or a number of seconds, got %v", key, v)
	}
	return d, nil
}

// PositiveDurationSetting reads a duration as DurationSetting does, refusing zero
// too (for timeouts).
func PositiveDurationSetting(key string, v any) (time.Duration, error) {
	d, ok := duration(v)
	if !ok || d <= 0 {
		return 0, protocol.BadRequest("setting %s must be a positive duration such as \"3s\" or a number of seconds, got %v", key, v)
	}
	return d, nil
}

func duration(v any) (time.Duration, bool) {
	switch x := v.(type) {
	case string:
		d, err := time.ParseDuration(x)
		return d, err == nil
	case float64:
		return time.Duration(x * float64(time.Second)), true
	}
	return 0, false
}

// IntSetting reads a whole number from lo to hi.
func IntSetting(key string, v any, lo, hi int) (int, error) {
	f, ok := v.(float64)
	if !ok || f != float64(int(f)) || int(f) < lo || int(f) > hi {
		return 0, protocol.BadRequest("setting %s must be a whole number from %d to %d, got %v", key, lo, hi, v)
	}
	return int(f), nil
}

// URLSetting reads an absolute http or https URL.
func URLSetting(key string, v any) (*url.URL, error) {
	s, ok := v.(string)
	u, err := url.Parse(s)
	if !ok || err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, protocol.BadRequest("setting %s must be an absolute http(s) URL, got %v", key, v)
	}
	return u, nil
}

// PolicySettingNames are the setting names ApplyPolicySetting knows, for a
// plugin's "known settings" message.
var PolicySettingNames = []string{"rate_interval", "max_attempts", "backoff_base", "max_backoff", "timeout"}

// ApplyPolicySetting sets the field of p that the common setting key names:
// rate_interval (Interval), max_attempts (MaxAttempts, 1 to 20), backoff_base
// (Backoff), max_backoff (MaxBackoff, which also caps the Retry-After a call waits
// through), timeout (Timeout, positive). ok is false for any other key, which the
// plugin then handles or refuses itself.
func ApplyPolicySetting(p *Policy, key string, v any) (ok bool, err error) {
	switch key {
	case "rate_interval":
		p.Interval, err = DurationSetting(key, v)
	case "max_attempts":
		p.MaxAttempts, err = IntSetting(key, v, 1, 20)
	case "backoff_base":
		p.Backoff, err = DurationSetting(key, v)
	case "max_backoff":
		p.MaxBackoff, err = DurationSetting(key, v)
		p.MaxRetryAfter = p.MaxBackoff
	case "timeout":
		p.Timeout, err = PositiveDurationSetting(key, v)
	default:
		return false, nil
	}
	return true, err
}
