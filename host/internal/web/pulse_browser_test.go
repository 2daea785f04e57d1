package web

import (
	"context"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/lectern-research/lectern/host/internal/pulse"
	"github.com/lectern-research/lectern/host/internal/search"
)

// TestBrowserPulse drives the Today page in headless Chromium: a deck made by the
// real nightly pipeline from a seeded source (no internet; Semantic Scholar is
// rate-limited), rated with the keyboard in place (the page never reloads) with
// each rating checked in the database, the help, opening a paper, then the
// weekly summary and the weights editor. Screenshots: test-output/browser/
// pulse-today.png, pulse-today-rated.png, pulse-help.png, pulse-weekly.png,
// pulse-weights.png, pulse-stale.png, pulse-empty.png, pulse-phone.png.
func TestBrowserPulse(t *testing.T) {
	t.Parallel()
	s := newStackSources(t, true, func() []search.Named {
		return []search.Named{{Name: "arxiv", Searcher: fieldShelf{}}, {Name: "semantic_scholar", Searcher: limitedSource{}}}
	})
	ctx := newBrowser(t)
	base := s.dash.URL
	bg := context.Background()

	t.Run("pulse", func(t *testing.T) {
		step(t, ctx, "create the admin",
			navigate(base+"/"),
			chromedp.WaitVisible(chromedp.CSS(`form[action="/onboarding/admin"] #email`)),
			chromedp.SendKeys(chromedp.CSS("#email"), "ada@example.org"),
			chromedp.Submit(chromedp.CSS("#email")),
			chromedp.WaitVisible(chromedp.CSS(`a[href="/onboarding?step=paper"]`)))
		step(t, ctx, "the empty deck of someone who follows nothing",
			navigate(base+"/today"),
			chromedp.WaitVisible(chromedp.CSS(`[data-empty-deck] a[href="/pulse/start"]`)))
		viewport(t, ctx, "empty")
		var user uuid.UUID
		require.NoError(t, s.pool.QueryRow(bg, `SELECT id FROM users WHERE email = 'ada@example.org'`).Scan(&user))
		_, err := s.app.PulseGen.Store.AddTopic(bg, user, pulse.Topic{Name: "Retrieval", Query: "passage retrieval rank fusion dense lexical"})
		require.NoError(t, err)
		_, err = s.app.PulseGen.Run(bg, user, time.Now().UTC().Format(time.DateOnly))
		require.NoError(t, err)

		step(t, ctx, "open today's deck",
			navigate(base+"/"),
			chromedp.WaitVisible(chromedp.CSS(`[data-pulse-deck] [data-card]`)),
			chromedp.WaitVisible(chromedp.CSS(`[data-deck-keys]`)))
		loc, err := chromedp.Run(ctx, chromedp.Location())
		require.NoError(t, err)
		require.Equal(t, base+"/today", loc, "someone who follows a topic lands on today's deck")
		ids, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll("[data-card]")).map(c => c.dataset.card)`))
		require.NoError(t, err)
		require.Len(t, ids, 10)
		step(t, ctx, "open the first card's breakdown",
			chromedp.Click(chromedp.CSS(`#card-`+ids[0]+` .breakdown summary`)),
			chromedp.WaitVisible(chromedp.CSS(`#card-`+ids[0]+` table.signals`)))
		shot(t, ctx, "today")

		markPage(t, ctx)
		press := func(what string, keys ...string) {
			t.Helper()
			for _, k := range keys {
				step(t, ctx, what+": "+k, chromedp.KeyEvent(k))
			}
		}
		waitRated := func(id, action string) {
			t.Helper()
			step(t, ctx, "card "+id+" rated "+action,
				chromedp.WaitVisible(chromedp.CSS(`#card-`+id+`[data-rated="`+action+`"] [data-card-status]`)))
		}
		step(t, ctx, "focus the page", chromedp.Click(chromedp.CSS("h1")))
		press("up-vote the first", "u")
		waitRated(ids[0], "up")
		press("up-vote the second", "j", "u")
		waitRated(ids[1], "up")
		press("down-vote the third", "j", "d")
		waitRated(ids[2], "down")
		press("save the fourth", "j", "s")
		waitRated(ids[3], "save")
		press("dismiss the fifth", "j", "x")
		waitRated(ids[4], "dismiss")
		require.Equal(t, "positive/pulse_thumbs", thumb(t, s, user, ids[0]))
		require.Equal(t, "positive/pulse_thumbs", thumb(t, s, user, ids[1]))
		require.Equal(t, "negative/pulse_thumbs", thumb(t, s, user, ids[2]))
		require.Equal(t, "to_read", state(t, s, user, ids[3]))
		require.Equal(t, "trash", state(t, s, user, ids[4]))
		require.Equal(t, "negative/dismiss_combined", thumb(t, s, user, ids[4]))
		require.Empty(t, thumb(t, s, user, ids[5]), "the cards not rated are untouched")
		still, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.body.dataset.before === "1"`))
		require.NoError(t, err)
		require.True(t, still, "the ratings were made in place, without a reload")
		require.Equal(t, "Saved to your reading list.", read(t, ctx, `#card-`+ids[3]+` [data-card-status]`))

		press("back to the fourth", "k")
		cur, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector("[data-pulse-deck]").dataset.current`))
		require.NoError(t, err)
		require.Equal(t, ids[3], cur, "k moves back")
		shot(t, ctx, "today-rated")

		requireHidden(t, ctx, "[data-deck-help]", "the help before ?")
		press("show the help", "?")
		step(t, ctx, "the help shows", chromedp.WaitVisible(chromedp.CSS("[data-deck-help]")))
		viewport(t, ctx, "help")
		press("hide the help", kb.Escape)
		requireHidden(t, ctx, "[data-deck-help]", "the help after Escape")

		press("open the fourth", "o")
		step(t, ctx, "the paper opens", chromedp.WaitVisible(chromedp.CSS(`form[action="/papers/`+ids[3]+`/state"]`)))

		step(t, ctx, "the weekly summary",
			navigate(base+"/weekly?days=7"),
			chromedp.WaitVisible(chromedp.CSS(".weekly-topic")))
		text := read(t, ctx, "main")
		require.Contains(t, text, "2 papers since")
		require.Contains(t, text, "Retrieval")
		shot(t, ctx, "weekly")

		step(t, ctx, "the weights editor",
			navigate(base+"/today/weights"),
			chromedp.WaitVisible(chromedp.CSS(`[data-weight-range="w-recency"]`)),
			chromedp.SetValue(chromedp.CSS("#w-recency"), ""),
			chromedp.SendKeys(chromedp.CSS("#w-recency"), "0.4"),
			chromedp.Click(chromedp.CSS(`form[data-weights] button.primary`)),
			chromedp.WaitVisible(chromedp.CSS(".flash")))
		shot(t, ctx, "weights")
		set, err := s.app.PulseGen.Store.Settings(bg, user)
		require.NoError(t, err)
		require.InDelta(t, 0.4, set.Weights["recency"], 1e-9)
		rng, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('[data-weight-range="w-recency"]').value`))
		require.NoError(t, err)
		require.Equal(t, "0.4", rng, "the slider shows the saved weight")

		// The night's run has not happened yet: the deck of two days ago stands in.
		_, err = s.pool.Exec(bg, `UPDATE pulse_decks SET deck_date = deck_date - 2, generated_at = generated_at - interval '2 days'
			WHERE user_id = $1`, user)
		require.NoError(t, err)
		step(t, ctx, "a stale deck",
			navigate(base+"/today"),
			chromedp.WaitVisible(chromedp.CSS("[data-stale]")))
		require.Contains(t, read(t, ctx, "[data-stale]"), "tonight's run has not produced a deck yet")
		// What was rated before shows as rated after a reload.
		for i, action := range []string{"up", "up", "down", "save", "dismiss"} {
			require.Equal(t, action, attr(t, ctx, "#card-"+ids[i], "data-rated"), "card %d", i+1)
		}
		requireHidden(t, ctx, "#card-"+ids[5]+" [data-card-status]", "the status of a card not rated")
		viewport(t, ctx, "stale")
		step(t, ctx, "the deck on a phone",
			chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile),
			chromedp.Reload(),
			chromedp.WaitVisible(chromedp.CSS("[data-pulse-deck]")))
		viewport(t, ctx, "phone")
	})
}
