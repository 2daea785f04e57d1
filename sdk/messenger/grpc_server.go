package messenger

import (
	"context"

	"github.com/lectern-research/lectern/sdk/internal/convert"
	"github.com/lectern-research/lectern/sdk/internal/pb/pluginv1"
	"github.com/lectern-research/lectern/sdk/protocol"
)

// grpcServer serves the MessengerTransport service by calling the implementation.
type grpcServer struct {
	pluginv1.UnimplementedMessengerTransportServer
	impl Transport
}

func buttonsToProto(rows [][]Button) []*pluginv1.ButtonRow {
	var out []*pluginv1.ButtonRow
	for _, row := range rows {
		r := &pluginv1.ButtonRow{}
		for _, b := range row {
			r.Buttons = append(r.Buttons, &pluginv1.Button{Text: b.Text, CallbackData: b.CallbackData, Url: b.URL})
		}
		out = append(out, r)
	}
	return out
}

func buttonsFromProto(rows []*pluginv1.ButtonRow) [][]Button {
	var out [][]Button
	for _, row := range rows {
		var r []Button
		for _, b := range row.GetButtons() {
			r = append(r, Button{Text: b.GetText(), CallbackData: b.GetCallbackData(), URL: b.GetUrl()})
		}
		out = append(out, r)
	}
	return out
}

func updateToProto(u *Update) *pluginv1.Update {
	out := &pluginv1.Update{
		Id:       u.ID,
		ChatId:   u.ChatID,
		ChatType: pluginv1.ChatType(u.ChatType),
		From:     &pluginv1.ChatUser{Id: u.From.ID, Username: u.From.Username, DisplayName: u.From.DisplayName, Language: u.From.Language},
		Time:     convert.TimeToProto(u.Time),
	}
	switch {
	case u.Message != nil:
		out.Kind = &pluginv1.Update_Message{Message: &pluginv1.InboundMessage{MessageId: u.Message.MessageID, Text: u.Message.Text}}
	case u.Command != nil:
		out.Kind = &pluginv1.Update_Command{Command: &pluginv1.InboundCommand{MessageId: u.Command.MessageID, Name: u.Command.Name, Args: u.Command.Args}}
	case u.Callback != nil:
		out.Kind = &pluginv1.Update_Callback{Callback: &pluginv1.InboundCallback{CallbackId: u.Callback.CallbackID, MessageId: u.Callback.MessageID, Data: u.Callback.Data}}
	case u.Document != nil:
		d := u.Document
		out.Kind = &pluginv1.Update_Document{Document: &pluginv1.InboundDocument{
			MessageId: d.MessageID, FileId: d.FileID, FileName: d.FileName, MimeType: d.MIMEType, Size: d.Size, Caption: d.Caption,
		}}
	}
	return out
}

func updateFromProto(u *pluginv1.Update) *Update {
	f := u.GetFrom()
	out := &Update{
		ID:       u.GetId(),
		ChatID:   u.GetChatId(),
		ChatType: chatTypeFromProto(u.GetChatType()),
		From:     User{ID: f.GetId(), Username: f.GetUsername(), DisplayName: f.GetDisplayName(), Language: f.GetLanguage()},
		Time:     convert.TimeFromProto(u.GetTime()),
	}
	if m := u.GetMessage(); m != nil {
		out.Message = &Message{MessageID: m.GetMessageId(), Text: m.GetText()}
	}
	if c := u.GetCommand(); c != nil {
		out.Command = &Command{MessageID: c.GetMessageId(), Name: c.GetName(), Args: c.GetArgs()}
	}
	if cb := u.GetCallback(); cb != nil {
		out.Callback = &Callback{CallbackID: cb.GetCallbackId(), MessageID: cb.GetMessageId(), Data: cb.GetData()}
	}
	if d := u.GetDocument(); d != nil {
		out.Document = &Document{
			MessageID: d.GetMessageId(), FileID: d.GetFileId(), FileName: d.GetFileName(),
			MIMEType: d.GetMimeType(), Size: d.GetSize(), Caption: d.GetCaption(),
		}
	}
	return out
}

// chatTypeFromProto maps the wire's chat type; a value this SDK does not know
// becomes ChatUnknown, never private.
func chatTypeFromProto(t pluginv1.ChatType) ChatType {
	switch t {
	case pluginv1.ChatType_CHAT_TYPE_PRIVATE:
		return ChatPrivate
	case pluginv1.ChatType_CHAT_TYPE_GROUP:
		return ChatGroup
	case pluginv1.ChatType_CHAT_TYPE_CHANNEL:
		return ChatChannel
	}
	return ChatUnknown
}

func (s *grpcServer) Updates(req *pluginv1.UpdatesRequest, srv pluginv1.MessengerTransport_UpdatesServer) error {
	err := s.impl.Updates(srv.Context(), &UpdatesRequest{
		Credentials: convert.CredentialsFrom(req.GetCredentials()),
		Offset:      req.GetOffset(),
	}, UpdateStreamFunc(func(u *Update) error { return srv.Send(updateToProto(u)) }))
	return convert.ErrToStatus(err)
}

func (s *grpcServer) Send(ctx context.Context, req *pluginv1.SendRequest) (*pluginv1.SendResponse, error) {
	resp, err := s.impl.Send(ctx, &SendRequest{
		Credentials: convert.CredentialsFrom(req.GetCredentials()),
		ChatID:      req.GetChatId(),
		Text:        req.GetText(),
		Format:      Format(req.GetFormat()),
		Buttons:     buttonsFromProto(req.GetButtons()),
		Silent:      req.GetSilent(),
	})
	if err != nil {
		return nil, convert.ErrToStatus(err)
	}
	return &pluginv1.SendResponse{MessageId: resp.MessageID}, nil
}

func (s *grpcServer) Edit(ctx context.Context, req *pluginv1.EditRequest) (*pluginv1.EditResponse, error) {
	_, err := s.impl.Edit(ctx, &EditRequest{
		Credentials: convert.CredentialsFrom(req.GetCredentials()),
		ChatID:      req.GetChatId(),
		MessageID:   req.GetMessageId(),
		Text:        req.GetText(),
		Format:      Format(req.GetFormat()),
		Buttons:     buttonsFromProto(req.GetButtons()),
	})
	if err != nil {
		return nil, convert.ErrToStatus(err)
	}
	return &pluginv1.EditResponse{}, nil
}

func (s *grpcServer) AnswerCallback(ctx context.Context, req *pluginv1.AnswerCallbackRequest) (*pluginv1.AnswerCallbackResponse, error) {
	_, err := s.impl.AnswerCallback(ctx, &AnswerCallbackRequest{
		Credentials: convert.CredentialsFrom(req.GetCredentials()),
		CallbackID:  req.GetCallbackId(),
		Text:        req.GetText(),
		Alert:       req.GetAlert(),
	})
	if err != nil {
		return nil, convert.ErrToStatus(err)
	}
	return &pluginv1.AnswerCallbackResponse{}, nil
}

func (s *grpcServer) SetCommands(ctx context.Context, req *pluginv1.SetCommandsRequest) (*pluginv1.SetCommandsResponse, error) {
	impl, ok := s.impl.(WithCommands)
	if !ok {
		return nil, convert.ErrToStatus(protocol.Unsupported("this messenger has no command menu"))
	}
	cmds := make([]BotCommand, 0, len(req.GetCommands()))
	for _, c := range req.GetCommands() {
		cmds = append(cmds, BotCommand{Name: c.GetName(), Description: c.GetDescription()})
	}
	if _, err := impl.SetCommands(ctx, &SetCommandsRequest{
		Credentials: convert.CredentialsFrom(req.GetCredentials()),
		Commands:    cmds,
	}); err != nil {
		return nil, convert.ErrToStatus(err)
	}
	return &pluginv1.SetCommandsResponse{}, nil
}

// downloadChunk is the most one DownloadChunk carries.
const downloadChunk = 1 << 20

func (s *grpcServer) Download(req *pluginv1.DownloadRequest, srv pluginv1.MessengerTransport_DownloadServer) error {
	impl, ok := s.impl.(WithDownloads)
	if !ok {
		return convert.ErrToStatus(protocol.Unsupported("this messenger cannot pass files on"))
	}
	w := &chunkWriter{send: func(b []byte) error { return srv.Send(&pluginv1.DownloadChunk{Data: b}) }}
	err := impl.Download(srv.Context(), &DownloadRequest{
		Credentials: convert.CredentialsFrom(req.GetCredentials()),
		FileID:      req.GetFileId(),
		MaxBytes:    req.GetMaxBytes(),
	}, w)
	if err == nil {
		err = w.flush()
	}
	return convert.ErrToStatus(err)
}

// chunkWriter gathers what is written into chunks of downloadChunk bytes.
type chunkWriter struct {
	send func([]byte) error
	buf  []byte
}

func (w *chunkWriter) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		if w.buf == nil {
			w.buf = make([]byte, 0, downloadChunk)
		}
		k := min(len(p), downloadChunk-len(w.buf))
		w.buf = append(w.buf, p[:k]...)
		p = p[k:]
		if len(w.buf) == downloadChunk {
			if err := w.flush(); err != nil {
				return n - len(p) - k, err
			}
		}
	}
	return n, nil
}

// flush sends what is gathered, if anything.
func (w *chunkWriter) flush() error {
	if len(w.buf) == 0 {
		return nil
	}
	err := w.send(w.buf)
	w.buf = w.buf[:0]
	return err
}
