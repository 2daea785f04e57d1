package web

import (
	"context"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/chromedp/cdproto/cdp"
	cdppage "github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/stretchr/testify/require"
	"golang.org/x/text/unicode/norm"

	"github.com/lectern-research/lectern/host/internal/fixturetest"
)

// cspProbe records, from the first script of every document on, each Content
// Security Policy violation the page meets.
const cspProbe = `window.__csp = [];
document.addEventListener("securitypolicyviolation", function (e) { window.__csp.push(e.violatedDirective + " " + e.blockedURI); });`

// TestBrowserReader: a real paper (a fixture PDF) is uploaded and asked about; the
// answer's citation opens the reader at the cited page (> 1), where pdf.js has
// drawn the page and the cited words are marked in its text layer, with no
// Content Security Policy violation. The screenshot is kept as
// reader-20-cited-words-highlighted.png.
func TestBrowserReader(t *testing.T) {
	t.Parallel()
	require.NotEmpty(t, pdfjsVersion(), "pdf.js is not vendored: run make build (scripts/vendor-pdfjs) before the browser tests")
	s := newStackMode(t, true)
	ctx := newBrowser(t)
	base := s.dash.URL
	pdf := filepath.Join(t.TempDir(), "exercise-motivation.pdf")
	require.NoError(t, os.WriteFile(pdf, fixturetest.Read(t, "pdfs/hindawi_rrp_2010_157939_with_groundtruth.pdf"), 0o644))

	t.Run("reader", func(t *testing.T) {
		step(t, ctx, "watch for CSP violations",
			chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
				_, err := cdp.Call(ctx, tg, cdppage.AddScriptToEvaluateOnNewDocument, cdppage.AddScriptToEvaluateOnNewDocumentParams{Source: cspProbe})
				return err
			}))
		step(t, ctx, "create the admin",
			navigate(base+"/"),
			chromedp.WaitVisible(chromedp.CSS(`form[action="/onboarding/admin"] #email`)),
			chromedp.SendKeys(chromedp.CSS("#email"), "ada@example.org"),
			chromedp.Submit(chromedp.CSS("#email")),
			chromedp.WaitVisible(chromedp.CSS(`a[href="/onboarding?step=paper"]`)),
			chromedp.Click(chromedp.CSS(`a[href="/onboarding?step=paper"]`)),
			chromedp.WaitVisible(chromedp.CSS("#upload-file")))
		step(t, ctx, "upload the paper and wait for its reading",
			chromedp.SetUploadFiles(chromedp.CSS("#upload-file"), []string{pdf}),
			chromedp.Click(chromedp.CSS(`form[data-upload] button[type=submit]`)),
			chromedp.WaitVisible(chromedp.CSS(`.job[data-state="succeeded"]`)),
			chromedp.WaitVisible(chromedp.CSS("#question")))
		step(t, ctx, "ask a question answered on page 3",
			chromedp.SendKeys(chromedp.CSS("#question"), "Why did participants find it difficult to remain motivated to maintain exercise when the programme ended?"),
			chromedp.Click(chromedp.CSS(`form[data-ask] button[type=submit]`)),
			chromedp.WaitVisible(chromedp.CSS(`[data-answer][data-done="true"] [data-answer-text] a.cite`)))
		href := attr(t, ctx, `[data-answer-text] a.cite`, "href")
		u, err := url.Parse(href)
		require.NoError(t, err)
		require.True(t, strings.HasSuffix(u.Path, "/read"), href)
		pageN, err := strconv.Atoi(u.Query().Get("page"))
		require.NoError(t, err, href)
		require.Greater(t, pageN, 1, "the answer is cited on a later page: %s", href)
		require.NotEmpty(t, u.Query().Get("passage"), href)
		require.NotEmpty(t, u.Query().Get("end"), "the streamed citation carries the cited words' offsets: %s", href)
		require.Equal(t, href, attr(t, ctx, `[data-answer-sources] li a`, "href"), "the source list links to the same words")

		clicked := time.Now()
		step(t, ctx, "click the citation and wait for the highlight",
			chromedp.Click(chromedp.CSS(`[data-answer-text] a.cite`)),
			chromedp.WaitReady(chromedp.CSS(`#reader[data-highlighted], #reader[data-error]`)))
		t.Logf("from the click to the highlight: %v", time.Since(clicked).Round(10*time.Millisecond))
		errText, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.getElementById("reader").dataset.error || ""`))
		require.Empty(t, errText)
		status := read(t, ctx, "[data-reader-status]")
		require.Equal(t, "Highlighted on page "+strconv.Itoa(pageN)+".", status)
		require.Equal(t, strconv.Itoa(pageN), attr(t, ctx, "[data-page-input]", "value"), "the page counter shows the cited page")

		marked, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](
			`Array.from(document.querySelectorAll('.reader-page[data-page="`+strconv.Itoa(pageN)+`"] .textLayer span mark.reader-hl')).map(m => m.textContent)`))
		require.NoError(t, err)
		require.NotEmpty(t, marked, "highlighted text spans on page %d", pageN)
		cited := letters(read(t, ctx, ".reader-cited blockquote"))
		got := letters(strings.Join(marked, ""))
		require.Contains(t, got, "motivated", "the highlight holds the cited words")
		require.Contains(t, cited, got[:min(len(got), 60)], "what is marked is the cited words, in order")
		require.GreaterOrEqual(t, float64(len(got)), 0.8*float64(len(cited)), "most of the cited words are marked: %q of %q", got, cited)
		visible, err := chromedp.Run(ctx, chromedp.Evaluate[bool](
			`(() => { const r = document.querySelector("mark.reader-hl").getBoundingClientRect(); return r.top >= 0 && r.bottom <= window.innerHeight; })()`))
		require.NoError(t, err)
		require.True(t, visible, "the highlight is scrolled into view")
		violations, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`window.__csp || []`))
		require.NoError(t, err)
		require.Empty(t, violations, "pdf.js works within the dashboard's Content Security Policy")
		time.Sleep(300 * time.Millisecond) // the canvas of the next page settles
		viewport(t, ctx, "20-cited-words-highlighted")

		step(t, ctx, "Page Down goes to the next page",
			chromedp.Click(chromedp.CSS(".reader-pages")),
			chromedp.KeyEvent(kb.PageDown))
		require.Eventually(t, func() bool {
			v, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector("[data-page-input]").value`))
			return err == nil && v == strconv.Itoa(pageN+1)
		}, 10*time.Second, 100*time.Millisecond, "the counter follows Page Down")

		href, err = chromedp.Run(ctx, chromedp.Evaluate[string](`(() => {
			document.querySelectorAll(".toc details").forEach(d => d.open = true);
			const a = document.querySelector('.toc a[data-toc-page="4"]:not([aria-current])');
			a.click();
			return a.getAttribute("href");
		})()`))
		require.NoError(t, err)
		require.Eventually(t, func() bool {
			v, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector("[data-reader-status]").textContent`))
			return err == nil && v == "Highlighted on page 4."
		}, 20*time.Second, 100*time.Millisecond, "a passage of the contents is highlighted on its page")
		loc, err := chromedp.Run(ctx, chromedp.Location())
		require.NoError(t, err)
		require.True(t, strings.HasSuffix(loc, href), "the address follows the passage: %s", loc)
		n, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll('.reader-page[data-page="4"] mark.reader-hl').length`))
		require.NoError(t, err)
		require.Positive(t, n)
		n, err = chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll('.reader-page[data-page="3"] mark.reader-hl').length`))
		require.NoError(t, err)
		require.Zero(t, n, "the earlier highlight is gone")
		viewport(t, ctx, "21-contents-passage")

		step(t, ctx, "the same passage on a phone",
			chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile),
			chromedp.Reload(),
			chromedp.WaitReady(chromedp.CSS(`#reader[data-highlighted="true"]`)))
		time.Sleep(300 * time.Millisecond)
		viewport(t, ctx, "22-phone")
	})
}

// letters keeps the letters and digits of s, NFKC-folded (a ligature is its
// letters) and lower-cased, as the reader compares text.
func letters(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(norm.NFKC.String(s)) {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// viewport saves what the browser window shows (a full-page capture of the reader
// would be all its pages) as <subtest>-name.png.
func viewport(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	name = strings.SplitN(t.Name(), "/", 3)[1] + "-" + name
	sctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	png, err := chromedp.Run(sctx, chromedp.CaptureScreenshot())
	require.NoError(t, err)
	path := filepath.Join(screenshotDir(t), name+".png")
	require.NoError(t, os.WriteFile(path, png, 0o644))
	t.Logf("screenshot %s", path)
}
