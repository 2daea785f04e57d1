package bot

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/lectern-research/lectern/host/internal/users"
	"github.com/lectern-research/lectern/sdk/messenger"
)

// commandFunc answers one command of a paired chat.
type commandFunc func(ctx context.Context, b *Bot, c *chat, args string) error

// Command is one entry of the command menu.
type Command struct {
	Name        string
	Description string
}

// Commands is the command menu, in the order /help lists it (/cancel is left
// out of the menu: it only ends a review).
var Commands = []Command{
	{"papers", "Recent papers of your library, or /papers <words> to search it"},
	{"inbox", "Unread papers in your inbox"},
	{"next", "The best Pulse card you have not acted on"},
	{"pulse_now", "Make today's Pulse deck now"},
	{"briefing", "Today in numbers"},
	{"review", "Review the cards that are due"},
	{"stats", "Your review statistics"},
	{"ask", "/ask <question>: a cited answer from your papers"},
	{"discover", "/discover <words>: search the paper sources"},
	{"projects", "Your projects"},
	{"newproject", "/newproject <name>: start a project"},
	{"tasks", "Tasks in progress"},
	{"done", "/done <task id>: mark a task done"},
	{"whoami", "Which Lectern account this chat acts for"},
	{"unpair", "Unpair this chat"},
	{"help", "This list"},
}

var commandFuncs = map[string]commandFunc{
	"start":      cmdHelp,
	"help":       cmdHelp,
	"whoami":     cmdWhoami,
	"unpair":     cmdUnpair,
	"papers":     cmdPapers,
	"inbox":      cmdInbox,
	"next":       cmdNext,
	"pulse_now":  cmdPulseNow,
	"briefing":   cmdBriefing,
	"review":     cmdReview,
	"cancel":     cmdCancel,
	"stats":      cmdStats,
	"ask":        cmdAsk,
	"discover":   cmdDiscover,
	"projects":   cmdProjects,
	"newproject": cmdNewProject,
	"tasks":      cmdTasks,
	"done":       cmdDone,
}

// command answers /name args.
func (b *Bot) command(ctx context.Context, c *chat, name, args string) error {
	if name == "pair" {
		return b.pair(ctx, c, args)
	}
	if c.pairing == nil {
		return b.send(ctx, c.id, pairPrompt, nil)
	}
	fn, ok := commandFuncs[name]
	if !ok {
		return b.send(ctx, c.id, "I do not know /"+name+". Send /help to see what I can do.", nil)
	}
	if name != "help" && name != "start" && name != "cancel" {
		l, ok := limitsByName[name]
		if !ok {
			l = limitDefault
		}
		if allowed, wait := b.limits.allow(c.id, name, l); !allowed {
			return b.send(ctx, c.id, fmt.Sprintf("Too many requests. Try /%s again in %d seconds.", name, int(math.Ceil(wait.Seconds()))), nil)
		}
	}
	return fn(ctx, b, c, args)
}

// pair answers /pair <token>: only in a private chat; the token is consumed once.
func (b *Bot) pair(ctx context.Context, c *chat, token string) error {
	if !b.cfg.PrivateFunc(c.u) {
		return b.send(ctx, c.id, "Pairing works only in a private chat with me, never in a group. Open a private chat and send /pair <token> there.", nil)
	}
	if allowed, wait := b.limits.allow(c.id, "pair", limitDefault); !allowed {
		return b.send(ctx, c.id, fmt.Sprintf("Too many tries. Wait %d seconds, then send /pair <token> again.", int(math.Ceil(wait.Seconds()))), nil)
	}
	if token == "" || utf8.RuneCountInString(token) > users.MaxPairingTokenLen {
		return b.send(ctx, c.id, "Send the token from Settings → Integrations as /pair <token>.", nil)
	}
	res, err := users.Pair(ctx, b.cfg.Pool, token, c.id, c.u.From.Username, b.cfg.Now())
	switch {
	case errors.Is(err, users.ErrChatTaken):
		return b.send(ctx, c.id, "This chat is paired with another Lectern account. That account must send /unpair here first.", nil)
	case err != nil:
		b.cfg.Logger.ErrorContext(ctx, "bot: pair a chat", "error", err)
		return b.send(ctx, c.id, failedText, nil)
	}
	switch res.Outcome {
	case users.OutcomeInvalid:
		return b.send(ctx, c.id, "That token is not valid. Create a new one in Settings → Integrations.", nil)
	case users.OutcomeUsed:
		return b.send(ctx, c.id, "That token was used already. Create a new one in Settings → Integrations.", nil)
	case users.OutcomeExpired:
		return b.send(ctx, c.id, "That token has expired (tokens last 15 minutes). Create a new one in Settings → Integrations.", nil)
	}
	if res.PriorChatID != "" {
		if err := b.send(ctx, res.PriorChatID, "Your Lectern account was paired with another chat, so this chat is no longer paired.", nil); err != nil {
			b.cfg.Logger.WarnContext(ctx, "bot: tell the old chat it was unpaired", "error", err)
		}
	}
	return b.send(ctx, c.id, "Paired. This chat now acts for your Lectern account. Send /help to see what I can do.", nil)
}

func cmdHelp(ctx context.Context, b *Bot, c *chat, _ string) error {
	var sb strings.Builder
	sb.WriteString("What I can do:\n")
	for _, cmd := range Commands {
		fmt.Fprintf(&sb, "/%s — %s\n", cmd.Name, cmd.Description)
	}
	if _, ok := b.cfg.Transport.(messenger.WithDownloads); ok {
		sb.WriteString("Send me a paper as a PDF file to add it to your library.\n")
	}
	return b.send(ctx, c.id, strings.TrimSpace(sb.String()), nil)
}

type me struct {
	Email       string `json:"email"`
	DisplayName string `json:"display_name"`
	Timezone    string `json:"timezone"`
}

func cmdWhoami(ctx context.Context, b *Bot, c *chat, _ string) error {
	var m me
	if err := b.cfg.API.Do(ctx, c.pairing.UserID, http.MethodGet, "/api/me", nil, &m); err != nil {
		return b.send(ctx, c.id, b.apiFailure(ctx, err), nil)
	}
	name := m.Email
	if m.DisplayName != "" {
		name = m.DisplayName + " (" + m.Email + ")"
	}
	return b.send(ctx, c.id, fmt.Sprintf("This chat acts for %s, time zone %s, paired since %s.",
		name, m.Timezone, c.pairing.PairedAt.UTC().Format("2 Jan 2006 15:04 UTC")), nil)
}

func cmdUnpair(ctx context.Context, b *Bot, c *chat, _ string) error {
	b.endReview(c.id)
	if _, err := users.Unpair(ctx, b.cfg.Pool, c.pairing.UserID); err != nil {
		b.cfg.Logger.ErrorContext(ctx, "bot: unpair", "error", err)
		return b.send(ctx, c.id, failedText, nil)
	}
	return b.send(ctx, c.id, "Unpaired. This chat no longer acts for your Lectern account; any pairing token you had is void.", nil)
}

// paperItem is the part of a paper of the API's feed the bot shows.
type paperItem struct {
	ID      string `json:"id"`
	Title   string `json:"title"`
	Authors []struct {
		Name string `json:"name"`
	} `json:"authors"`
	Overlay struct {
		State   string `json:"state"`
		Starred bool   `json:"starred"`
	} `json:"overlay"`
}

type paperPage struct {
	Items []paperItem `json:"items"`
}

// paperButtons are the buttons under a paper: save, skip, star, trash, and the
// Pulse thumbs.
func paperButtons(id string, starred bool) [][]messenger.Button {
	star := messenger.Button{Text: "☆ Star", CallbackData: "paper:star:" + id}
	if starred {
		star = messenger.Button{Text: "★ Unstar", CallbackData: "paper:unstar:" + id}
	}
	return [][]messenger.Button{
		{{Text: "Save", CallbackData: "paper:save:" + id}, {Text: "Skip", CallbackData: "paper:skip:" + id}, star, {Text: "Trash", CallbackData: "paper:trash:" + id}},
		{{Text: "👍", CallbackData: "paper:up:" + id}, {Text: "👎", CallbackData: "paper:down:" + id}},
	}
}

func paperLine(p paperItem) string {
	line := p.Title
	if len(p.Authors) > 0 {
		line += " — " + p.Authors[0].Name
		if len(p.Authors) > 1 {
			line += " et al."
		}
	}
	return line
}

// sendPapers sends a header, then each paper as its own message with its buttons.
func (b *Bot) sendPapers(ctx context.Context, c *chat, path, header, empty string) error {
	var page paperPage
	if err := b.cfg.API.Do(ctx, c.pairing.UserID, http.MethodGet, path, nil, &page); err != nil {
		return b.send(ctx, c.id, b.apiFailure(ctx, err), nil)
	}
	if len(page.Items) == 0 {
		return b.send(ctx, c.id, empty, nil)
	}
	if err := b.send(ctx, c.id, header, nil); err != nil {
		return err
	}
	for _, p := range page.Items {
		if err := b.send(ctx, c.id, paperLine(p), paperButtons(p.ID, p.Overlay.Starred)); err != nil {
			return err
		}
	}
	return nil
}

func cmdPapers(ctx context.Context, b *Bot, c *chat, args string) error {
	q := url.Values{"scope": {"library"}, "limit": {"5"}}
	header := "Your latest papers:"
	if args != "" {
		q.Set("q", args)
		header = "Papers of your library matching “" + args + "”:"
	}
	return b.sendPapers(ctx, c, "/api/papers?"+q.Encode(), header, "No papers found in your library.")
}

func cmdInbox(ctx context.Context, b *Bot, c *chat, _ string) error {
	q := url.Values{"scope": {"library"}, "view": {"inbox"}, "limit": {"5"}}
	return b.sendPapers(ctx, c, "/api/papers?"+q.Encode(), "Unread in your inbox:", "Your inbox is empty.")
}

func cmdPulseNow(ctx context.Context, b *Bot, c *chat, _ string) error {
	if err := b.cfg.API.Do(ctx, c.pairing.UserID, http.MethodPost, "/api/pulse/generate", struct{}{}, nil); err != nil {
		return b.send(ctx, c.id, b.apiFailure(ctx, err), nil)
	}
	return b.send(ctx, c.id, "Pulse is making today's deck. Send /next when it is ready.", nil)
}

func cmdNext(ctx context.Context, b *Bot, c *chat, _ string) error {
	d, err := b.deck(ctx, c.pairing.UserID)
	if err != nil {
		return b.send(ctx, c.id, b.apiFailure(ctx, err), nil)
	}
	for _, card := range d.Cards {
		if card.Paper == nil || card.Paper.Overlay.InLibrary || card.Paper.Overlay.State == "trash" {
			continue
		}
		return b.send(ctx, c.id, deckLabel(d)+cardText(card), paperButtons(card.PaperID, card.Paper.Overlay.Starred))
	}
	msg := "No Pulse card is waiting for you."
	if d.Message != "" {
		msg = d.Message
	}
	return b.send(ctx, c.id, msg, nil)
}

func cmdBriefing(ctx context.Context, b *Bot, c *chat, _ string) error {
	text, err := b.briefing(ctx, c.pairing)
	if err != nil {
		return b.send(ctx, c.id, b.apiFailure(ctx, err), nil)
	}
	return b.send(ctx, c.id, text, nil)
}

func cmdStats(ctx context.Context, b *Bot, c *chat, _ string) error {
	var a struct {
		Streak    int      `json:"streak_days"`
		Retention *float64 `json:"true_retention"`
		Total     int      `json:"total_reviews"`
	}
	if err := b.cfg.API.Do(ctx, c.pairing.UserID, http.MethodGet, "/api/analytics?days=30", nil, &a); err != nil {
		return b.send(ctx, c.id, b.apiFailure(ctx, err), nil)
	}
	due, err := b.dueCount(ctx, c.pairing)
	if err != nil {
		return b.send(ctx, c.id, b.apiFailure(ctx, err), nil)
	}
	text := fmt.Sprintf("Last 30 days: %d reviews. Streak: %d days. Due now: %d.", a.Total, a.Streak, due)
	if a.Retention != nil {
		text += fmt.Sprintf(" True retention: %.0f%%.", *a.Retention*100)
	}
	return b.send(ctx, c.id, text, nil)
}

type project struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Status    string `json:"status"`
	OpenTasks int    `json:"open_tasks"`
}

func (b *Bot) projects(ctx context.Context, c *chat) ([]project, error) {
	var out struct {
		Items []project `json:"items"`
	}
	if err := b.cfg.API.Do(ctx, c.pairing.UserID, http.MethodGet, "/api/projects", nil, &out); err != nil {
		return nil, err
	}
	var live []project
	for _, p := range out.Items {
		if p.Status != "archived" {
			live = append(live, p)
		}
	}
	return live, nil
}

func cmdProjects(ctx context.Context, b *Bot, c *chat, _ string) error {
	list, err := b.projects(ctx, c)
	if err != nil {
		return b.send(ctx, c.id, b.apiFailure(ctx, err), nil)
	}
	if len(list) == 0 {
		return b.send(ctx, c.id, "You have no projects. Start one with /newproject <name>.", nil)
	}
	shown := list[:min(10, len(list))]
	var sb strings.Builder
	fmt.Fprintf(&sb, "Your projects (showing %d of %d):\n", len(shown), len(list))
	for _, p := range shown {
		fmt.Fprintf(&sb, "• %s — %s, %d open tasks\n", p.Name, p.Status, p.OpenTasks)
	}
	return b.send(ctx, c.id, strings.TrimSpace(sb.String()), nil)
}

func cmdNewProject(ctx context.Context, b *Bot, c *chat, args string) error {
	if args == "" {
		return b.send(ctx, c.id, "Name the project: /newproject <name>.", nil)
	}
	var p project
	if err := b.cfg.API.Do(ctx, c.pairing.UserID, http.MethodPost, "/api/projects", map[string]string{"name": args}, &p); err != nil {
		return b.send(ctx, c.id, b.apiFailure(ctx, err), nil)
	}
	return b.send(ctx, c.id, "Project “"+p.Name+"” started.", nil)
}

type task struct {
	ID     string `json:"id"`
	Title  string `json:"title"`
	Status string `json:"status"`
}

func cmdTasks(ctx context.Context, b *Bot, c *chat, _ string) error {
	list, err := b.projects(ctx, c)
	if err != nil {
		return b.send(ctx, c.id, b.apiFailure(ctx, err), nil)
	}
	var sb strings.Builder
	var buttons [][]messenger.Button
	for _, p := range list {
		var out struct {
			Items []task `json:"items"`
		}
		if err := b.cfg.API.Do(ctx, c.pairing.UserID, http.MethodGet, "/api/projects/"+url.PathEscape(p.ID)+"/tasks", nil, &out); err != nil {
			return b.send(ctx, c.id, b.apiFailure(ctx, err), nil)
		}
		for _, t := range out.Items {
			if t.Status != "in_progress" || len(buttons) >= 10 {
				continue
			}
			fmt.Fprintf(&sb, "• %s (%s) — /done %s\n", t.Title, p.Name, t.ID)
			buttons = append(buttons, []messenger.Button{{Text: "Done: " + truncate(t.Title, 40), CallbackData: "task_done:" + t.ID}})
		}
	}
	if len(buttons) == 0 {
		return b.send(ctx, c.id, "No task is in progress.", nil)
	}
	return b.send(ctx, c.id, "Tasks in progress:\n"+strings.TrimSpace(sb.String()), buttons)
}

func cmdDone(ctx context.Context, b *Bot, c *chat, args string) error {
	if args == "" {
		return b.send(ctx, c.id, "Name the task: /done <task id> (/tasks lists them).", nil)
	}
	return b.send(ctx, c.id, b.taskDone(ctx, c, args), nil)
}

// taskDone marks one of the user's tasks done and says how it went.
func (b *Bot) taskDone(ctx context.Context, c *chat, id string) string {
	var t task
	if err := b.cfg.API.Do(ctx, c.pairing.UserID, http.MethodPatch, "/api/tasks/"+url.PathEscape(id), map[string]string{"status": "done"}, &t); err != nil {
		if IsStatus(err, http.StatusNotFound) || IsStatus(err, http.StatusUnprocessableEntity) {
			return "No such task of yours. /tasks lists them."
		}
		return b.apiFailure(ctx, err)
	}
	return "Done: " + t.Title
}

func cmdDiscover(ctx context.Context, b *Bot, c *chat, args string) error {
	if args == "" {
		return b.send(ctx, c.id, "Say what to look for: /discover <words>.", nil)
	}
	var out struct {
		Items []paperItem `json:"results"`
	}
	if err := b.cfg.API.Do(ctx, c.pairing.UserID, http.MethodGet, "/api/search?"+url.Values{"q": {args}}.Encode(), nil, &out); err != nil {
		return b.send(ctx, c.id, b.apiFailure(ctx, err), nil)
	}
	if len(out.Items) == 0 {
		return b.send(ctx, c.id, "The sources found nothing for “"+args+"”.", nil)
	}
	if err := b.send(ctx, c.id, "Found for “"+args+"”:", nil); err != nil {
		return err
	}
	for _, p := range out.Items[:min(5, len(out.Items))] {
		if err := b.send(ctx, c.id, paperLine(p), paperButtons(p.ID, p.Overlay.Starred)); err != nil {
			return err
		}
	}
	return nil
}

func truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// localNow is now in the user's time zone (UTC when theirs does not load).
func localNow(now time.Time, tz string) time.Time {
	loc, err := time.LoadLocation(tz)
	if err != nil || tz == "" {
		loc = time.UTC
	}
	return now.In(loc)
}
