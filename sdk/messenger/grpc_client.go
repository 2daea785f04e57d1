package messenger

import (
	"context"
	"errors"
	"io"

	"github.com/lectern-research/lectern/sdk/internal/convert"
	"github.com/lectern-research/lectern/sdk/internal/pb/pluginv1"
	"github.com/lectern-research/lectern/sdk/internal/shim"
)

// grpcClient is the host's view of a messenger plugin.
type grpcClient struct {
	shim.PluginClient
	c pluginv1.MessengerTransportClient
}

var (
	_ WithCommands  = (*grpcClient)(nil)
	_ WithDownloads = (*grpcClient)(nil)
)

func (c *grpcClient) Updates(ctx context.Context, req *UpdatesRequest, stream UpdateStream) error {
	callCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	recv, err := c.c.Updates(callCtx, &pluginv1.UpdatesRequest{Credentials: convert.Credentials(req.Credentials), Offset: req.Offset})
	if err != nil {
		return convert.StatusToErr(ctx, err)
	}
	for {
		u, err := recv.Recv()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return convert.StatusToErr(ctx, err)
		}
		if err := stream.Send(updateFromProto(u)); err != nil {
			return err
		}
	}
}

func (c *grpcClient) Send(ctx context.Context, req *SendRequest) (*SendResponse, error) {
	resp, err := shim.Call(ctx, c.c.Send, &pluginv1.SendRequest{
		Credentials: convert.Credentials(req.Credentials),
		ChatId:      req.ChatID,
		Text:        req.Text,
		Format:      pluginv1.TextFormat(req.Format),
		Buttons:     buttonsToProto(req.Buttons),
		Silent:      req.Silent,
	})
	if err != nil {
		return nil, err
	}
	return &SendResponse{MessageID: resp.GetMessageId()}, nil
}

func (c *grpcClient) Edit(ctx context.Context, req *EditRequest) (*EditResponse, error) {
	_, err := shim.Call(ctx, c.c.Edit, &pluginv1.EditRequest{
		Credentials: convert.Credentials(req.Credentials),
		ChatId:      req.ChatID,
		MessageId:   req.MessageID,
		Text:        req.Text,
		Format:      pluginv1.TextFormat(req.Format),
		Buttons:     buttonsToProto(req.Buttons),
	})
	if err != nil {
		return nil, err
	}
	return &EditResponse{}, nil
}

func (c *grpcClient) AnswerCallback(ctx context.Context, req *AnswerCallbackRequest) (*AnswerCallbackResponse, error) {
	_, err := shim.Call(ctx, c.c.AnswerCallback, &pluginv1.AnswerCallbackRequest{
		Credentials: convert.Credentials(req.Credentials),
		CallbackId:  req.CallbackID,
		Text:        req.Text,
		Alert:       req.Alert,
	})
	if err != nil {
		return nil, err
	}
	return &AnswerCallbackResponse{}, nil
}

func (c *grpcClient) SetCommands(ctx context.Context, req *SetCommandsRequest) (*SetCommandsResponse, error) {
	cmds := make([]*pluginv1.BotCommand, 0, len(req.Commands))
	for _, cmd := range req.Commands {
		cmds = append(cmds, &pluginv1.BotCommand{Name: cmd.Name, Description: cmd.Description})
	}
	_, err := shim.Call(ctx, c.c.SetCommands, &pluginv1.SetCommandsRequest{
		Credentials: convert.Credentials(req.Credentials),
		Commands:    cmds,
	})
	if err != nil {
		return nil, err
	}
	return &SetCommandsResponse{}, nil
}

func (c *grpcClient) Download(ctx context.Context, req *DownloadRequest, w io.Writer) error {
	callCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	recv, err := c.c.Download(callCtx, &pluginv1.DownloadRequest{
		Credentials: convert.Credentials(req.Credentials),
		FileId:      req.FileID,
		MaxBytes:    req.MaxBytes,
	})
	if err != nil {
		return convert.StatusToErr(ctx, err)
	}
	for {
		chunk, err := recv.Recv()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return convert.StatusToErr(ctx, err)
		}
		if _, err := w.Write(chunk.GetData()); err != nil {
			return err
		}
	}
}
