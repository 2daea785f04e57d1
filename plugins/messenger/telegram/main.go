// Command telegram is Lectern's chat messenger transport for Telegram's Bot API:
// inbound updates by long polling getUpdates, messages with inline keyboards
// (split when longer than Telegram allows), edits, button acknowledgements and the
// command menu. The bot token arrives with every call and is never logged. It
// imports only the sdk module.
package main

import (
	"github.com/lectern-research/lectern/sdk/sdklog"
	"github.com/lectern-research/lectern/sdk/serve"
)

func main() { serve.Messenger(New(sdklog.New(nil))) }
