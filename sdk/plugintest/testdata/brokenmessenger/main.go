// Command brokenmessenger is a messenger plugin that breaks every rule the
// conformance kit checks, so that its test can show each check failing.
package main

import (
	"context"
	"io"

	"github.com/lectern-research/lectern/sdk/messenger"
	"github.com/lectern-research/lectern/sdk/protocol"
	"github.com/lectern-research/lectern/sdk/serve"
)

type broken struct{ protocol.ConfigureDefaults }

func (broken) Describe(context.Context, *protocol.DescribeRequest) (*protocol.DescribeResponse, error) {
	return &protocol.DescribeResponse{Name: "broken", Version: "0.0.1"}, nil
}

// Updates returns at once instead of streaming until its context ends.
func (broken) Updates(context.Context, *messenger.UpdatesRequest, messenger.UpdateStream) error {
	return nil
}

// Send accepts anything, a missing chat included.
func (broken) Send(context.Context, *messenger.SendRequest) (*messenger.SendResponse, error) {
	return &messenger.SendResponse{}, nil
}

func (broken) Edit(context.Context, *messenger.EditRequest) (*messenger.EditResponse, error) {
	return &messenger.EditResponse{}, nil
}

func (broken) AnswerCallback(context.Context, *messenger.AnswerCallbackRequest) (*messenger.AnswerCallbackResponse, error) {
	return &messenger.AnswerCallbackResponse{}, nil
}

// SetCommands accepts names no messenger takes.
func (broken) SetCommands(context.Context, *messenger.SetCommandsRequest) (*messenger.SetCommandsResponse, error) {
	return &messenger.SetCommandsResponse{}, nil
}

// Download names no file and still succeeds.
func (broken) Download(context.Context, *messenger.DownloadRequest, io.Writer) error {
	return nil
}

func main() { serve.Messenger(broken{}) }
