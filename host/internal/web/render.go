package web

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"net/url"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// pages are the page templates, one file each under templates/. Templates are
// parsed once at startup; newRenderer fails when a file under templates/ is not
// listed here or a listed page has no file, so none is forgotten (STYLE §9).
var pages = []string{
	"onboarding", "signin", "signin_sent", "library", "uploads", "paper", "answer", "jobs", "job",
	"review", "cards", "card", "analytics", "projects", "project", "search", "settings", "settings_llm",
	"admin_users", "admin_audit", "admin_plugins", "admin_backups", "error", "reader",
	"today", "pulse_weights", "weekly", "pulse_start",
}

// shared are the files every page is parsed with.
var shared = []string{"layout.html", "partials.html"}

// renderer holds the parsed pages.
type renderer struct {
	pages map[string]*template.Template
	log   *slog.Logger
}

func newRenderer(log *slog.Logger) (*renderer, error) {
	files, err := fs.Glob(templateFS, "templates/*.html")
	if err != nil {
		return nil, fmt.Errorf("web: templates: %w", err)
	}
	for _, f := range files {
		name := strings.TrimSuffix(path.Base(f), ".html")
		if !slices.Contains(pages, name) && !slices.Contains(shared, path.Base(f)) {
			return nil, fmt.Errorf("web: template %s is not registered in pages", f)
		}
	}
	r := &renderer{pages: map[string]*template.Template{}, log: log}
	base := template.New("layout.html").Funcs(funcs)
	for _, s := range shared {
		if base, err = base.ParseFS(templateFS, "templates/"+s); err != nil {
			return nil, fmt.Errorf("web: parse %s: %w", s, err)
		}
	}
	for _, p := range pages {
		t, err := template.Must(base.Clone()).ParseFS(templateFS, "templates/"+p+".html")
		if err != nil {
			return nil, fmt.Errorf("web: parse page %s: %w", p, err)
		}
		r.pages[p] = t
	}
	return r, nil
}

// view is what every page template receives.
type view struct {
	// Title is the page's title, before " · Lectern".
	Title string
	// Nav names the navigation entry to mark as current.
	Nav string
	// Me is the signed-in account; nil on the sign-in pages.
	Me *me
	// Flash is a success message carried over a redirect. It never holds a
	// failure: that goes in Err.
	Flash string
	// Err is the error to show above the page's content.
	Err *uiError
	// Form holds what was typed into a rejected form, to fill it in again.
	Form url.Values
	// Fields are the messages of rejected inputs, by input name.
	Fields map[string]string
	// Path is the page's own path and query.
	Path string
	// Refresh, when positive, reloads a page without JavaScript every Refresh
	// seconds (while a job runs).
	Refresh int
	// Data is the page's own data.
	Data any
	// Zone is where the viewer's clock is: the profile's time zone, loaded once
	// per page by render (UTC without a profile or for a zone Go does not know).
	// Templates pass it to date and datetime.
	Zone *time.Location

	// status is the HTTP status of a page shown again with an error.
	status int
	// answer is a question's answer collected for a page without JavaScript.
	answer *answer
}

// render writes the page with status.
func (rd *renderer) render(w http.ResponseWriter, r *http.Request, status int, page string, v *view) {
	t, ok := rd.pages[page]
	if !ok {
		rd.log.ErrorContext(r.Context(), "dashboard: unknown page", "page", page)
		http.Error(w, "The page could not be shown.", http.StatusInternalServerError)
		return
	}
	if v.Path == "" {
		v.Path = r.URL.RequestURI()
	}
	if v.Zone == nil {
		v.Zone = zoneOf(v.Me)
	}
	// The outcome of the previous form shows once. A page that shows a failure of
	// its own drops it: an earlier success next to it would read as if all went well.
	if ok, ue := takeFlash(w, r); v.Err == nil {
		if v.Flash == "" {
			v.Flash = ok
		}
		v.Err = ue
	}
	var buf bytes.Buffer
	if err := t.ExecuteTemplate(&buf, "layout", v); err != nil {
		rd.log.ErrorContext(r.Context(), "dashboard: render", "page", page, "error", err)
		http.Error(w, "The page could not be shown. Reload it; if it keeps failing, the operator can look in the server log.", http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = buf.WriteTo(w)
}

// flashCookie carries the outcome of a form over one redirect.
const flashCookie = "lectern_flash"

// flash is what a form's outcome leaves for the next page: what succeeded, what
// failed, or both (an account created whose invitation could not be mailed). The
// two are shown apart, so a failure never reads as a success.
type flash struct {
	OK   string `json:"ok,omitempty"`
	What string `json:"what,omitempty"`
	Do   string `json:"do,omitempty"`
}

// maxFlash bounds the cookie's value; a longer one is dropped, not shown cut.
const maxFlash = 3000

func setFlash(w http.ResponseWriter, msg string) { writeFlash(w, flash{OK: msg}) }

// setFlashError carries an error over one redirect.
func setFlashError(w http.ResponseWriter, e *uiError) { writeFlash(w, flash{What: e.What, Do: e.Do}) }

// setFlashMixed carries a success and the failure that came with it.
func setFlashMixed(w http.ResponseWriter, msg string, e *uiError) {
	writeFlash(w, flash{OK: msg, What: e.What, Do: e.Do})
}

func writeFlash(w http.ResponseWriter, f flash) {
	raw, _ := json.Marshal(f)
	v := url.QueryEscape(string(raw))
	if len(v) > maxFlash {
		return
	}
	http.SetCookie(w, &http.Cookie{Name: flashCookie, Value: v, Path: "/", MaxAge: 60,
		HttpOnly: true, SameSite: http.SameSiteLaxMode})
}

// takeFlash reads and clears the outcome of the previous request.
func takeFlash(w http.ResponseWriter, r *http.Request) (string, *uiError) {
	ck, err := r.Cookie(flashCookie)
	if err != nil {
		return "", nil
	}
	http.SetCookie(w, &http.Cookie{Name: flashCookie, Value: "", Path: "/", MaxAge: -1, HttpOnly: true, SameSite: http.SameSiteLaxMode})
	raw, err := url.QueryUnescape(ck.Value)
	if err != nil || len(ck.Value) > maxFlash {
		return "", nil
	}
	var f flash
	if json.Unmarshal([]byte(raw), &f) != nil {
		return "", nil
	}
	var ue *uiError
	if f.What != "" {
		ue = &uiError{What: f.What, Do: f.Do}
	}
	return f.OK, ue
}

var funcs = template.FuncMap{
	"authors":    authorList,
	"allAuthors": allAuthors,
	"date":       fmtDate,
	"datetime":   fmtDateTime,
	"pct":        func(f float64) string { return fmt.Sprintf("%.0f%%", f*100) },
	"add":        func(a, b int) int { return a + b },
	"cite":       citeHTML,
	"citeURL":    citeURL,
	"quoteURL":   quoteURL,
	"stateLabel": func(s string) string { return stateLabels[s] },
	"join":       strings.Join,
	"lower":      strings.ToLower,
	"contains":   slices.Contains[[]string, string],
	"deref": func(p *int) int {
		if p == nil {
			return 0
		}
		return *p
	},
	"str": func(v any) string { return fmt.Sprint(v) },
	"formOr": func(f url.Values, key, def string) string {
		if _, ok := f[key]; ok {
			return f.Get(key)
		}
		return def
	},
	"dateInput": func(s string) string {
		if len(s) >= 10 {
			return s[:10]
		}
		return s
	},
	"deckArgs": func(d []deck, f url.Values, e map[string]string) deckFieldArgs {
		return deckFieldArgs{Decks: d, Form: f, Fields: e}
	},
}

// deckFieldArgs are the arguments of the "deck-fields" template.
type deckFieldArgs struct {
	Decks  []deck
	Form   url.Values
	Fields map[string]string
}

// stateLabels name a paper's reading states.
var stateLabels = map[string]string{
	"inbox": "Inbox", "to_read": "To read", "reading": "Reading", "done": "Done", "trash": "Trash",
}

// authorList names the first three authors, then "et al." when there are more.
func authorList(as []author) string {
	names := make([]string, 0, 3)
	for _, a := range as[:min(len(as), 3)] {
		names = append(names, a.Name)
	}
	out := strings.Join(names, ", ")
	if len(as) > 3 {
		out += " et al."
	}
	return out
}

// allAuthors names every author, with their affiliation when known.
func allAuthors(as []author) string {
	names := make([]string, 0, len(as))
	for _, a := range as {
		if a.Affiliation != "" {
			names = append(names, a.Name+" ("+a.Affiliation+")")
			continue
		}
		names = append(names, a.Name)
	}
	return strings.Join(names, ", ")
}

// fmtDate shows the day of t in loc (the viewer's zone; nil is UTC). An instant
// (time.Time, RFC 3339) falls on the viewer's day; a plain date ("2006-01-02", a
// deadline) is a day already and stays the same.
func fmtDate(loc *time.Location, t any) string {
	switch v := t.(type) {
	case time.Time:
		if v.IsZero() {
			return ""
		}
		return inZone(v, loc).Format("2 Jan 2006")
	case *time.Time:
		if v == nil || v.IsZero() {
			return ""
		}
		return inZone(*v, loc).Format("2 Jan 2006")
	case string:
		if tt, err := time.Parse(time.RFC3339, v); err == nil {
			return inZone(tt, loc).Format("2 Jan 2006")
		}
		if tt, err := time.Parse("2006-01-02", v); err == nil {
			return tt.Format("2 Jan 2006")
		}
		return v
	}
	return ""
}

// fmtDateTime shows the instant t on the clock of loc (the viewer's zone; nil is
// UTC), with the zone's name: "1 Mar 2026 05:00 EST".
func fmtDateTime(loc *time.Location, t any) string {
	var tt time.Time
	switch v := t.(type) {
	case time.Time:
		tt = v
	case *time.Time:
		if v == nil {
			return ""
		}
		tt = *v
	case string: // an RFC 3339 stamp as the API gives it; anything else as it is
		p, err := time.Parse(time.RFC3339, v)
		if err != nil {
			return v
		}
		tt = p
	}
	if tt.IsZero() {
		return ""
	}
	tt = inZone(tt, loc)
	return tt.Format("2 Jan 2006 15:04") + " " + zoneAbbrev(tt)
}

var citeMarker = regexp.MustCompile(`\[(S\d{1,3})\]`)

// citeHTML escapes an answer and turns its [S1] markers into links to the reader
// at the cited words, for the markers that have a citation, each shown as its
// source's number ([1], [2], ... in the order cited).
func citeHTML(text string, cites []citation) template.HTML {
	known := map[string]citation{}
	for _, c := range cites {
		known[c.Marker] = c
	}
	var b strings.Builder
	last := 0
	for _, m := range citeMarker.FindAllStringSubmatchIndex(text, -1) {
		b.WriteString(template.HTMLEscapeString(text[last:m[0]]))
		marker := text[m[2]:m[3]]
		if c, ok := known[marker]; ok {
			fmt.Fprintf(&b, `<a class="cite" href="%s" title="%s">[%d]</a>`, template.HTMLEscapeString(citeURL(c)),
				template.HTMLEscapeString(citeTitle(c)), c.Number)
		} else {
			b.WriteString(template.HTMLEscapeString(text[m[0]:m[1]]))
		}
		last = m[1]
	}
	b.WriteString(template.HTMLEscapeString(text[last:]))
	// A blank line parts paragraphs; a single line break is where the PDF broke a
	// line inside a quoted sentence, and reads as a space.
	out := paragraphBreak.ReplaceAllString(b.String(), "<br><br>")
	return template.HTML(strings.ReplaceAll(out, "\n", " "))
}

var paragraphBreak = regexp.MustCompile(`\n[ \t]*\n\s*`)

// citeTitle names a citation's paper and page, the tooltip of its marker.
func citeTitle(c citation) string {
	t := c.Title
	if t == "" {
		t = "Untitled paper"
	}
	if c.Page > 0 {
		t += ", page " + strconv.Itoa(c.Page)
	}
	return t
}
