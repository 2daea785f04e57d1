package pluginhost

import (
	"context"
	"fmt"
	"io"

	"github.com/lectern-research/lectern/sdk/llm"
	"github.com/lectern-research/lectern/sdk/messenger"
	"github.com/lectern-research/lectern/sdk/protocol"
	"github.com/lectern-research/lectern/sdk/refmanager"
	"github.com/lectern-research/lectern/sdk/source"
)

// guarded is what every guarded client shares: Describe and Configure go to the
// plugin too, bounded like any call.
type guarded struct{ m *managed }

// Describe asks the running plugin who it is.
func (g guarded) Describe(ctx context.Context, req *protocol.DescribeRequest) (*protocol.DescribeResponse, error) {
	return invoke(ctx, g.m, callOpts{}, func(ctx context.Context, p protocol.Plugin) (*protocol.DescribeResponse, error) {
		return p.Describe(ctx, req)
	})
}

// Configure is refused: settings change through Host.ApplySettings, which also
// records them.
func (g guarded) Configure(context.Context, *protocol.ConfigureRequest) (*protocol.ConfigureResponse, error) {
	return nil, protocol.BadRequest("plugin %s: change settings through the host, not the client", g.m.entry.Name)
}

// guardedSource is the Source the rest of the host uses.
type guardedSource struct{ guarded }

var _ source.WithCitations = guardedSource{}

func (s guardedSource) Search(ctx context.Context, req *source.SearchRequest) (*source.Page, error) {
	return invoke(ctx, s.m, callOpts{}, func(ctx context.Context, p source.WithCitations) (*source.Page, error) { return p.Search(ctx, req) })
}

func (s guardedSource) Get(ctx context.Context, req *source.GetRequest) (*source.GetResponse, error) {
	return invoke(ctx, s.m, callOpts{}, func(ctx context.Context, p source.WithCitations) (*source.GetResponse, error) { return p.Get(ctx, req) })
}

func (s guardedSource) Recent(ctx context.Context, req *source.RecentRequest) (*source.Page, error) {
	return invoke(ctx, s.m, callOpts{}, func(ctx context.Context, p source.WithCitations) (*source.Page, error) { return p.Recent(ctx, req) })
}

func (s guardedSource) AuthorPapers(ctx context.Context, req *source.AuthorPapersRequest) (*source.Page, error) {
	return invoke(ctx, s.m, callOpts{}, func(ctx context.Context, p source.WithCitations) (*source.Page, error) {
		return p.AuthorPapers(ctx, req)
	})
}

func (s guardedSource) Citations(ctx context.Context, req *source.CitationsRequest) (*source.Page, error) {
	return invoke(ctx, s.m, callOpts{}, func(ctx context.Context, p source.WithCitations) (*source.Page, error) { return p.Citations(ctx, req) })
}

func (s guardedSource) References(ctx context.Context, req *source.CitationsRequest) (*source.Page, error) {
	return invoke(ctx, s.m, callOpts{}, func(ctx context.Context, p source.WithCitations) (*source.Page, error) {
		return p.References(ctx, req)
	})
}

// guardedLLM is the Provider the rest of the host uses. Chat is bounded by the
// plugin's call_timeout as a whole.
type guardedLLM struct{ guarded }

var _ llm.Provider = guardedLLM{}

func (l guardedLLM) Chat(ctx context.Context, req *llm.ChatRequest, stream llm.ChatStream) error {
	_, err := invoke(ctx, l.m, callOpts{}, func(ctx context.Context, p llm.Provider) (struct{}, error) {
		return struct{}{}, p.Chat(ctx, req, stream)
	})
	return err
}

func (l guardedLLM) Embed(ctx context.Context, req *llm.EmbedRequest) (*llm.EmbedResponse, error) {
	return invoke(ctx, l.m, callOpts{}, func(ctx context.Context, p llm.Provider) (*llm.EmbedResponse, error) { return p.Embed(ctx, req) })
}

func (l guardedLLM) Models(ctx context.Context, req *llm.ModelsRequest) (*llm.ModelsResponse, error) {
	return invoke(ctx, l.m, callOpts{}, func(ctx context.Context, p llm.Provider) (*llm.ModelsResponse, error) { return p.Models(ctx, req) })
}

// guardedRefManager is the Manager the rest of the host uses.
type guardedRefManager struct{ guarded }

var _ refmanager.Manager = guardedRefManager{}

func (r guardedRefManager) Libraries(ctx context.Context, req *refmanager.LibrariesRequest) (*refmanager.LibrariesResponse, error) {
	return invoke(ctx, r.m, callOpts{}, func(ctx context.Context, p refmanager.Manager) (*refmanager.LibrariesResponse, error) {
		return p.Libraries(ctx, req)
	})
}

func (r guardedRefManager) ItemsSince(ctx context.Context, req *refmanager.ItemsSinceRequest) (*refmanager.ItemsSinceResponse, error) {
	return invoke(ctx, r.m, callOpts{}, func(ctx context.Context, p refmanager.Manager) (*refmanager.ItemsSinceResponse, error) {
		return p.ItemsSince(ctx, req)
	})
}

func (r guardedRefManager) Notes(ctx context.Context, req *refmanager.NotesRequest) (*refmanager.NotesResponse, error) {
	return invoke(ctx, r.m, callOpts{}, func(ctx context.Context, p refmanager.Manager) (*refmanager.NotesResponse, error) {
		return p.Notes(ctx, req)
	})
}

func (r guardedRefManager) WriteNote(ctx context.Context, req *refmanager.WriteNoteRequest) (*refmanager.WriteNoteResponse, error) {
	return invoke(ctx, r.m, callOpts{}, func(ctx context.Context, p refmanager.Manager) (*refmanager.WriteNoteResponse, error) {
		return p.WriteNote(ctx, req)
	})
}

func (r guardedRefManager) Push(ctx context.Context, req *refmanager.PushRequest) (*refmanager.PushResponse, error) {
	return invoke(ctx, r.m, callOpts{}, func(ctx context.Context, p refmanager.Manager) (*refmanager.PushResponse, error) {
		return p.Push(ctx, req)
	})
}

// guardedMessenger is the Transport the rest of the host uses. Updates is a
// long-lived stream: it has no timeout and takes no concurrency slot, but ends with
// protocol.ErrUnavailable when the plugin dies. SetCommands and Download fail
// with protocol.ErrUnsupported when the plugin has no command menu or cannot
// pass files on.
type guardedMessenger struct{ guarded }

var (
	_ messenger.WithCommands  = guardedMessenger{}
	_ messenger.WithDownloads = guardedMessenger{}
)

func (g guardedMessenger) Updates(ctx context.Context, req *messenger.UpdatesRequest, stream messenger.UpdateStream) error {
	_, err := invoke(ctx, g.m, callOpts{stream: true}, func(ctx context.Context, p messenger.Transport) (struct{}, error) {
		return struct{}{}, p.Updates(ctx, req, stream)
	})
	return err
}

func (g guardedMessenger) Send(ctx context.Context, req *messenger.SendRequest) (*messenger.SendResponse, error) {
	return invoke(ctx, g.m, callOpts{}, func(ctx context.Context, p messenger.Transport) (*messenger.SendResponse, error) {
		return p.Send(ctx, req)
	})
}

func (g guardedMessenger) Edit(ctx context.Context, req *messenger.EditRequest) (*messenger.EditResponse, error) {
	return invoke(ctx, g.m, callOpts{}, func(ctx context.Context, p messenger.Transport) (*messenger.EditResponse, error) {
		return p.Edit(ctx, req)
	})
}

func (g guardedMessenger) AnswerCallback(ctx context.Context, req *messenger.AnswerCallbackRequest) (*messenger.AnswerCallbackResponse, error) {
	return invoke(ctx, g.m, callOpts{}, func(ctx context.Context, p messenger.Transport) (*messenger.AnswerCallbackResponse, error) {
		return p.AnswerCallback(ctx, req)
	})
}

func (g guardedMessenger) SetCommands(ctx context.Context, req *messenger.SetCommandsRequest) (*messenger.SetCommandsResponse, error) {
	return invoke(ctx, g.m, callOpts{}, func(ctx context.Context, p messenger.WithCommands) (*messenger.SetCommandsResponse, error) {
		return p.SetCommands(ctx, req)
	})
}

// Download passes on a file sent to the bot; protocol.ErrUnsupported when the
// plugin cannot. It holds a concurrency slot and the call timeout like any call.
func (g guardedMessenger) Download(ctx context.Context, req *messenger.DownloadRequest, w io.Writer) error {
	_, err := invoke(ctx, g.m, callOpts{}, func(ctx context.Context, p messenger.WithDownloads) (struct{}, error) {
		return struct{}{}, p.Download(ctx, req, w)
	})
	return err
}

// NamedSource is one healthy paper source.
type NamedSource struct {
	// Name is the plugin's name from plugins.toml.
	Name string
	// Capabilities the plugin announced (protocol.CapabilityCitations, ...).
	Capabilities []string
	// Source is the guarded client: every call has the plugin's timeout and
	// concurrency limit.
	Source source.WithCitations
}

// Sources returns the paper sources that are running and healthy now, in
// plugins.toml order. A source that crashes later fails its calls with
// protocol.ErrUnavailable until it is back.
func (h *Host) Sources() []NamedSource {
	var out []NamedSource
	for _, name := range h.order {
		m := h.plugins[name]
		if m.entry.Kind != protocol.KindSource || m.current() == nil {
			continue
		}
		m.mu.Lock()
		caps := m.info.Capabilities
		m.mu.Unlock()
		out = append(out, NamedSource{Name: name, Capabilities: caps, Source: guardedSource{guarded{m}}})
	}
	return out
}

func (h *Host) ofKind(name string, kind protocol.Kind) (*managed, error) {
	m, err := h.get(name)
	if err != nil {
		return nil, err
	}
	if m.entry.Kind != kind {
		return nil, fmt.Errorf("pluginhost: plugin %q is a %s plugin, not %s", name, m.entry.Kind, kind)
	}
	return m, nil
}

// Source returns the named paper source, guarded, whatever its state: calls fail
// with protocol.ErrUnavailable while it is not running.
func (h *Host) Source(name string) (source.WithCitations, error) {
	m, err := h.ofKind(name, protocol.KindSource)
	if err != nil {
		return nil, err
	}
	return guardedSource{guarded{m}}, nil
}

// LLM returns the named LLM provider, guarded.
func (h *Host) LLM(name string) (llm.Provider, error) {
	m, err := h.ofKind(name, protocol.KindLLM)
	if err != nil {
		return nil, err
	}
	return guardedLLM{guarded{m}}, nil
}

// RefManager returns the named reference manager, guarded.
func (h *Host) RefManager(name string) (refmanager.Manager, error) {
	m, err := h.ofKind(name, protocol.KindRefManager)
	if err != nil {
		return nil, err
	}
	return guardedRefManager{guarded{m}}, nil
}

// Messenger returns the named messenger transport, guarded. Its SetCommands fails
// with protocol.ErrUnsupported when the plugin has no command menu.
func (h *Host) Messenger(name string) (messenger.WithCommands, error) {
	m, err := h.ofKind(name, protocol.KindMessenger)
	if err != nil {
		return nil, err
	}
	return guardedMessenger{guarded{m}}, nil
}
