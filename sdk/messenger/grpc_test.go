package messenger_test

import (
	"bytes"
	"context"
	"io"
	"testing"
	"time"

	"github.com/hashicorp/go-plugin"
	"github.com/stretchr/testify/require"

	"github.com/lectern-research/lectern/sdk/messenger"
	"github.com/lectern-research/lectern/sdk/protocol"
)

type chat struct {
	protocol.ConfigureDefaults
	sent *messenger.SendRequest
}

func (c *chat) Describe(context.Context, *protocol.DescribeRequest) (*protocol.DescribeResponse, error) {
	return &protocol.DescribeResponse{Name: "chat", Version: "0.0.1"}, nil
}

func (c *chat) Updates(ctx context.Context, req *messenger.UpdatesRequest, stream messenger.UpdateStream) error {
	at := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	ups := []*messenger.Update{
		{ID: req.Offset, ChatID: "c1", ChatType: messenger.ChatPrivate, From: messenger.User{ID: "u1", Username: "ada"}, Time: at, Message: &messenger.Message{MessageID: "m1", Text: "hi"}},
		{ID: req.Offset + 1, ChatID: "c1", ChatType: messenger.ChatGroup, Time: at, Command: &messenger.Command{MessageID: "m2", Name: "start", Args: "tok"}},
		{ID: req.Offset + 2, ChatID: "c1", ChatType: messenger.ChatChannel, Time: at, Callback: &messenger.Callback{CallbackID: "cb", MessageID: "m3", Data: "save:1"}},
		{ID: req.Offset + 3, ChatID: "c1", Time: at, Document: &messenger.Document{MessageID: "m4", FileID: "f", FileName: "a.pdf", MIMEType: "application/pdf", Size: 12, Caption: "add"}},
	}
	for _, u := range ups {
		if err := stream.Send(u); err != nil {
			return err
		}
	}
	<-ctx.Done()
	return ctx.Err()
}

func (c *chat) Send(_ context.Context, req *messenger.SendRequest) (*messenger.SendResponse, error) {
	c.sent = req
	return &messenger.SendResponse{MessageID: "m9"}, nil
}

func (c *chat) Edit(context.Context, *messenger.EditRequest) (*messenger.EditResponse, error) {
	return nil, protocol.NotFound("no such message")
}

func (c *chat) AnswerCallback(context.Context, *messenger.AnswerCallbackRequest) (*messenger.AnswerCallbackResponse, error) {
	return &messenger.AnswerCallbackResponse{}, nil
}

func TestUpdatesStreamUntilCancelled(t *testing.T) {
	t.Parallel()
	impl := &chat{}
	client, _ := plugin.TestPluginGRPCConn(t, false, map[string]plugin.Plugin{"messenger": &messenger.GRPCPlugin{Impl: impl}})
	t.Cleanup(func() { _ = client.Close() })
	raw, err := client.Dispense("messenger")
	require.NoError(t, err)
	tr := raw.(messenger.Transport)

	ctx, cancel := context.WithCancel(t.Context())
	var got []*messenger.Update
	err = tr.Updates(ctx, &messenger.UpdatesRequest{Offset: 10}, messenger.UpdateStreamFunc(func(u *messenger.Update) error {
		got = append(got, u)
		if len(got) == 4 {
			cancel()
		}
		return nil
	}))
	require.ErrorIs(t, err, context.Canceled)
	require.Len(t, got, 4)
	require.Equal(t, "hi", got[0].Message.Text)
	require.Equal(t, []messenger.ChatType{messenger.ChatPrivate, messenger.ChatGroup, messenger.ChatChannel, messenger.ChatUnknown},
		[]messenger.ChatType{got[0].ChatType, got[1].ChatType, got[2].ChatType, got[3].ChatType})
	require.Equal(t, &messenger.Document{MessageID: "m4", FileID: "f", FileName: "a.pdf", MIMEType: "application/pdf", Size: 12, Caption: "add"}, got[3].Document)
	require.Equal(t, "ada", got[0].From.Username)
	require.Equal(t, &messenger.Command{MessageID: "m2", Name: "start", Args: "tok"}, got[1].Command)
	require.Equal(t, "save:1", got[2].Callback.Data)
	require.EqualValues(t, 12, got[2].ID)

	resp, err := tr.Send(t.Context(), &messenger.SendRequest{ChatID: "c1", Text: "*hi*", Format: messenger.FormatMarkdown,
		Buttons: [][]messenger.Button{{{Text: "Save", CallbackData: "save:1"}, {Text: "Open", URL: "https://example.org"}}}})
	require.NoError(t, err)
	require.Equal(t, "m9", resp.MessageID)
	require.Equal(t, "https://example.org", impl.sent.Buttons[0][1].URL)

	_, err = tr.Edit(t.Context(), &messenger.EditRequest{ChatID: "c1", MessageID: "zz"})
	require.ErrorIs(t, err, protocol.ErrNotFound)

	info, err := tr.Describe(t.Context(), &protocol.DescribeRequest{})
	require.NoError(t, err)
	require.False(t, info.HasCapability(protocol.CapabilityCommands))
	_, err = raw.(messenger.WithCommands).SetCommands(t.Context(), &messenger.SetCommandsRequest{Commands: []messenger.BotCommand{{Name: "start", Description: "Start"}}})
	require.ErrorIs(t, err, protocol.ErrUnsupported, "a messenger without a menu answers unsupported")
	require.False(t, info.HasCapability(protocol.CapabilityDownloads))
	var buf bytes.Buffer
	err = raw.(messenger.WithDownloads).Download(t.Context(), &messenger.DownloadRequest{FileID: "f"}, &buf)
	require.ErrorIs(t, err, protocol.ErrUnsupported, "a messenger that cannot pass files on answers unsupported")
}

// fileChat is a chat that passes files on: file "big" is 2.5 MiB, written in
// odd-sized pieces; "gone" is not found; "huge" fails once MaxBytes is passed.
type fileChat struct {
	chat
	got *messenger.DownloadRequest
}

func (c *fileChat) Download(_ context.Context, req *messenger.DownloadRequest, w io.Writer) error {
	c.got = req
	switch req.FileID {
	case "gone":
		return protocol.NotFound("the file is gone")
	case "huge":
		if _, err := w.Write(make([]byte, req.MaxBytes)); err != nil {
			return err
		}
		return protocol.BadRequest("the file is larger than %d bytes", req.MaxBytes)
	}
	data := bigFile()
	for len(data) > 0 {
		n := min(len(data), 333_333)
		if _, err := w.Write(data[:n]); err != nil {
			return err
		}
		data = data[n:]
	}
	return nil
}

func bigFile() []byte {
	b := make([]byte, 5<<19)
	for i := range b {
		b[i] = byte(i * 7)
	}
	return b
}

func TestDownloadCrossesTheWire(t *testing.T) {
	t.Parallel()
	impl := &fileChat{}
	client, _ := plugin.TestPluginGRPCConn(t, false, map[string]plugin.Plugin{"messenger": &messenger.GRPCPlugin{Impl: impl}})
	t.Cleanup(func() { _ = client.Close() })
	raw, err := client.Dispense("messenger")
	require.NoError(t, err)
	tr := raw.(messenger.WithDownloads)

	info, err := tr.Describe(t.Context(), &protocol.DescribeRequest{})
	require.NoError(t, err)
	require.True(t, info.HasCapability(protocol.CapabilityDownloads), "the serve glue announces the optional interface")

	var buf bytes.Buffer
	err = tr.Download(t.Context(), &messenger.DownloadRequest{Credentials: map[string]string{messenger.CredBotToken: "t"}, FileID: "big", MaxBytes: 3 << 20}, &buf)
	require.NoError(t, err)
	require.Equal(t, bigFile(), buf.Bytes(), "every byte, in order, over chunks of at most 1 MiB")
	require.Equal(t, "t", impl.got.Credentials[messenger.CredBotToken])
	require.EqualValues(t, 3<<20, impl.got.MaxBytes)

	err = tr.Download(t.Context(), &messenger.DownloadRequest{FileID: "gone"}, &bytes.Buffer{})
	require.ErrorIs(t, err, protocol.ErrNotFound)
	err = tr.Download(t.Context(), &messenger.DownloadRequest{FileID: "huge", MaxBytes: 1 << 20}, &bytes.Buffer{})
	require.ErrorIs(t, err, protocol.ErrBadRequest)
}

// menuChat is a chat with a command menu.
type menuChat struct {
	chat
	got *messenger.SetCommandsRequest
}

func (c *menuChat) SetCommands(_ context.Context, req *messenger.SetCommandsRequest) (*messenger.SetCommandsResponse, error) {
	if len(req.Commands) > 0 && req.Commands[0].Name == "bad name" {
		return nil, protocol.BadRequest("bad command name")
	}
	c.got = req
	return &messenger.SetCommandsResponse{}, nil
}

func TestSetCommandsCrossesTheWire(t *testing.T) {
	t.Parallel()
	impl := &menuChat{}
	client, _ := plugin.TestPluginGRPCConn(t, false, map[string]plugin.Plugin{"messenger": &messenger.GRPCPlugin{Impl: impl}})
	t.Cleanup(func() { _ = client.Close() })
	raw, err := client.Dispense("messenger")
	require.NoError(t, err)
	tr := raw.(messenger.WithCommands)

	info, err := tr.Describe(t.Context(), &protocol.DescribeRequest{})
	require.NoError(t, err)
	require.True(t, info.HasCapability(protocol.CapabilityCommands), "the serve glue announces the optional interface")

	cmds := []messenger.BotCommand{{Name: "papers", Description: "Your papers"}, {Name: "review", Description: "Review due cards"}}
	_, err = tr.SetCommands(t.Context(), &messenger.SetCommandsRequest{Credentials: map[string]string{messenger.CredBotToken: "t"}, Commands: cmds})
	require.NoError(t, err)
	require.Equal(t, cmds, impl.got.Commands)
	require.Equal(t, "t", impl.got.Credentials[messenger.CredBotToken])

	_, err = tr.SetCommands(t.Context(), &messenger.SetCommandsRequest{Commands: []messenger.BotCommand{{Name: "bad name"}}})
	require.ErrorIs(t, err, protocol.ErrBadRequest)
}

func TestEscapes(t *testing.T) {
	t.Parallel()
	require.Equal(t, "a &lt;b&gt; &amp; \"c\"", messenger.EscapeHTML(`a <b> & "c"`))
	require.Equal(t, "f\\(x\\) \\* a\\_b \\[1\\] \\` \\\\", messenger.EscapeMarkdown("f(x) * a_b [1] ` \\"))
	require.Equal(t, "private", messenger.ChatPrivate.String())
	require.Equal(t, "unknown", messenger.ChatUnknown.String())
}
