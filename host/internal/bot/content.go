package bot

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/lectern-research/lectern/host/internal/users"
)

// deckCard is a card of the API's Pulse deck.
type deckCard struct {
	PaperID string             `json:"paper_id"`
	Rank    int                `json:"rank"`
	Why     string             `json:"why"`
	Signals map[string]float64 `json:"signals"`
	Paper   *struct {
		paperItem
		Overlay struct {
			InLibrary bool   `json:"in_library"`
			State     string `json:"state"`
			Starred   bool   `json:"starred"`
		} `json:"overlay"`
	} `json:"paper"`
}

// deck is the API's answer to GET /api/pulse/today.
type deck struct {
	Date           string     `json:"deck_date"`
	Cards          []deckCard `json:"cards"`
	Stale          bool       `json:"is_stale"`
	StaleAgeDays   int        `json:"stale_age_days"`
	DegradedReason string     `json:"degraded_reason"`
	Message        string     `json:"message"`
}

func (b *Bot) deck(ctx context.Context, user uuid.UUID) (deck, error) {
	var d deck
	err := b.cfg.API.Do(ctx, user, http.MethodGet, "/api/pulse/today", nil, &d)
	return d, err
}

// deckLabel says when a deck is old or was made with fewer signals than usual.
func deckLabel(d deck) string {
	var parts []string
	if d.Stale {
		parts = append(parts, fmt.Sprintf("This deck is %d days old (no newer one was made).", d.StaleAgeDays))
	}
	if d.DegradedReason != "" {
		parts = append(parts, "This deck was made with fewer signals than usual.")
	}
	if len(parts) == 0 {
		return ""
	}
	return strings.Join(parts, " ") + "\n"
}

func cardText(c deckCard) string {
	text := paperLine(c.Paper.paperItem)
	if c.Why != "" {
		text += "\nWhy: " + c.Why
	}
	return text
}

// dueCount is how many of the user's cards are due now (up to 500).
func (b *Bot) dueCount(ctx context.Context, p *users.Pairing) (int, error) {
	var due struct {
		Items []struct {
			ID string `json:"id"`
		} `json:"items"`
	}
	if err := b.cfg.API.Do(ctx, p.UserID, http.MethodGet, "/api/reviews/due?limit=500", nil, &due); err != nil {
		return 0, err
	}
	return len(due.Items), nil
}

// countPapers counts the user's library papers in view (up to 100).
func (b *Bot) countPapers(ctx context.Context, p *users.Pairing, view string) ([]paperItemDated, error) {
	var page struct {
		Items []paperItemDated `json:"items"`
	}
	q := url.Values{"scope": {"library"}, "view": {view}, "limit": {"100"}}
	if err := b.cfg.API.Do(ctx, p.UserID, http.MethodGet, "/api/papers?"+q.Encode(), nil, &page); err != nil {
		return nil, err
	}
	return page.Items, nil
}

type paperItemDated struct {
	ID      string `json:"id"`
	Overlay struct {
		AddedAt *time.Time `json:"added_at"`
	} `json:"overlay"`
}

type milestone struct {
	Title     string     `json:"title"`
	DueDate   string     `json:"due_date"`
	Completed *time.Time `json:"completed_at"`
}

// openWork is the user's open tasks and the milestones not yet reached, due
// within days of today (their local date), soonest first.
func (b *Bot) openWork(ctx context.Context, p *users.Pairing, today time.Time, days int) (openTasks int, due []milestone, err error) {
	var projects struct {
		Items []project `json:"items"`
	}
	if err := b.cfg.API.Do(ctx, p.UserID, http.MethodGet, "/api/projects", nil, &projects); err != nil {
		return 0, nil, err
	}
	limit := today.AddDate(0, 0, days).Format(time.DateOnly)
	for _, pr := range projects.Items {
		if pr.Status == "archived" {
			continue
		}
		openTasks += pr.OpenTasks
		var ms struct {
			Items []milestone `json:"items"`
		}
		if err := b.cfg.API.Do(ctx, p.UserID, http.MethodGet, "/api/projects/"+url.PathEscape(pr.ID)+"/milestones", nil, &ms); err != nil {
			return 0, nil, err
		}
		for _, m := range ms.Items {
			if m.Completed == nil && m.DueDate <= limit {
				m.Title = pr.Name + ": " + m.Title
				due = append(due, m)
			}
		}
	}
	return openTasks, due, nil
}

// briefing is the daily briefing: papers added today, the inbox, cards due, open
// tasks and the milestones of the coming week, counted in the user's time zone.
func (b *Bot) briefing(ctx context.Context, p *users.Pairing) (string, error) {
	now := localNow(b.cfg.Now(), p.Timezone)
	midnight := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, now.Location())
	library, err := b.countPapers(ctx, p, "all_non_trash")
	if err != nil {
		return "", err
	}
	added := 0
	for _, it := range library {
		if it.Overlay.AddedAt != nil && !it.Overlay.AddedAt.Before(midnight) {
			added++
		}
	}
	inbox, err := b.countPapers(ctx, p, "inbox")
	if err != nil {
		return "", err
	}
	due, err := b.dueCount(ctx, p)
	if err != nil {
		return "", err
	}
	tasks, milestones, err := b.openWork(ctx, p, midnight, 7)
	if err != nil {
		return "", err
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "Good morning. Your briefing for %s:\n", now.Format("Monday 2 January"))
	fmt.Fprintf(&sb, "• %d papers added today, %d in your inbox\n", added, len(inbox))
	fmt.Fprintf(&sb, "• %d cards due (/review)\n", due)
	fmt.Fprintf(&sb, "• %d open tasks", tasks)
	for _, m := range milestones {
		fmt.Fprintf(&sb, "\n• Milestone %s due %s", m.Title, m.DueDate)
	}
	return sb.String(), nil
}
