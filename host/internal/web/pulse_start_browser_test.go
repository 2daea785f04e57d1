package web

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"
)

// pulseShot saves a full-page screenshot as test-output/pulse-start-name.png
// (under $LECTERN_TEST_OUTPUT when set).
func pulseShot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	dir := os.Getenv("LECTERN_TEST_OUTPUT")
	if dir == "" {
		_, file, _, _ := runtime.Caller(0)
		dir = filepath.Join(filepath.Dir(file), "..", "..", "..", "test-output")
	}
	require.NoError(t, os.MkdirAll(dir, 0o755))
	sctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	png, err := chromedp.Run(sctx, chromedp.FullScreenshot(100))
	require.NoError(t, err)
	path := filepath.Join(dir, "pulse-start-"+name+".png")
	require.NoError(t, os.WriteFile(path, png, 0o644))
	t.Logf("screenshot %s", path)
}

// TestBrowserPulseStart walks a new user through the cold start in Chromium, from
// the setup wizard's last step: two fields ticked and a keyword typed, an author
// named, the empty corpus explained, a discovery run whose sources cannot be
// reached (this machine has no internet) said in words, then the shared papers
// rated up and down until the first deck is ready to make, and made.
func TestBrowserPulseStart(t *testing.T) {
	t.Parallel()
	s := newColdStack(t, true)
	ctx := newBrowser(t)
	base := s.dash.URL
	reload := func(what string, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		markPage(t, ctx)
		step(t, ctx, what, append(actions, chromedp.WaitNotPresent(chromedp.CSS("body[data-before]")))...)
	}

	step(t, ctx, "create the admin and reach the wizard's last step",
		navigate(base+"/"),
		chromedp.WaitVisible(chromedp.CSS(`form[action="/onboarding/admin"] #email`)),
		chromedp.SendKeys(chromedp.CSS("#email"), "ada@example.org"),
		chromedp.Submit(chromedp.CSS("#email")),
		chromedp.WaitVisible(chromedp.CSS(`a[href="/onboarding?step=paper"]`)),
		chromedp.Click(chromedp.CSS(`a[href="/onboarding?step=paper"]`)),
		chromedp.WaitVisible(chromedp.CSS(`main a[href="/pulse/start"]`)))
	step(t, ctx, "open the cold start from the wizard",
		chromedp.Click(chromedp.CSS(`main a[href="/pulse/start"]`)),
		chromedp.WaitVisible(chromedp.CSS("form[data-pulse-topics]")))
	pulseShot(t, ctx, "01-topics")

	reload("tick two fields, type a keyword and go on",
		chromedp.Click(chromedp.CSS(`input[name="category"][value="cs.IR"]`)),
		chromedp.Click(chromedp.CSS(`input[name="category"][value="cs.LG"]`)),
		chromedp.SendKeys(chromedp.CSS("#keywords"), "dense passage retrieval"),
		chromedp.Click(chromedp.CSS(`form[data-pulse-topics] button[type=submit]`)),
		chromedp.WaitVisible(chromedp.CSS("form[data-pulse-authors]")))
	require.Contains(t, read(t, ctx, "p.flash"), "Saved what you follow.")
	step(t, ctx, "name an author", chromedp.SendKeys(chromedp.CSS("#names"), "Grace Hopper"))
	pulseShot(t, ctx, "02-authors")

	reload("save the author and go on to rating",
		chromedp.Click(chromedp.CSS(`form[data-pulse-authors] button[type=submit]`)),
		chromedp.WaitVisible(chromedp.CSS("[data-corpus-short]")))
	require.Contains(t, read(t, ctx, "[data-corpus-short]"), "Lectern has no papers yet on what you follow.")
	pulseShot(t, ctx, "03-rate-empty-corpus")

	reload("run a discovery with the sources down",
		chromedp.Click(chromedp.CSS(`form[data-discover] button`)),
		chromedp.WaitVisible(chromedp.CSS("div.error")))
	banner := read(t, ctx, "div.error")
	require.Contains(t, banner, "None of the paper sources could be reached, so no new papers were fetched.")
	require.NotContains(t, banner, "dial tcp")
	pulseShot(t, ctx, "04-sources-down")

	// A night's discovery brought papers into the shared corpus meanwhile.
	seedShared(t, s, 8, "cs.IR", "Dense passage retrieval with hard negatives, variant",
		"We train dense passage retrieval encoders for open-domain question answering and rank passages for each query with hard negatives mined from BM25.")
	seedShared(t, s, 6, "cs.LG", "Music playlist continuation for streaming listeners, variant",
		"We continue music playlists for streaming listeners from the songs they played and the artists they follow.")
	reload("see the batch",
		navigate(base+"/pulse/start?step=rate"),
		chromedp.WaitVisible(chromedp.CSS("ul.rate-batch li[data-candidate]")))
	pulseShot(t, ctx, "05-batch")

	for i := range 9 {
		rating := "up"
		if i == 0 {
			rating = "skip"
		} else if i%2 == 0 {
			rating = "down"
		}
		reload("rate a paper "+rating,
			chromedp.Click(chromedp.CSS(`ul.rate-batch li:first-child button[value="`+rating+`"]`)),
			chromedp.WaitVisible(chromedp.CSS("[data-onboarding-progress]")))
		if i == 4 {
			pulseShot(t, ctx, "06-halfway")
		}
	}
	require.Equal(t, "8", attr(t, ctx, "[data-onboarding-progress]", "data-rated"))
	require.Contains(t, read(t, ctx, "#progress-h"), "Your first deck is ready to make")
	require.Contains(t, read(t, ctx, "p.flash"), "That makes enough ratings for your first deck.")
	pulseShot(t, ctx, "07-ready")

	reload("make the first deck now",
		chromedp.Click(chromedp.CSS(`form[action="/pulse/start/generate"] button`)),
		chromedp.WaitVisible(chromedp.CSS("p.flash")))
	require.Contains(t, read(t, ctx, "p.flash"), "Your first deck is being made")
	pulseShot(t, ctx, "08-deck-being-made")

	require.Eventually(t, func() bool {
		reload("look again", navigate(base+"/pulse/start?step=rate"), chromedp.WaitVisible(chromedp.CSS("#progress-h")))
		return read(t, ctx, "#progress-h") == "You are set up"
	}, 60*time.Second, time.Second, "the first deck was made")
	require.Equal(t, "/today", attr(t, ctx, "[data-onboarding-progress] a.button.primary", "href"))
	pulseShot(t, ctx, "09-set-up")
}
