// Package protocol holds what every Lectern plugin and the host agree on before any
// kind-specific call: the handshake, the protocol version, the plugin kinds, the
// common Describe and Configure calls and the typed errors.
//
// This package follows semantic versioning with the sdk module.
package protocol

import (
	"context"
	"fmt"

	"github.com/hashicorp/go-plugin"
)

// Version is the major version of the plugin protocol this SDK speaks. A host refuses
// a plugin built against another major version, naming both.
const Version = 1

// The magic cookie is one pair for the whole platform. It is not a security measure:
// it only stops a plugin binary from being run by hand as if it were a program.
const (
	// MagicCookieKey is the environment variable the host sets for a plugin.
	MagicCookieKey = "LECTERN_PLUGIN_MAGIC_COOKIE"
	// MagicCookieValue is the value a plugin expects in MagicCookieKey.
	MagicCookieValue = "b5f1d7c2-lectern-plugin-protocol"
)

// Handshake returns the go-plugin handshake for this protocol version. Host and
// plugin both use it; a plugin author never needs it directly (the serve package
// applies it).
func Handshake() plugin.HandshakeConfig {
	return plugin.HandshakeConfig{
		ProtocolVersion:  Version,
		MagicCookieKey:   MagicCookieKey,
		MagicCookieValue: MagicCookieValue,
	}
}

// Kind is a plugin kind. A binary serves exactly one kind.
type Kind string

// The plugin kinds.
const (
	// KindSource is a paper source (arXiv, OpenAlex, ...).
	KindSource Kind = "source"
	// KindLLM is an LLM provider.
	KindLLM Kind = "llm"
	// KindRefManager is a reference manager (Zotero).
	KindRefManager Kind = "refmanager"
	// KindMessenger is a messenger transport (Telegram).
	KindMessenger Kind = "messenger"
)

// Kinds lists every kind, in a stable order.
func Kinds() []Kind { return []Kind{KindSource, KindLLM, KindRefManager, KindMessenger} }

// Valid reports whether k is a known kind.
func (k Kind) Valid() bool {
	for _, known := range Kinds() {
		if k == known {
			return true
		}
	}
	return false
}

// Capabilities a plugin may announce in Describe.
const (
	// CapabilityCitations: a source answers Citations and References.
	CapabilityCitations = "citations"
	// CapabilityStreaming: an LLM provider streams chat deltas as they come (rather
	// than one chunk at the end).
	CapabilityStreaming = "streaming"
	// CapabilityJSONSchema: an LLM provider honours ChatRequest.ResponseSchema.
	CapabilityJSONSchema = "json_schema"
	// CapabilityEmbeddings: an LLM provider answers Embed.
	CapabilityEmbeddings = "embeddings"
	// CapabilityCommands: a messenger transport sets its command menu
	// (messenger.WithCommands).
	CapabilityCommands = "commands"
	// CapabilityDownloads: a messenger transport passes on the files sent to the
	// bot (messenger.WithDownloads).
	CapabilityDownloads = "downloads"
)

// DescribeRequest asks a plugin who it is. It has no fields yet.
type DescribeRequest struct{}

// DescribeResponse is who a plugin is.
type DescribeResponse struct {
	// Name is the plugin's short lowercase name ("arxiv"). Required.
	Name string
	// Kind is the plugin's kind. The serve helpers set it; an author leaves it empty.
	Kind Kind
	// Version is the plugin's semantic version ("1.2.0"). Required.
	Version string
	// ProtocolVersion is the protocol major version the plugin was built with. The
	// serve helpers set it to Version.
	ProtocolVersion int
	// Capabilities lists optional features. The serve helpers add those they can
	// see from the implementation's optional interfaces.
	Capabilities []string
	// Description is one human sentence. Optional.
	Description string
}

// HasCapability reports whether the plugin announced capability c.
func (d *DescribeResponse) HasCapability(c string) bool {
	for _, have := range d.Capabilities {
		if have == c {
			return true
		}
	}
	return false
}

// String renders the identity for logs: "source.arxiv 1.2.0 (protocol 1)".
func (d *DescribeResponse) String() string {
	return fmt.Sprintf("%s.%s %s (protocol %d)", d.Kind, d.Name, d.Version, d.ProtocolVersion)
}

// ConfigureRequest carries a plugin's non-secret settings: plugins.toml merged with
// the admin's run-time changes. Values are JSON-shaped (string, float64, bool, nil,
// []any, map[string]any).
type ConfigureRequest struct {
	Settings map[string]any
}

// ConfigureResponse answers Configure. It has no fields yet.
type ConfigureResponse struct{}

// Describer is implemented by every plugin.
type Describer interface {
	// Describe returns the plugin's identity. It must not do I/O and must answer
	// even before Configure.
	Describe(ctx context.Context, req *DescribeRequest) (*DescribeResponse, error)
}

// Configurer is implemented by every plugin. The host calls Configure after start
// and whenever an admin changes the plugin's settings, possibly while other calls
// are running.
type Configurer interface {
	// Configure applies settings. A plugin refuses settings it cannot use with a
	// BadRequest error and keeps the previous ones.
	Configure(ctx context.Context, req *ConfigureRequest) (*ConfigureResponse, error)
}

// Plugin is what every plugin implements whatever its kind.
type Plugin interface {
	Describer
	Configurer
}

// ConfigureDefaults gives a plugin with no settings a Configure that accepts any
// settings. Embed it in the implementation struct.
type ConfigureDefaults struct{}

// Configure accepts and ignores the settings.
func (ConfigureDefaults) Configure(context.Context, *ConfigureRequest) (*ConfigureResponse, error) {
	return &ConfigureResponse{}, nil
}
