package pluginhost

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/lectern-research/lectern/sdk/protocol"
)

// Defaults of an Entry.
const (
	// DefaultCallTimeout bounds every call to a plugin unless call_timeout says otherwise.
	DefaultCallTimeout = 30 * time.Second
	// MaxCallTimeout is the longest call_timeout accepted: a day, far above any
	// real call (the LLM plugins use minutes), so a typo cannot unbound a call.
	MaxCallTimeout = 24 * time.Hour
	// DefaultMaxConcurrency is how many calls may run in one plugin at once unless
	// max_concurrency says otherwise.
	DefaultMaxConcurrency = 8
)

// Entry is one [[plugin]] table of plugins.toml.
type Entry struct {
	// Name identifies the plugin (name). Required, unique, lowercase.
	Name string
	// Kind is the plugin kind (kind). Required.
	Kind protocol.Kind
	// Path is the binary (path), resolved against the folder of plugins.toml.
	// Required.
	Path string
	// Version is the accepted plugin version range (version), for example
	// ">= 0.1.0, < 2.0.0". Default: any version.
	Version Range
	// Enabled says whether the host starts the plugin (enabled). Default true.
	// An admin's run-time choice overrides it.
	Enabled bool
	// SHA256 is the binary's expected checksum (sha256, hex). Default: not checked.
	SHA256 []byte
	// CallTimeout bounds each call (call_timeout, a Go duration). Default
	// DefaultCallTimeout.
	CallTimeout time.Duration
	// MaxConcurrency caps the calls running at once (max_concurrency). Default
	// DefaultMaxConcurrency.
	MaxConcurrency int
	// Settings are the non-secret settings ([plugin.settings]) handed to the
	// plugin's Configure. Default none.
	Settings map[string]any
	// Line is where the entry starts in the file.
	Line int
}

// ID is "<kind>.<name>", as in logs.
func (e *Entry) ID() string { return string(e.Kind) + "." + e.Name }

// ConfigError refuses a bad plugins.toml, naming the file, line and reason.
type ConfigError struct {
	File   string
	Line   int
	Reason string
}

// Error renders "plugins.toml:12: kind "x" is not one of ...".
func (e *ConfigError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Reason)
	}
	return fmt.Sprintf("%s: %s", e.File, e.Reason)
}

// ConfigErrors is every refusal found in one file.
type ConfigErrors []*ConfigError

// Error joins the refusals, one per line.
func (es ConfigErrors) Error() string {
	lines := make([]string, len(es))
	for i, e := range es {
		lines[i] = e.Error()
	}
	return strings.Join(lines, "\n")
}

var (
	nameRE = regexp.MustCompile(`^[a-z][a-z0-9_-]{0,62}$`)
	// secretKeyRE spots setting names that look like credentials: those reach a
	// plugin per call, never through plugins.toml or the settings table.
	secretKeyRE = regexp.MustCompile(`(?i)(secret|password|passwd|token|api[_-]?key|credential|private[_-]?key)`)
)

var knownKeys = map[string]bool{
	"name": true, "kind": true, "path": true, "version": true, "enabled": true, "sha256": true,
	"call_timeout": true, "max_concurrency": true, "settings": true,
}

// LoadFile reads and checks plugins.toml. A missing file is an empty list. Every bad
// entry is reported (as ConfigErrors) with the file, line and reason; nothing is
// returned then.
func LoadFile(path string) ([]Entry, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("pluginhost: read %s: %w", path, err)
	}
	return Parse(path, data)
}

// Parse checks the contents of a plugins.toml read from file (used in messages and
// to resolve relative paths).
func Parse(file string, data []byte) ([]Entry, error) {
	var raw map[string]any
	if _, err := toml.Decode(string(data), &raw); err != nil {
		var pe toml.ParseError
		if errors.As(err, &pe) {
			return nil, ConfigErrors{{File: file, Line: pe.Position.Line, Reason: pe.Message}}
		}
		return nil, ConfigErrors{{File: file, Reason: err.Error()}}
	}
	lines := locate(data)
	var errs ConfigErrors
	bad := func(line int, format string, args ...any) {
		errs = append(errs, &ConfigError{File: file, Line: line, Reason: fmt.Sprintf(format, args...)})
	}
	for k := range raw {
		if k != "plugin" {
			bad(lines.top(k), "unknown key %q: the file holds [[plugin]] tables only", k)
		}
	}
	var tables []map[string]any
	switch v := raw["plugin"].(type) {
	case nil:
	case []map[string]any:
		tables = v
	default:
		bad(lines.top("plugin"), "plugin must be an array of tables ([[plugin]])")
	}
	seen := map[string]int{}
	var entries []Entry
	for i, t := range tables {
		start := lines.entry(i)
		at := func(key string) int { return lines.key(i, key) }
		e := Entry{Enabled: true, CallTimeout: DefaultCallTimeout, MaxConcurrency: DefaultMaxConcurrency, Line: start}
		for k := range t {
			if !knownKeys[k] {
				bad(at(k), "unknown key %q in [[plugin]] (known: name, kind, path, version, enabled, sha256, call_timeout, max_concurrency, settings)", k)
			}
		}
		str := func(key string, required bool) string {
			v, ok := t[key]
			if !ok {
				if required {
					bad(start, "[[plugin]] has no %s", key)
				}
				return ""
			}
			s, ok := v.(string)
			if !ok {
				bad(at(key), "%s must be a string", key)
			} else if required && strings.TrimSpace(s) == "" {
				// name = "" once passed: an entry without a binary to start
				// (FuzzParse, testdata/fuzz/FuzzParse).
				bad(at(key), "%s must not be empty", key)
			}
			return s
		}
		e.Name = str("name", true)
		if e.Name != "" && !nameRE.MatchString(e.Name) {
			bad(at("name"), "name %q must be lowercase letters, digits, - or _, starting with a letter", e.Name)
		}
		if first, dup := seen[e.Name]; dup && e.Name != "" {
			bad(at("name"), "name %q is already used by the plugin on line %d", e.Name, first)
		}
		seen[e.Name] = start
		if k := str("kind", true); k != "" {
			e.Kind = protocol.Kind(k)
			if !e.Kind.Valid() {
				bad(at("kind"), "kind %q is not one of source, llm, refmanager, messenger", k)
			}
		}
		if p := str("path", true); p != "" {
			if !filepath.IsAbs(p) {
				p = filepath.Join(filepath.Dir(file), p)
			}
			e.Path = filepath.Clean(p)
		}
		if v := str("version", false); v != "" {
			r, err := ParseRange(v)
			if err != nil {
				bad(at("version"), "version: %v", err)
			}
			e.Version = r
		}
		if v, ok := t["enabled"]; ok {
			b, ok := v.(bool)
			if !ok {
				bad(at("enabled"), "enabled must be true or false")
			}
			e.Enabled = b
		}
		if v := str("sha256", false); v != "" {
			sum, err := hex.DecodeString(v)
			if err != nil || len(sum) != 32 {
				bad(at("sha256"), "sha256 must be 64 hex digits")
			}
			e.SHA256 = sum
		}
		if v := str("call_timeout", false); v != "" {
			d, err := time.ParseDuration(v)
			// "99999h" once passed: a call that may hang for years is no bound
			// (FuzzParse, testdata/fuzz/FuzzParse).
			if err != nil || d <= 0 || d > MaxCallTimeout {
				bad(at("call_timeout"), "call_timeout %q must be a positive duration up to %s, such as \"30s\"", v, MaxCallTimeout)
			}
			e.CallTimeout = d
		}
		if v, ok := t["max_concurrency"]; ok {
			n, ok := v.(int64)
			if !ok || n < 1 || n > 1024 {
				bad(at("max_concurrency"), "max_concurrency must be a whole number from 1 to 1024")
			}
			e.MaxConcurrency = int(n)
		}
		if v, ok := t["settings"]; ok {
			s, ok := v.(map[string]any)
			if !ok {
				bad(at("settings"), "settings must be a table ([plugin.settings])")
			}
			for k := range s {
				if secretKeyRE.MatchString(k) {
					bad(lines.settingsKey(i, k), "setting %q looks like a credential: secrets never go in plugins.toml, they reach a plugin per call from the encrypted user configuration", k)
				}
			}
			e.Settings = s
		}
		entries = append(entries, e)
	}
	if len(errs) > 0 {
		return nil, errs
	}
	return entries, nil
}

// lineIndex finds where keys sit in a plugins.toml, for messages. BurntSushi/toml
// reports positions for syntax errors only, so this scans the text: entry i starts at
// the i-th [[plugin]] header.
type lineIndex struct {
	lines   []string
	headers []int // 0-based line of each [[plugin]]
}

var headerRE = regexp.MustCompile(`^\s*\[\[\s*plugin\s*\]\]`)

func locate(data []byte) lineIndex {
	var idx lineIndex
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64*1024), 1024*1024)
	for sc.Scan() {
		if headerRE.MatchString(sc.Text()) {
			idx.headers = append(idx.headers, len(idx.lines))
		}
		idx.lines = append(idx.lines, sc.Text())
	}
	return idx
}

func (x lineIndex) span(i int) (int, int) {
	if i >= len(x.headers) {
		return 0, len(x.lines)
	}
	end := len(x.lines)
	if i+1 < len(x.headers) {
		end = x.headers[i+1]
	}
	return x.headers[i], end
}

func (x lineIndex) entry(i int) int {
	start, _ := x.span(i)
	return start + 1
}

func keyRE(key string) *regexp.Regexp {
	return regexp.MustCompile(`^\s*("` + regexp.QuoteMeta(key) + `"|` + regexp.QuoteMeta(key) + `)\s*=`)
}

// key returns the 1-based line of key inside entry i (its header when not found).
func (x lineIndex) key(i int, key string) int {
	start, end := x.span(i)
	re := keyRE(key)
	tableRE := regexp.MustCompile(`^\s*\[\s*plugin\.` + regexp.QuoteMeta(key) + `\s*\]`)
	inSub := false
	for n := start + 1; n < end; n++ {
		l := x.lines[n]
		if strings.HasPrefix(strings.TrimSpace(l), "[") {
			if tableRE.MatchString(l) {
				return n + 1
			}
			inSub = true
			continue
		}
		if !inSub && re.MatchString(l) {
			return n + 1
		}
	}
	return start + 1
}

// settingsKey returns the 1-based line of a setting of entry i.
func (x lineIndex) settingsKey(i int, key string) int {
	start, end := x.span(i)
	re := keyRE(key)
	for n := start + 1; n < end; n++ {
		if re.MatchString(x.lines[n]) {
			return n + 1
		}
	}
	return x.key(i, "settings")
}

// top returns the line of a top-level key.
func (x lineIndex) top(key string) int {
	re := keyRE(key)
	tableRE := regexp.MustCompile(`^\s*\[+\s*` + regexp.QuoteMeta(key) + `[\s.\]]`)
	for n, l := range x.lines {
		if re.MatchString(l) || tableRE.MatchString(l) {
			return n + 1
		}
	}
	return 0
}
