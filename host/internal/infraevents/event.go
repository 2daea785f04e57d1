package infraevents

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// Limits of one request. The body limit is the route's (httpapi); the others are
// checked here, and the table's constraints repeat the field lengths.
const (
	// MaxBody is the largest request body: 256 KB.
	MaxBody = 256 << 10
	// MaxBatch is the most events one request may carry.
	MaxBatch = 500
	// MaxSource is the longest source, in characters.
	MaxSource = 200
	// MaxMessage is the longest message, in characters.
	MaxMessage = 8000
	// MaxAttrs is the largest attrs object, in bytes of JSON.
	MaxAttrs = 8 << 10
	// Retention is how long an event is kept; the daily purge deletes older ones.
	Retention = 7 * 24 * time.Hour
)

// Event is one infrastructure log event as a shipper sends it.
type Event struct {
	// Source names the emitter, for example "postgres" or "caddy". Required.
	Source string `json:"source"`
	// Level is debug, info, warning (or warn), error or critical (or fatal).
	// Default info.
	Level string `json:"level,omitempty"`
	// Message is the log line. Required.
	Message string `json:"message"`
	// Time is when the event happened (RFC 3339). Default: when it was received.
	Time *time.Time `json:"time,omitempty"`
	// Attrs are structured fields: a JSON object of at most MaxAttrs bytes.
	Attrs json.RawMessage `json:"attrs,omitempty"`
}

// levels maps the accepted spellings to the stored level.
var levels = map[string]string{
	"debug": "debug", "info": "info", "warn": "warning", "warning": "warning",
	"error": "error", "critical": "critical", "fatal": "critical",
}

// InvalidError says which event of a batch is wrong, and how, in words.
type InvalidError struct {
	Index int
	Field string
	Rule  string
}

func (e *InvalidError) Error() string {
	return fmt.Sprintf("event %d: %s %s", e.Index, e.Field, e.Rule)
}

// Normalize checks e against the limits and returns it as it will be stored: the
// level spelled as the table wants it, attrs "{}" when absent. index is e's place
// in its batch, for the error.
func Normalize(index int, e Event) (Event, error) {
	bad := func(field, rule string) (Event, error) {
		return Event{}, &InvalidError{Index: index, Field: field, Rule: rule}
	}
	e.Source = strings.TrimSpace(e.Source)
	switch {
	case e.Source == "":
		return bad("source", "is required")
	case utf8.RuneCountInString(e.Source) > MaxSource:
		return bad("source", fmt.Sprintf("is longer than %d characters", MaxSource))
	case strings.TrimSpace(e.Message) == "":
		return bad("message", "is required")
	case utf8.RuneCountInString(e.Message) > MaxMessage:
		return bad("message", fmt.Sprintf("is longer than %d characters", MaxMessage))
	}
	lvl, ok := levels[strings.ToLower(strings.TrimSpace(cmpOr(e.Level, "info")))]
	if !ok {
		return bad("level", "is not one of debug, info, warning, error, critical")
	}
	e.Level = lvl
	attrs := bytes.TrimSpace(e.Attrs)
	switch {
	case len(attrs) == 0 || bytes.Equal(attrs, []byte("null")):
		e.Attrs = json.RawMessage("{}")
	case attrs[0] != '{':
		return bad("attrs", "must be a JSON object")
	case len(attrs) > MaxAttrs:
		return bad("attrs", fmt.Sprintf("is larger than %d KB", MaxAttrs>>10))
	default:
		e.Attrs = json.RawMessage(attrs)
	}
	return e, nil
}

func cmpOr(s, def string) string {
	if strings.TrimSpace(s) == "" {
		return def
	}
	return s
}
