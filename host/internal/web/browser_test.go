package web

import (
	"context"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	cdpbrowser "github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/lectern-research/lectern/host/internal/bibio"
)

// The browser suite drives headless Chromium (Debian's chromium package, which
// scripts/ensure-tools installs) through the dashboard: onboarding, both ways of
// signing in, a PDF upload with its progress bar to completion, a question with a
// cited answer, a review, and the admin pages. Every step saves a screenshot under
// $LECTERN_TEST_OUTPUT, else test-output/browser at the repository root.

// navigate is chromedp.Navigate, tried again when a navigation the page started
// itself (a finished job's reload) aborted it.
func navigate(u string) chromedp.Action[chromedp.Void] {
	return func(ctx context.Context, t *chromedp.Target) (chromedp.Void, error) {
		var err error
		for range 3 {
			if _, err = chromedp.Navigate(u)(ctx, t); err == nil || !strings.Contains(err.Error(), "ERR_ABORTED") {
				return chromedp.Void{}, err
			}
			time.Sleep(300 * time.Millisecond)
		}
		return chromedp.Void{}, err
	}
}

// chromiumPath finds the browser, or fails the test: a missing browser is a broken
// setup, not a reason to skip.
func chromiumPath(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Fatal("chromium is not installed: run scripts/ensure-tools (as root it installs Debian's chromium package; make test runs it)")
	return ""
}

// screenshotDir is where the screenshots go.
func screenshotDir(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("LECTERN_TEST_OUTPUT")
	if dir == "" {
		_, file, _, _ := runtime.Caller(0)
		dir = filepath.Join(filepath.Dir(file), "..", "..", "..", "test-output")
	}
	dir = filepath.Join(dir, "browser")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	return dir
}

// newBrowser starts headless Chromium for the test.
func newBrowser(t *testing.T) context.Context {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromiumPath(t)),
		chromedp.NoSandbox, // the tests may run as root, where Chromium's sandbox cannot start
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.WindowSize(1280, 900),
	)
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelCtx := chromedp.NewContext(alloc)
	ctx, cancelTimeout := context.WithTimeout(ctx, 150*time.Second)
	t.Cleanup(func() { cancelTimeout(); cancelCtx(); cancelAlloc() })
	require.NoError(t, chromedp.Do(ctx), "start chromium")
	return ctx
}

// shot saves a full-page screenshot named name.png.
func shot(t *testing.T, ctx context.Context, name string) {
	name = strings.SplitN(t.Name(), "/", 3)[1] + "-" + name
	t.Helper()
	sctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	png, err := chromedp.Run(sctx, chromedp.FullScreenshot(100))
	if err != nil {
		// A full-page capture can stall on a long page; the viewport still shows
		// the step.
		t.Logf("full-page screenshot failed (%v); taking the viewport", err)
		vctx, vcancel := context.WithTimeout(ctx, 15*time.Second)
		defer vcancel()
		png, err = chromedp.Run(vctx, chromedp.CaptureScreenshot())
	}
	require.NoError(t, err)
	path := filepath.Join(screenshotDir(t), name+".png")
	require.NoError(t, os.WriteFile(path, png, 0o644))
	t.Logf("screenshot %s", path)
}

// step runs actions with a bound on their time, failing with the page's text.
func step(t *testing.T, ctx context.Context, what string, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	sctx, cancel := context.WithTimeout(ctx, 45*time.Second)
	defer cancel()
	if err := chromedp.Do(sctx, actions...); err != nil {
		loc, _ := chromedp.Run(ctx, chromedp.Location())
		tctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		text, _ := chromedp.Run(tctx, chromedp.Text(chromedp.CSS("main")))
		t.Fatalf("%s: %v\nat %s:\n%s", what, err, loc, text)
	}
}

// read returns the text of the first element matching the CSS selector sel.
func read(t *testing.T, ctx context.Context, sel string) string {
	t.Helper()
	sctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	text, err := chromedp.Run(sctx, chromedp.Text(chromedp.CSS(sel)))
	require.NoError(t, err, "read %s", sel)
	return text
}

// requireHidden fails unless no element matching sel is shown: none exists, or
// none is visible (display none, or inside a closed disclosure, whose content
// Chromium skips rendering).
func requireHidden(t *testing.T, ctx context.Context, sel, what string) {
	t.Helper()
	shown, err := chromedp.Run(ctx, chromedp.Evaluate[bool](
		`Array.from(document.querySelectorAll(`+strconv.Quote(sel)+`)).some(e => e.checkVisibility())`))
	require.NoError(t, err)
	require.False(t, shown, "%s (%s) is shown", what, sel)
}

// markPage marks the page shown, so that a step can wait for the next page with
// WaitNotPresent(body[data-before]) where both pages hold what it waits for.
func markPage(t *testing.T, ctx context.Context) {
	t.Helper()
	_, err := chromedp.Run(ctx, chromedp.Evaluate[any](`document.body.dataset.before = "1"`))
	require.NoError(t, err)
}

// attr returns an attribute of the first element matching sel.
func attr(t *testing.T, ctx context.Context, sel, name string) string {
	t.Helper()
	sctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	res, err := chromedp.Run(sctx, chromedp.AttributeValue(chromedp.CSS(sel), name))
	require.NoError(t, err, "read %s of %s", name, sel)
	return res.Value
}

// TestBrowser runs the flow against the dashboard as lectern dashboard runs it
// (forwarding to the API over the network) and as lectern serve runs it (one
// address, the API's handler in process).
func TestBrowser(t *testing.T) {
	t.Parallel()
	for _, mode := range []struct {
		name      string
		inProcess bool
	}{{"standalone", false}, {"in-process", true}} {
		t.Run(mode.name, func(t *testing.T) {
			t.Parallel()
			browserFlow(t, newStackMode(t, mode.inProcess))
		})
	}
}

func browserFlow(t *testing.T, s *stack) {
	ctx := newBrowser(t)
	base := s.dash.URL
	pdf := filepath.Join(t.TempDir(), "spaced-repetition.pdf")
	require.NoError(t, os.WriteFile(pdf, samplePDF("Spaced Repetition for Readers", paperPages), 0o644))
	var paperURL string

	t.Run("onboarding", func(t *testing.T) {
		step(t, ctx, "open the dashboard",
			navigate(base+"/"),
			chromedp.WaitVisible(chromedp.CSS(`form[action="/onboarding/admin"] #email`)))
		shot(t, ctx, "01-onboarding-account")
		step(t, ctx, "create the admin",
			chromedp.SendKeys(chromedp.CSS("#email"), "ada@example.org"),
			chromedp.Submit(chromedp.CSS("#email")),
			chromedp.WaitVisible(chromedp.CSS(`a[href="/onboarding?step=paper"]`)))
		shot(t, ctx, "02-onboarding-llm")
		step(t, ctx, "skip the model step",
			chromedp.Click(chromedp.CSS(`a[href="/onboarding?step=paper"]`)),
			chromedp.WaitVisible(chromedp.CSS("#upload-file")))
	})

	t.Run("upload", func(t *testing.T) {
		step(t, ctx, "upload the PDF",
			chromedp.SetUploadFiles(chromedp.CSS("#upload-file"), []string{pdf}),
			chromedp.Click(chromedp.CSS(`form[data-upload] button[type=submit]`)),
			chromedp.WaitVisible(chromedp.CSS("[data-upload-progress] progress")))
		step(t, ctx, "follow the reading job to the paper page",
			chromedp.WaitVisible(chromedp.CSS(`.job[data-state="succeeded"]`)))
		var err error
		paperURL, err = chromedp.Run(ctx, chromedp.Location())
		require.NoError(t, err)
		value := attr(t, ctx, `.job[data-state="succeeded"] progress`, "value")
		maxV := attr(t, ctx, `.job[data-state="succeeded"] progress`, "max")
		require.Contains(t, paperURL, "/papers/")
		require.Equal(t, maxV, value, "the progress bar is full")
		shot(t, ctx, "03-upload-done")
	})

	t.Run("damaged-upload", func(t *testing.T) {
		broken := filepath.Join(t.TempDir(), "cut-short.pdf")
		whole := samplePDF("Cut short", paperPages)
		require.NoError(t, os.WriteFile(broken, whole[:len(whole)/2], 0o644))
		step(t, ctx, "upload a PDF cut short",
			navigate(base+"/library"),
			chromedp.SetUploadFiles(chromedp.CSS("#upload-file"), []string{broken}),
			chromedp.Click(chromedp.CSS(`form[data-upload] button[type=submit]`)),
			chromedp.WaitVisible(chromedp.CSS(`section[aria-labelledby="again-h"] #upload-file`)))
		require.Equal(t, "The PDF could not be read", read(t, ctx, "main h1"))
		require.Contains(t, read(t, ctx, "#error"), "The PDF is damaged or cut short; upload it again or use another copy.")
		shot(t, ctx, "03b-upload-damaged")
		step(t, ctx, "back to the paper that was read", navigate(paperURL), chromedp.WaitVisible(chromedp.CSS("#question")))
	})

	t.Run("ask", func(t *testing.T) {
		step(t, ctx, "ask a question",
			chromedp.SendKeys(chromedp.CSS("#question"), "What did the students on the adaptive schedule spend less time on?"),
			chromedp.Click(chromedp.CSS(`form[data-ask] button[type=submit]`)),
			chromedp.WaitVisible(chromedp.CSS(`[data-answer][data-done="true"] a.cite`)))
		sources := read(t, ctx, "[data-answer-sources]")
		require.Contains(t, sources, "Spaced Repetition for Readers")
		require.Contains(t, sources, "page 3")
		require.Equal(t, "[1]", read(t, ctx, `[data-answer] a.cite`), "sources are numbered from 1, in the order cited")
		require.Equal(t, "[1]", strings.TrimSpace(read(t, ctx, `[data-answer-sources] .marker`)))
		shot(t, ctx, "04-ask-cited-answer")
	})

	t.Run("summary", func(t *testing.T) {
		step(t, ctx, "summarize, following the job's progress bar until the page reloads",
			chromedp.Click(chromedp.CSS(`form[action$="/summary"] button`)),
			chromedp.WaitVisible(chromedp.CSS(`section[aria-labelledby="sum-h"] p.meta`)))
		step(t, ctx, "extract claims",
			chromedp.Click(chromedp.CSS(`form[action$="/extract"] button`)),
			chromedp.WaitVisible(chromedp.CSS(`section[aria-labelledby="ext-h"] p.meta`)))
		shot(t, ctx, "05-summary-extractions")
	})

	t.Run("review", func(t *testing.T) {
		const front = "What flattens the forgetting curve?"
		step(t, ctx, "make a card",
			navigate(paperURL),
			chromedp.SendKeys(chromedp.CSS("#front"), front),
			chromedp.SendKeys(chromedp.CSS("#back"), "Every successful review"),
			chromedp.Submit(chromedp.CSS("#front")),
			chromedp.WaitVisible(chromedp.CSS(".flash")))
		step(t, ctx, "draft cloze cards from the paper",
			chromedp.Click(chromedp.CSS(`form[action$="/cards/draft"] button`)),
			chromedp.WaitVisible(chromedp.CSS(`form[action$="/accept"] button`)))
		// The paper page again, away from the job's page, which reloads itself
		// when the job ends.
		step(t, ctx, "open the paper's drafts", navigate(paperURL), chromedp.WaitVisible(chromedp.CSS(`form[action$="/accept"] button`)))
		markPage(t, ctx)
		step(t, ctx, "accept one",
			chromedp.Click(chromedp.CSS(`form[action$="/accept"] button`)),
			chromedp.WaitNotPresent(chromedp.CSS("body[data-before]")),
			chromedp.WaitVisible(chromedp.CSS(".flash")))

		step(t, ctx, "open the review", navigate(base+"/review"), chromedp.WaitVisible(chromedp.CSS("#front-h")))
		require.Equal(t, front, read(t, ctx, "#front-h"), "the oldest card comes first")
		requireHidden(t, ctx, `button[data-key="1"]`, "the rating buttons before the answer is shown")
		step(t, ctx, "a rating key does nothing before the answer", chromedp.KeyEvent("1"), chromedp.Sleep(300*time.Millisecond))
		require.Equal(t, front, read(t, ctx, "#front-h"))
		requireHidden(t, ctx, ".flash", "no rating was recorded")
		shot(t, ctx, "06a-review-front")
		step(t, ctx, "Space shows the answer and the rating buttons",
			chromedp.KeyEvent(" "),
			chromedp.WaitVisible(chromedp.CSS(".reveal .back")),
			chromedp.WaitVisible(chromedp.CSS(`button[data-key="1"]`)))
		shot(t, ctx, "06-review-card")
		step(t, ctx, "answer Again with the key 1",
			chromedp.KeyEvent("1"),
			chromedp.WaitVisible(chromedp.CSS(".review-last p.flash")))
		require.Contains(t, read(t, ctx, ".flash"), "Again recorded.")

		// The next card is the accepted cloze draft: its back shows the answer and,
		// apart from it, the sentence with a link to the reader at its passage.
		require.Contains(t, read(t, ctx, "#front-h"), "____")
		step(t, ctx, "show the cloze card's answer", chromedp.KeyEvent(" "), chromedp.WaitVisible(chromedp.CSS(".source-sentence")))
		answer, sentence := read(t, ctx, ".reveal .back"), read(t, ctx, ".source-sentence")
		require.NotEmpty(t, answer)
		require.NotContains(t, answer, sentence, "the answer and the sentence are shown apart")
		require.Equal(t, strings.ReplaceAll(read(t, ctx, "#front-h"), "____", answer), sentence, "the front with its blanks filled is the sentence")
		link := attr(t, ctx, "a[data-reader-link]", "href")
		require.Regexp(t, `^/papers/[0-9a-f-]{36}/read\?page=\d+&passage=[0-9a-f-]{36}&start=\d+&end=\d+$`, link)
		shot(t, ctx, "06b-review-cloze-source")
		step(t, ctx, "answer Good with the key 3", chromedp.KeyEvent("3"), chromedp.WaitVisible(chromedp.CSS("[data-next-due]")))
		require.Contains(t, read(t, ctx, "[data-next-due]"), "comes back at", "only the card rated Again remains, on its step")
		shot(t, ctx, "07a-review-waiting-for-step")

		s.clock.skip(61 * time.Second) // the first learning step (1 minute) is over
		step(t, ctx, "the card rated Again comes back in the session after its step",
			navigate(base+"/review"), chromedp.WaitVisible(chromedp.CSS("#front-h")))
		require.Equal(t, front, read(t, ctx, "#front-h"))
		shot(t, ctx, "07b-review-again-is-back")
		step(t, ctx, "answer Good",
			chromedp.KeyEvent(" "), chromedp.WaitVisible(chromedp.CSS(`button[data-key="3"]`)),
			chromedp.KeyEvent("3"), chromedp.WaitVisible(chromedp.CSS("form[data-undo] button")))
		require.Contains(t, read(t, ctx, ".flash"), "Good recorded.")
		shot(t, ctx, "07-review-done")
		step(t, ctx, "going back shows no second rating of the card",
			chromedp.NavigateBack(), chromedp.WaitVisible(chromedp.CSS("main h1")))
		requireHidden(t, ctx, "#front-h", "the rated card is not offered again")
		step(t, ctx, "forward again, and undo with U",
			chromedp.NavigateForward(), chromedp.WaitVisible(chromedp.CSS("form[data-undo] button")),
			chromedp.KeyEvent("u"), chromedp.WaitVisible(chromedp.CSS("#front-h")))
		require.Contains(t, read(t, ctx, ".flash"), "The rating is undone")
		require.Equal(t, front, read(t, ctx, "#front-h"), "the card is asked again")
		step(t, ctx, "the undone card has the intervals it had before",
			chromedp.KeyEvent(" "), chromedp.WaitVisible(chromedp.CSS(`button[data-key="3"]`)))
		require.Contains(t, read(t, ctx, `button[data-key="3"]`), "10m", "Good moves it to the second step again")
		shot(t, ctx, "07c-review-undone")
		step(t, ctx, "answer Good again", chromedp.KeyEvent("3"), chromedp.WaitVisible(chromedp.CSS(".review-last p.flash")))

		step(t, ctx, "see it in the analytics",
			navigate(base+"/analytics"),
			chromedp.WaitVisible(chromedp.CSS("svg.bars rect.bar")))
		shot(t, ctx, "08-analytics")

		step(t, ctx, "open the card browser", navigate(base+"/cards"), chromedp.WaitVisible(chromedp.CSS("table.cards-table")))
		markPage(t, ctx)
		step(t, ctx, "search it for the card",
			chromedp.SendKeys(chromedp.CSS("#q"), "what flattens"),
			chromedp.Submit(chromedp.CSS("#q")),
			chromedp.WaitNotPresent(chromedp.CSS("body[data-before]")),
			chromedp.WaitVisible(chromedp.CSS("table.cards-table")))
		rows, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll("table.cards-table tbody tr").length`))
		require.NoError(t, err)
		require.Equal(t, 1, rows, "the search keeps the one card")
		shot(t, ctx, "08a-card-browser")
		step(t, ctx, "edit it",
			chromedp.Click(chromedp.CSS("table.cards-table tbody a")),
			chromedp.WaitVisible(chromedp.CSS("textarea#back")),
			chromedp.SetValue(chromedp.CSS("textarea#back"), "Each successful review"),
			chromedp.SetValue(chromedp.CSS("input#tags"), "memory fsrs"),
			chromedp.Submit(chromedp.CSS("textarea#back")),
			chromedp.WaitVisible(chromedp.CSS(".flash")))
		saved, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector("textarea#back").value`))
		require.NoError(t, err)
		require.Equal(t, "Each successful review", saved, "the editor shows the saved back")
		markPage(t, ctx)
		step(t, ctx, "suspend it",
			chromedp.Click(chromedp.CSS(`form[action$="/status"] button`)),
			chromedp.WaitNotPresent(chromedp.CSS("body[data-before]")),
			chromedp.WaitVisible(chromedp.CSS(".flash")))
		require.Contains(t, read(t, ctx, ".flash"), "suspended")
		shot(t, ctx, "08b-card-editor-suspended")
	})

	t.Run("signin", func(t *testing.T) {
		step(t, ctx, "sign out",
			chromedp.Click(chromedp.CSS(".signout button")),
			chromedp.WaitVisible(chromedp.CSS(`form[action="/signin/link"] #email`)))
		step(t, ctx, "ask for a link",
			chromedp.SendKeys(chromedp.CSS("#email"), "ada@example.org"),
			chromedp.Submit(chromedp.CSS("#email")),
			chromedp.WaitVisible(chromedp.CSS("main h1")))
		shot(t, ctx, "09-signin-link-sent")
		link := s.mail.link(t, "ada@example.org")
		u, err := url.Parse(link)
		require.NoError(t, err)
		require.Equal(t, strings.TrimPrefix(base, "http://"), u.Host, "the link points at the dashboard")
		step(t, ctx, "follow the link",
			navigate(link),
			chromedp.WaitVisible(chromedp.CSS(`nav[aria-label="Main"]`)))
		shot(t, ctx, "10-signed-in-by-link")

		step(t, ctx, "sign out again",
			chromedp.Click(chromedp.CSS(".signout button")),
			chromedp.WaitVisible(chromedp.CSS("details.card-form summary")))
		step(t, ctx, "open the used link again",
			navigate(link),
			chromedp.WaitVisible(chromedp.CSS(`#error`)))
		require.Equal(t, "This sign-in link no longer works", read(t, ctx, "main h1"))
		require.Contains(t, read(t, ctx, "#error"), "This sign-in link has expired or was used already.")
		require.Equal(t, "/signin/link", attr(t, ctx, "main form.card-form", "action"), "the page offers a new link")
		shot(t, ctx, "10b-signin-link-used")
		step(t, ctx, "sign in with the API key",
			chromedp.Click(chromedp.CSS("details.card-form summary")),
			chromedp.WaitVisible(chromedp.CSS("#api_key")),
			chromedp.SendKeys(chromedp.CSS("#api_key"), testOpsKey),
			chromedp.Submit(chromedp.CSS("#api_key")),
			chromedp.WaitVisible(chromedp.CSS(`nav[aria-label="Main"]`)))
		shot(t, ctx, "11-signed-in-by-key")
	})

	t.Run("admin", func(t *testing.T) {
		step(t, ctx, "invite a user",
			navigate(base+"/admin/users"),
			chromedp.SendKeys(chromedp.CSS("#email"), "bo@example.org"),
			chromedp.Submit(chromedp.CSS("#email")),
			chromedp.WaitVisible(chromedp.CSS(".flash")))
		users := read(t, ctx, "table.data")
		require.Contains(t, users, "bo@example.org")
		shot(t, ctx, "12-admin-users")
		step(t, ctx, "page the audit log",
			navigate(base+"/admin/audit"),
			chromedp.WaitVisible(chromedp.CSS("table.audit tbody tr")))
		audit := read(t, ctx, "table.audit")
		require.Contains(t, audit, "user.create")
		shot(t, ctx, "13-admin-audit")
		step(t, ctx, "plugins", navigate(base+"/admin/plugins"), chromedp.WaitVisible(chromedp.CSS("main h1")))
		shot(t, ctx, "14-admin-plugins")
		step(t, ctx, "language models", navigate(base+"/settings/llm"), chromedp.WaitVisible(chromedp.CSS("#roles")))
		shot(t, ctx, "15-settings-llm")
		step(t, ctx, "jobs", navigate(base+"/jobs"), chromedp.WaitVisible(chromedp.CSS(`.job[data-state="succeeded"]`)))
		shot(t, ctx, "16-jobs")
		step(t, ctx, "move the profile to New York",
			navigate(base+"/settings"),
			chromedp.WaitVisible(chromedp.CSS("#timezone")),
			chromedp.WaitReady(chromedp.CSS("datalist#timezones[data-loaded]")))
		offered, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](
			`Array.from(document.querySelectorAll("#timezones option")).map(o => o.value)`))
		require.NoError(t, err)
		require.Contains(t, offered, "Europe/Berlin")
		require.Contains(t, offered, "Asia/Kolkata")
		step(t, ctx, "pick New York",
			chromedp.SetValue(chromedp.CSS("#timezone"), "America/New_York"),
			chromedp.Submit(chromedp.CSS("#timezone")),
			chromedp.WaitVisible(chromedp.CSS(".flash")))
		require.Equal(t, "America/New_York", attr(t, ctx, "#timezone", "value"))
		shot(t, ctx, "16a-settings-time-zone")
		step(t, ctx, "jobs on New York's clock", navigate(base+"/jobs"), chromedp.WaitVisible(chromedp.CSS(`.job[data-state="succeeded"]`)))
		jobs := read(t, ctx, "ul.jobs")
		require.True(t, strings.Contains(jobs, " EST") || strings.Contains(jobs, " EDT"), jobs)
		shot(t, ctx, "16b-jobs-new-york")
	})

	t.Run("several-uploads", func(t *testing.T) {
		dir := t.TempDir()
		files := []string{filepath.Join(dir, "interleaving.pdf"), filepath.Join(dir, "retrieval-practice.pdf")}
		require.NoError(t, os.WriteFile(files[0], samplePDF("Interleaving for Readers", paperPages), 0o644))
		require.NoError(t, os.WriteFile(files[1], samplePDF("Retrieval Practice for Readers", paperPages), 0o644))
		step(t, ctx, "choose two PDFs on the library page",
			navigate(base+"/library"),
			chromedp.WaitVisible(chromedp.CSS("[data-drop-zone]")),
			chromedp.SetUploadFiles(chromedp.CSS("#upload-file"), files),
			chromedp.Click(chromedp.CSS(`form[data-upload] button[type=submit]`)),
			chromedp.WaitVisible(chromedp.CSS("[data-upload-rows] li:nth-child(2) progress")))
		step(t, ctx, "both rows reach ready",
			chromedp.WaitVisible(chromedp.CSS(`[data-upload-rows] li:nth-child(1)[data-outcome="ready"]`)),
			chromedp.WaitVisible(chromedp.CSS(`[data-upload-rows] li:nth-child(2)[data-outcome="ready"]`)))
		rows := read(t, ctx, "[data-upload-rows]")
		require.Contains(t, rows, "interleaving.pdf")
		require.Contains(t, rows, "retrieval-practice.pdf")
		require.Equal(t, 2, strings.Count(rows, "Ready."), rows)
		step(t, ctx, "the new papers join the library's list without a reload",
			chromedp.WaitVisible(chromedp.CSS(`[data-library-list] .paper-item a[href^="/papers/"]`)),
			chromedp.Poll[chromedp.Void](`(() => { const t = document.querySelector("[data-library-list]").textContent;
				return t.includes("Interleaving for Readers") && t.includes("Retrieval Practice for Readers"); })()`))
		still, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll("[data-upload-rows] li").length`))
		require.NoError(t, err)
		require.Equal(t, 2, still, "the page was not reloaded: the upload rows are still there")
		shot(t, ctx, "16c-several-uploads")
	})

	t.Run("export-selection", func(t *testing.T) {
		dir := t.TempDir()
		step(t, ctx, "downloads go to a folder of the test's",
			chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
				_, err := cdp.Call(ctx, tg, cdpbrowser.SetDownloadBehavior, cdpbrowser.SetDownloadBehaviorParams{
					Behavior: cdpbrowser.SetDownloadBehaviorBehaviorAllow, DownloadPath: dir})
				return err
			}))
		step(t, ctx, "tick two rows and choose BibTeX",
			navigate(base+"/library"),
			chromedp.WaitVisible(chromedp.CSS(`[data-library-list] li:nth-child(2) [data-select-row]`)),
			chromedp.Click(chromedp.CSS(`[data-library-list] li:nth-child(1) [data-select-row]`)),
			chromedp.Click(chromedp.CSS(`[data-library-list] li:nth-child(2) [data-select-row]`)),
			chromedp.SetValue(chromedp.CSS("#export-format"), "bibtex"))
		titles, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll(
			"[data-library-list] [data-select-row]:checked")).map(c => c.closest("li").querySelector("h3 a").textContent)`))
		require.NoError(t, err)
		require.Len(t, titles, 2)
		shot(t, ctx, "16d-export-two-ticked")
		step(t, ctx, "export the selection", chromedp.Click(chromedp.CSS(`#export-form button[value="selected"]`)))
		var file string
		require.Eventually(t, func() bool {
			got, _ := filepath.Glob(filepath.Join(dir, "*.bib"))
			if len(got) == 1 {
				file = got[0]
			}
			return file != ""
		}, 20*time.Second, 100*time.Millisecond, "the BibTeX file is downloaded")
		raw, err := os.ReadFile(file)
		require.NoError(t, err)
		entries, errs := bibio.ParseBibTeX(string(raw))
		require.Empty(t, errs, string(raw))
		require.Len(t, entries, 2, string(raw))
		require.ElementsMatch(t, titles, []string{entries[0].Title, entries[1].Title})
		require.NotEqual(t, entries[0].Key, entries[1].Key)
	})

	t.Run("phone-dark", func(t *testing.T) {
		step(t, ctx, "library on a phone in dark mode",
			chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile),
			chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
				_, err := cdp.Call(ctx, tg, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
					Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: "dark"}}})
				return err
			}),
			navigate(base+"/library"),
			chromedp.WaitVisible(chromedp.CSS(".paper-item")))
		shot(t, ctx, "17-library-phone-dark")
	})
}

// TestBrowserAnswerFallback: with JavaScript, an answer the builtin method gave
// because the assigned model failed says so under the answer, naming the role,
// provider and endpoint. The API's answer is stood in for (fallbackAPI) until the
// API sends the fallback field.
func TestBrowserAnswerFallback(t *testing.T) {
	t.Parallel()
	u, err := url.Parse(newTestServer(t, fallbackAPI(fallbackDone)))
	require.NoError(t, err)
	w, err := New(Config{APIURL: u})
	require.NoError(t, err)
	base := newTestServer(t, w)
	ctx := newBrowser(t)
	step(t, ctx, "sign in (a session cookie the stand-in API accepts)",
		chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
			_, err := cdp.Call(ctx, tg, network.SetCookie, network.SetCookieParams{Name: sessionCookie, Value: "s", URL: base})
			return err
		}),
		navigate(base+"/ask"),
		chromedp.WaitVisible(chromedp.CSS("#question")))
	step(t, ctx, "ask",
		chromedp.SendKeys(chromedp.CSS("#question"), "What did the students on the adaptive schedule spend less time on?"),
		chromedp.Click(chromedp.CSS(`form[data-ask] button[type=submit]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-answer][data-done="true"] [data-answer-fallback]`)))
	note := read(t, ctx, "[data-answer] [data-answer-fallback]")
	require.Equal(t, fallbackNote, note, "the same words as without JavaScript")
	t.Run("standalone", func(t *testing.T) { shot(t, ctx, "18-answer-model-fallback") })
}
