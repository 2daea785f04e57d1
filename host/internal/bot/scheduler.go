package bot

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/lectern-research/lectern/host/internal/jobs"
	"github.com/lectern-research/lectern/host/internal/users"
	"github.com/lectern-research/lectern/sdk/messenger"
)

// catchUp is how long after its time a scheduled message may still go out (a
// bot that was down at 08:30 and is back by 11:30 sends the briefing then);
// past it, that day's message is dropped.
const catchUp = 3 * time.Hour

// keepDeliveries is how long the ledger remembers a delivery: far longer than
// any local date can last.
const keepDeliveries = 14 * 24 * time.Hour

// maxAlerts bounds the job-failure alerts one tick sends.
const maxAlerts = 50

// message is a scheduled message; empty text means nothing to say today.
type message struct {
	text    string
	buttons [][]messenger.Button
}

// schedule is one kind of scheduled message, at a local time of day (and on one
// weekday when weekly).
type schedule struct {
	kind         string
	hour, minute int
	weekly       bool
	weekday      time.Weekday
	build        func(ctx context.Context, b *Bot, p *users.Pairing) (message, error)
}

// schedules are the scheduled messages (REFERENCE §7), in each user's own time
// zone.
var schedules = []schedule{
	{kind: "briefing", hour: 8, minute: 30, build: buildBriefing},
	{kind: "pulse", hour: 9, minute: 0, build: buildPulse},
	{kind: "author_alert", hour: 9, minute: 5, build: buildAuthorAlert},
	{kind: "digest", hour: 9, minute: 0, weekly: true, weekday: time.Monday, build: buildDigest},
	{kind: "deadline", hour: 12, minute: 0, build: buildDeadlines},
	{kind: "review_reminder", hour: 14, minute: 0, build: buildReviewReminder},
}

// Tick delivers every scheduled message whose local time has come, to every
// paired user, and reports new job failures to the owner's chat. One user's
// failure is logged and leaves the others' deliveries alone; the error says how
// many failed.
func (b *Bot) Tick(ctx context.Context) error {
	now := b.cfg.Now()
	pairings, err := users.Pairings(ctx, b.cfg.Pool)
	if err != nil {
		return err
	}
	// What was claimed in the last two days (every delivery of a local date that
	// can still be today somewhere), read once: a tick inside the catch-up
	// windows then costs one query, not one insert per user and kind.
	var claimed map[delivery]bool
	if !b.noPreload {
		if claimed, err = (ledger{b.cfg.Pool}).claimedSince(ctx, now.Add(-48*time.Hour)); err != nil {
			return err
		}
	}
	failed := 0
	for i := range pairings {
		for _, s := range schedules {
			if err := b.deliver(ctx, &pairings[i], s, now, claimed); err != nil {
				failed++
				b.cfg.Logger.WarnContext(ctx, "bot: scheduled delivery", "kind", s.kind, "user", pairings[i].UserID, "error", err)
			}
		}
	}
	if err := b.alertFailures(ctx, now); err != nil {
		failed++
		b.cfg.Logger.WarnContext(ctx, "bot: job-failure alerts", "error", err)
	}
	if err := (ledger{b.cfg.Pool}).prune(ctx, now.Add(-keepDeliveries)); err != nil {
		b.cfg.Logger.WarnContext(ctx, "bot: prune deliveries", "error", err)
	}
	if failed > 0 {
		return fmt.Errorf("bot: %d scheduled deliveries failed; they are tried again on the next tick", failed)
	}
	return nil
}

// deliver sends p's message of schedule s when its local time has come and it
// was not delivered today: claimed first, marked sent only once the messenger
// confirmed it, released when anything failed.
func (b *Bot) deliver(ctx context.Context, p *users.Pairing, s schedule, now time.Time, claimed map[delivery]bool) error {
	local := localNow(now, p.Timezone)
	if s.weekly && local.Weekday() != s.weekday {
		return nil
	}
	slot := time.Date(local.Year(), local.Month(), local.Day(), s.hour, s.minute, 0, 0, local.Location())
	if local.Before(slot) || !local.Before(slot.Add(catchUp)) {
		return nil
	}
	d := delivery{user: p.UserID, kind: s.kind, date: local.Format(time.DateOnly)}
	if claimed[d] {
		return nil
	}
	d.chat = p.ChatID
	return b.once(ctx, d, now, func() (message, error) { return s.build(ctx, b, p) })
}

// once sends d's message unless d was claimed before.
func (b *Bot) once(ctx context.Context, d delivery, now time.Time, build func() (message, error)) error {
	l := ledger{b.cfg.Pool}
	ok, err := l.claim(ctx, d, now)
	if err != nil || !ok {
		return err
	}
	msg, err := build()
	var id string
	if err == nil && msg.text != "" {
		id, err = b.post(ctx, d.chat, msg.text, msg.buttons)
	}
	if err != nil {
		if rerr := l.release(context.WithoutCancel(ctx), d); rerr != nil {
			return errors.Join(err, rerr)
		}
		return err
	}
	return l.sent(context.WithoutCancel(ctx), d, id, b.cfg.Now())
}

func buildBriefing(ctx context.Context, b *Bot, p *users.Pairing) (message, error) {
	text, err := b.briefing(ctx, p)
	return message{text: text}, err
}

// buildPulse is the morning deck's top five with their buttons, labelled when
// stale or made with fewer signals; nothing when there is no card.
func buildPulse(ctx context.Context, b *Bot, p *users.Pairing) (message, error) {
	d, err := b.deck(ctx, p.UserID)
	if err != nil || len(d.Cards) == 0 {
		return message{}, err
	}
	var sb strings.Builder
	sb.WriteString("Your Pulse for today:\n")
	sb.WriteString(deckLabel(d))
	var buttons [][]messenger.Button
	for i, c := range d.Cards[:min(5, len(d.Cards))] {
		if c.Paper == nil {
			continue
		}
		n := strconv.Itoa(i + 1)
		fmt.Fprintf(&sb, "\n%s. %s", n, cardText(c))
		buttons = append(buttons, []messenger.Button{
			{Text: n + " Save", CallbackData: "paper:save:" + c.PaperID},
			{Text: n + " 👍", CallbackData: "paper:up:" + c.PaperID},
			{Text: n + " 👎", CallbackData: "paper:down:" + c.PaperID},
		})
	}
	return message{text: sb.String(), buttons: buttons}, nil
}

// authorSignal is the name of Pulse's followed-author signal (pulse/score).
const authorSignal = "author_bonus"

// buildAuthorAlert tells of today's new papers by authors the user follows:
// the cards of today's deck that the followed-author signal lifted. A stale deck
// (yesterday's) has nothing new, so it alerts nothing.
func buildAuthorAlert(ctx context.Context, b *Bot, p *users.Pairing) (message, error) {
	d, err := b.deck(ctx, p.UserID)
	if err != nil || d.Stale {
		return message{}, err
	}
	var sb strings.Builder
	var buttons [][]messenger.Button
	n := 0
	for _, c := range d.Cards {
		if c.Paper == nil || c.Signals[authorSignal] <= 0 {
			continue
		}
		n++
		if n == 1 {
			sb.WriteString("New from authors you follow:")
		}
		fmt.Fprintf(&sb, "\n%d. %s", n, cardText(c))
		buttons = append(buttons, []messenger.Button{
			{Text: strconv.Itoa(n) + " Save", CallbackData: "paper:save:" + c.PaperID},
			{Text: strconv.Itoa(n) + " 👍", CallbackData: "paper:up:" + c.PaperID},
		})
	}
	if n == 0 {
		return message{}, nil
	}
	return message{text: truncate(sb.String(), 3500), buttons: buttons}, nil
}

// buildDigest is the weekly digest on Mondays.
func buildDigest(ctx context.Context, b *Bot, p *users.Pairing) (message, error) {
	var w struct {
		PaperCount int    `json:"paper_count"`
		Message    string `json:"message"`
		Topics     []struct {
			Name       string `json:"name"`
			PaperCount int    `json:"paper_count"`
		} `json:"topics"`
	}
	if err := b.cfg.API.Do(ctx, p.UserID, http.MethodGet, "/api/digest/weekly?days=7", nil, &w); err != nil {
		return message{}, err
	}
	if w.PaperCount == 0 {
		return message{}, nil
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "Your week: %d papers.", w.PaperCount)
	for _, t := range w.Topics {
		fmt.Fprintf(&sb, "\n• %s: %d papers", t.Name, t.PaperCount)
	}
	return message{text: truncate(sb.String(), 3500)}, nil
}

// buildDeadlines warns of milestones due within three days (red within one).
func buildDeadlines(ctx context.Context, b *Bot, p *users.Pairing) (message, error) {
	local := localNow(b.cfg.Now(), p.Timezone)
	today := time.Date(local.Year(), local.Month(), local.Day(), 0, 0, 0, 0, local.Location())
	_, due, err := b.openWork(ctx, p, today, 3)
	if err != nil || len(due) == 0 {
		return message{}, err
	}
	var sb strings.Builder
	sb.WriteString("Deadlines coming up:")
	soon := today.AddDate(0, 0, 1).Format(time.DateOnly)
	for _, m := range due {
		mark := "•"
		if m.DueDate <= soon {
			mark = "🔴"
		}
		fmt.Fprintf(&sb, "\n%s %s — due %s", mark, m.Title, m.DueDate)
	}
	return message{text: sb.String()}, nil
}

// buildReviewReminder reminds of due cards, only when some are due.
func buildReviewReminder(ctx context.Context, b *Bot, p *users.Pairing) (message, error) {
	n, err := b.dueCount(ctx, p)
	if err != nil || n == 0 {
		return message{}, err
	}
	return message{text: fmt.Sprintf("%d cards are due for review.", n),
		buttons: [][]messenger.Button{{{Text: "Start review", CallbackData: "start_review"}}}}, nil
}

// alertFailures tells the owner's chat (messenger.owner_chat_id) of each job
// that failed for good in the last day, once. The alert names the job's kind,
// id and error code, never the user or their data.
func (b *Bot) alertFailures(ctx context.Context, now time.Time) error {
	owner, err := b.cfg.OwnerChatFunc(ctx)
	if err != nil || owner == "" {
		return err
	}
	fails, err := jobs.RecentFailures(ctx, b.cfg.Pool, now.Add(-24*time.Hour), maxAlerts)
	if err != nil {
		return err
	}
	var errs []error
	for _, f := range fails {
		d := delivery{user: f.UserID, kind: "job_failure", date: f.At.UTC().Format(time.DateOnly),
			ref: strconv.FormatInt(f.EventID, 10), chat: owner}
		text := fmt.Sprintf("A job failed for good: %s (job %d), error code %s, at %s.",
			f.Kind, f.JobID, f.Code, f.At.UTC().Format("2 Jan 15:04 UTC"))
		if err := b.once(ctx, d, now, func() (message, error) { return message{text: text}, nil }); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
