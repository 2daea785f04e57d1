package bot

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"strings"

	"github.com/google/uuid"

	"github.com/lectern-research/lectern/sdk/messenger"
)

// paperAction is what a paper button does through the API.
type paperAction struct {
	method, path string
	body         func(id string) any
	done         string
}

// paperActions map the paper buttons to the API: save into the library, skip
// (out of the inbox, as dealt with), star and unstar, trash, and the Pulse
// thumbs.
var paperActions = map[string]paperAction{
	"save":   {http.MethodPost, "/api/library", func(id string) any { return map[string]string{"paper_id": id} }, "Saved to your library."},
	"skip":   {http.MethodPatch, "/api/papers/{id}/state", func(string) any { return map[string]string{"state": "done"} }, "Skipped."},
	"star":   {http.MethodPatch, "/api/papers/{id}/state", func(string) any { return map[string]bool{"starred": true} }, "Starred."},
	"unstar": {http.MethodPatch, "/api/papers/{id}/state", func(string) any { return map[string]bool{"starred": false} }, "Unstarred."},
	"trash":  {http.MethodPatch, "/api/papers/{id}/state", func(string) any { return map[string]string{"state": "trash"} }, "Moved to the trash."},
	"up":     {http.MethodPost, "/api/pulse/rate", func(id string) any { return map[string]string{"paper_id": id, "action": "up"} }, "Noted: more like this."},
	"down":   {http.MethodPost, "/api/pulse/rate", func(id string) any { return map[string]string{"paper_id": id, "action": "down"} }, "Noted: fewer like this."},
}

// callback answers an inline button. An unpaired chat gets the /pair prompt.
func (b *Bot) callback(ctx context.Context, c *chat, cb *messenger.Callback) error {
	if c.pairing == nil {
		return b.answerCallback(ctx, cb.CallbackID, pairPrompt)
	}
	if allowed, wait := b.limits.allow(c.id, "callback", limitCallback); !allowed {
		return b.answerCallback(ctx, cb.CallbackID, fmt.Sprintf("Too many taps. Try again in %d seconds.", int(math.Ceil(wait.Seconds()))))
	}
	data := cb.Data
	switch {
	case data == "show_answer":
		return b.showAnswer(ctx, c, cb)
	case data == "start_review":
		if err := b.answerCallback(ctx, cb.CallbackID, ""); err != nil {
			return err
		}
		return cmdReview(ctx, b, c, "")
	case len(data) == len("rate_1") && strings.HasPrefix(data, "rate_") && data[5] >= '1' && data[5] <= '4':
		return b.rate(ctx, c, cb, int(data[5]-'0'))
	case strings.HasPrefix(data, "task_done:"):
		return b.answerCallback(ctx, cb.CallbackID, b.taskDone(ctx, c, strings.TrimPrefix(data, "task_done:")))
	case strings.HasPrefix(data, "paper:"):
		return b.answerCallback(ctx, cb.CallbackID, b.paperButton(ctx, c, strings.TrimPrefix(data, "paper:")))
	}
	return b.answerCallback(ctx, cb.CallbackID, "This button no longer works.")
}

// paperButton runs "<action>:<paper id>" as the chat's user and says how it went;
// a paper the user may not see is the API's 404, and nothing changes.
func (b *Bot) paperButton(ctx context.Context, c *chat, data string) string {
	name, id, _ := strings.Cut(data, ":")
	act, ok := paperActions[name]
	if _, err := uuid.Parse(id); !ok || err != nil {
		return "This button no longer works."
	}
	path := strings.ReplaceAll(act.path, "{id}", url.PathEscape(id))
	if err := b.cfg.API.Do(ctx, c.pairing.UserID, act.method, path, act.body(id), nil); err != nil {
		return b.apiFailure(ctx, err)
	}
	return act.done
}
