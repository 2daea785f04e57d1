package web

import (
	"cmp"
	"maps"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
)

// The Today page: the caller's Pulse deck (GET /api/pulse/today) with each card's
// one-line why and its signal breakdown, the rating buttons (POST /today/rate,
// calling POST /api/pulse/rate; app.js rates in place and adds the keyboard), the
// stale marker of a fallback deck, the health of each source and the run's
// diagnostics in words, and "Generate now".

// pulseCard is a card of the deck as GET /api/pulse/today answers it.
type pulseCard struct {
	PaperID string             `json:"paper_id"`
	Rank    int                `json:"rank"`
	Score   float64            `json:"score"`
	Signals map[string]float64 `json:"signals"`
	Why     string             `json:"why"`
	Reason  string             `json:"reason"`
	Paper   *paper             `json:"paper"`
	// Thumb is the user's newest thumb on the paper: up, down or "".
	Thumb string `json:"thumb"`
}

// pulseStats are how a run went (the deck's stats).
type pulseStats struct {
	CandidateCount int                          `json:"candidate_count"`
	DegradedReason string                       `json:"degraded_reason"`
	Sources        map[string]pulseSourceStatus `json:"source_diagnostics"`
	Classifier     struct {
		Available   bool   `json:"available"`
		Degradation string `json:"degradation_reason"`
		SampleCount int    `json:"sample_count"`
	} `json:"classifier"`
	Quiet     string `json:"quiet"`
	CardCount int    `json:"card_count"`
}

type pulseSourceStatus struct {
	Status  string `json:"status"`
	Message string `json:"message"`
}

// pulseDeck is GET /api/pulse/today's answer.
type pulseDeck struct {
	ID               string      `json:"id"`
	Date             string      `json:"deck_date"`
	GeneratedAt      time.Time   `json:"generated_at"`
	Cards            []pulseCard `json:"cards"`
	Stats            pulseStats  `json:"stats"`
	DegradedReason   string      `json:"degraded_reason"`
	Stale            bool        `json:"is_stale"`
	StaleAgeDays     int         `json:"stale_age_days"`
	StaleDiagnostics *pulseStats `json:"stale_diagnostics"`
	Message          string      `json:"message"`
}

// sourceHealth is one row of GET /api/pulse/source-health.
type sourceHealth struct {
	Source              string     `json:"source_type"`
	Status              string     `json:"last_status"`
	LastSuccessAt       *time.Time `json:"last_success_at"`
	CooldownUntil       *time.Time `json:"cooldown_until"`
	ConsecutiveFailures int        `json:"consecutive_failures"`
}

// pulseSignal is one signal of the score: its name, its label for people and its
// default weight (REFERENCE §4), in the order the weights editor lists them.
type pulseSignal struct {
	Name, Label, Help string
	Default           float64
	Required          bool
}

// pulseSignals are the signals of Pulse's score. The API answers only the user's
// weights, so the defaults the editor resets to are kept here.
var pulseSignals = []pulseSignal{
	{"embedding", "Like your library", "How close the paper is to what you read, less how close it is to what you turned down.", 0.20, true},
	{"topic", "Matches a topic you follow", "How close the paper is to the nearest topic you follow.", 0.20, true},
	{"llm_relevance", "Relevance, as the model judged it", "The relevance model's view of how the paper fits your interests.", 0.30, true},
	{"llm_novelty", "Novelty, as the model judged it", "The relevance model's view of how new the paper's idea is.", 0.10, true},
	{"author_bonus", "By an author you follow", "1 when an author of the paper is one you follow.", 0.15, true},
	{"recency", "Recent", "Newer papers score higher: it halves in about three weeks.", 0.05, true},
	{"classifier", "Your classifier", "What the model trained on your thumbs makes of it (after 30 rated papers).", 0, false},
	{"citation_pagerank", "Citation PageRank", "How central the paper is in the citation graph.", 0, false},
	{"citation_count", "Citation count", "How often the paper is cited, against the night's most cited.", 0, false},
	{"citation_adamic_adar", "Shared citations", "How much the paper's citations overlap with your library's.", 0, false},
}

// signalLabel is a signal's name for people.
func signalLabel(name string) string {
	for _, s := range pulseSignals {
		if s.Name == name {
			return s.Label
		}
	}
	return name
}

// breakdownRow is one signal of a card's score.
type breakdownRow struct {
	Label                string
	Signal, Weight, Part float64
	// Share is Part's share of the card's total, for its bar.
	Share float64
}

// todayCard is a card as the page shows it.
type todayCard struct {
	pulseCard
	Breakdown []breakdownRow
	// Total is Σ weight × signal with the weights in force now; Reweighed says it
	// differs from the score the deck was ranked by (the weights changed since).
	Total     float64
	Reweighed bool
	// Done is what the user just did with the card (a rating without JavaScript).
	Done string
}

// Venue is where and when the paper appeared: "NeurIPS · 24 Nov 2026", "arXiv · 24 Nov 2026".
func (c todayCard) Venue() string {
	if c.Paper == nil {
		return ""
	}
	var parts []string
	switch {
	case c.Paper.Venue != "":
		parts = append(parts, c.Paper.Venue)
	case c.Paper.ArxivID != "":
		parts = append(parts, "arXiv "+c.Paper.ArxivID)
	case c.Paper.Source != "":
		parts = append(parts, c.Paper.Source)
	}
	if d := fmtDate(nil, c.Paper.PublicationDate); d != "" {
		parts = append(parts, d)
	} else if y := c.Paper.Year(); y != "" {
		parts = append(parts, y)
	}
	return strings.Join(parts, " · ")
}

// DoneText says what the user just did with the card.
func (c todayCard) DoneText() string { return rateDone(c.Done) }

// healthRow is one source's health in words.
type healthRow struct {
	Source string
	// State is ok, limited or failing (the badge's class).
	State string
	Text  string
}

type todayData struct {
	Deck  pulseDeck
	Cards []todayCard
	// Stale says, for a fallback deck, which day it is from and why.
	Stale string
	// Made is when the deck was made, in the viewer's zone.
	Made string
	// Diagnostics are the run's notes in words: a degraded ranking, a classifier
	// that did not weigh in, a source that failed.
	Diagnostics []string
	Health      []healthRow
	// NoTopics is set when the user follows no topic: the empty deck links to the
	// cold-start step.
	NoTopics bool
	// Jobs are the runs making the deck now.
	Jobs []job
	// Rated names the card just rated without JavaScript, and how.
	Rated, RatedAs string
	Actions        []rateAction
}

// rateAction is one rating button of a card.
type rateAction struct{ Name, Label, Key, Done string }

var rateActions = []rateAction{
	{"up", "More like this", "u", "Marked as more like this."},
	{"down", "Less like this", "d", "Marked as less like this."},
	{"save", "Save to read", "s", "Saved to your reading list."},
	{"dismiss", "Dismiss", "x", "Dismissed: moved to the trash, and fewer like it."},
}

func rateDone(action string) string {
	for _, a := range rateActions {
		if a.Name == action {
			return a.Done
		}
	}
	return ""
}

// pulseNightly is the job kind that makes a deck.
const pulseNightly = "pulse.nightly"

// todayPage shows the caller's deck of today (or the last one of the week, marked
// stale), the sources' health and the diagnostics, and any run making the deck.
func (h *handler) todayPage(w http.ResponseWriter, r *http.Request, s *session, v *view) {
	d := &todayData{Actions: rateActions}
	v.Title, v.Nav, v.Data = "Today", "today", d
	zone := zoneOf(s.me)
	if err := s.c.get("/api/pulse/today", &d.Deck); err != nil {
		if isStatus(err, http.StatusUnauthorized) {
			h.toSignIn(w, r)
			return
		}
		if v.Err == nil {
			v.Err = humanError(err)
		}
	}
	qv := r.URL.Query()
	if id, action := qv.Get("rated"), qv.Get("as"); uuid.Validate(id) == nil && rateDone(action) != "" {
		d.Rated, d.RatedAs = id, action
	}
	d.Cards = h.todayCards(s, d)
	d.Stale = staleNote(d.Deck)
	if !d.Deck.GeneratedAt.IsZero() {
		d.Made = fmtDateTime(zone, d.Deck.GeneratedAt)
	}
	d.Diagnostics = diagnostics(d.Deck)
	var health struct {
		Sources []sourceHealth `json:"sources"`
	}
	if err := s.c.get("/api/pulse/source-health", &health); err == nil {
		d.Health = healthRows(health.Sources, zone, time.Now())
	}
	if len(d.Deck.Cards) == 0 {
		var topics struct {
			Items []struct{} `json:"items"`
		}
		if err := s.c.get("/api/pulse/topics", &topics); err == nil {
			d.NoTopics = len(topics.Items) == 0
		}
	}
	d.Jobs = h.pulseJobs(s, qv.Get("job"))
	for _, j := range d.Jobs {
		if j.Active() {
			v.Refresh = 3
		}
	}
	h.show(w, r, "today", v)
}

// todayCards adds to each card its breakdown, weighed with the weights in force:
// the effective ones the explanation of the first card gives (a classifier that
// trained counts even at weight 0), else the configured ones.
func (h *handler) todayCards(s *session, d *todayData) []todayCard {
	if len(d.Deck.Cards) == 0 {
		return nil
	}
	var ex struct {
		Weights map[string]float64 `json:"weights"`
	}
	if err := s.c.get("/api/pulse/explain/"+pathEscape(d.Deck.Cards[0].PaperID), &ex); err != nil || len(ex.Weights) == 0 {
		ex.Weights = nil
		_ = s.c.get("/api/pulse/weights", &ex.Weights)
	}
	out := make([]todayCard, 0, len(d.Deck.Cards))
	for _, c := range d.Deck.Cards {
		tc := todayCard{pulseCard: c, Breakdown: breakdown(c.Signals, ex.Weights)}
		for _, b := range tc.Breakdown {
			tc.Total += b.Part
		}
		for i := range tc.Breakdown {
			if tc.Total > 0 {
				tc.Breakdown[i].Share = tc.Breakdown[i].Part / tc.Total
			}
		}
		tc.Reweighed = ex.Weights != nil && math.Abs(tc.Total-c.Score) > 0.0005
		tc.Done = doneWith(c, d)
		out = append(out, tc)
	}
	return out
}

// doneWith is what the user did with a card, as its buttons show it: the rating
// just made, else a dismissal (the paper is in the trash), a thumb, or a save
// (the paper is in their library).
func doneWith(c pulseCard, d *todayData) string {
	switch {
	case c.PaperID == d.Rated:
		return d.RatedAs
	case c.Paper != nil && c.Paper.Overlay.State == "trash":
		return "dismiss"
	case c.Thumb != "":
		return c.Thumb
	case c.Paper != nil && c.Paper.Overlay.InLibrary:
		return "save"
	}
	return ""
}

// breakdown lists the signals that count (a weight or a value above zero), the
// largest part of the score first.
func breakdown(signals, weights map[string]float64) []breakdownRow {
	names := map[string]bool{}
	for k := range signals {
		names[k] = true
	}
	for k := range weights {
		names[k] = true
	}
	var rows []breakdownRow
	for _, k := range slices.Sorted(maps.Keys(names)) {
		sig, wt := min(max(signals[k], 0), 1), weights[k]
		if sig == 0 && wt == 0 {
			continue
		}
		rows = append(rows, breakdownRow{Label: signalLabel(k), Signal: sig, Weight: wt, Part: sig * wt})
	}
	slices.SortStableFunc(rows, func(a, b breakdownRow) int { return cmp.Compare(b.Part, a.Part) })
	return rows
}

// staleNote says which day a fallback deck is from and why today has none.
func staleNote(d pulseDeck) string {
	if !d.Stale {
		return ""
	}
	day, err := time.Parse(time.DateOnly, d.Date)
	if err != nil {
		return ""
	}
	from := "From " + day.Format("Monday 2 January")
	if d.StaleAgeDays == 1 {
		from = "From yesterday, " + day.Format("Monday 2 January")
	}
	if st := d.StaleDiagnostics; st != nil {
		why := "today's run found nothing new for you"
		switch {
		case st.Quiet != "":
			why = "today's run found nothing new: " + lowerFirst(strings.TrimSuffix(st.Quiet, "."))
		case allSourcesDown(*st):
			why = "today's run could not reach any paper source"
		}
		return from + ": " + why + "."
	}
	return from + ": tonight's run has not produced a deck yet."
}

func lowerFirst(s string) string {
	if s == "" || strings.HasPrefix(s, "arXiv") {
		return s
	}
	return strings.ToLower(s[:1]) + s[1:]
}

func allSourcesDown(st pulseStats) bool {
	if len(st.Sources) == 0 {
		return false
	}
	for _, s := range st.Sources {
		if s.Status == "ok" {
			return false
		}
	}
	return true
}

// diagnostics are the notes of the run that made the deck (and, for a stale
// deck, of today's), in words.
func diagnostics(d pulseDeck) []string {
	var out []string
	add := func(s string) {
		if s != "" && !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	add(cmp.Or(d.DegradedReason, d.Stats.DegradedReason))
	stats := []pulseStats{d.Stats}
	if d.StaleDiagnostics != nil {
		stats = append(stats, *d.StaleDiagnostics)
	}
	for _, st := range stats {
		for _, name := range slices.Sorted(maps.Keys(st.Sources)) {
			if src := st.Sources[name]; src.Status != "ok" && src.Message != "" {
				add(sourceName(name) + ": " + src.Message)
			}
		}
	}
	if c := d.Stats.Classifier; d.ID != "" && !c.Available && c.Degradation != "" {
		add(c.Degradation)
	}
	return out
}

// sourceName is a source's name for people.
func sourceName(s string) string {
	switch s {
	case "arxiv":
		return "arXiv"
	case "semantic_scholar", "semanticscholar":
		return "Semantic Scholar"
	case "openalex":
		return "OpenAlex"
	case "pubmed":
		return "PubMed"
	case "crossref":
		return "Crossref"
	case "search":
		return "Discovery"
	}
	return s
}

// healthRows says each source's health: ok, rate-limited until a time, or
// failing a number of times in a row.
func healthRows(hs []sourceHealth, zone *time.Location, now time.Time) []healthRow {
	out := make([]healthRow, 0, len(hs))
	for _, h := range hs {
		row := healthRow{Source: sourceName(h.Source), State: "ok", Text: "ok"}
		switch h.Status {
		case "rate_limit":
			row.State = "limited"
			if h.CooldownUntil != nil {
				row.Text = "rate-limited until " + clock(*h.CooldownUntil, zone, now) + "; Lectern waits until then"
			} else {
				row.Text = "was rate-limited; it is asked again at the next run"
			}
		case "error":
			row.State = "failing"
			row.Text = "failing " + times(h.ConsecutiveFailures) + " in a row"
			if h.CooldownUntil != nil {
				row.Text += "; skipped until " + clock(*h.CooldownUntil, zone, now)
			} else {
				row.Text += "; asked again at the next run"
			}
		default:
			if h.LastSuccessAt != nil {
				row.Text = "ok, last answered " + clock(*h.LastSuccessAt, zone, now)
			}
		}
		out = append(out, row)
	}
	return out
}

func times(n int) string {
	switch n {
	case 0, 1:
		return "once"
	case 2:
		return "twice"
	}
	return strconv.Itoa(n) + " times"
}

// clock is t on the viewer's clock: "14:05" today, else "Tue 14:05" within a
// week, else the date as well.
func clock(t time.Time, zone *time.Location, now time.Time) string {
	t, now = inZone(t, zone), inZone(now, zone)
	switch {
	case t.Format(time.DateOnly) == now.Format(time.DateOnly):
		return t.Format("15:04")
	case t.Sub(now) < 6*24*time.Hour && now.Sub(t) < 6*24*time.Hour:
		return t.Format("Mon 15:04")
	}
	return t.Format("2 Jan 2006 15:04")
}

// pulseJobs are the caller's runs making a deck: the one the browser was sent here
// with, and any other still queued or running.
func (h *handler) pulseJobs(s *session, jobParam string) []job {
	var out []job
	seen := map[int64]bool{}
	if n, err := strconv.ParseInt(jobParam, 10, 64); err == nil {
		var j job
		if s.c.get("/api/jobs/"+itoa(n), &j) == nil && j.Kind == pulseNightly {
			out, seen[j.ID] = append(out, j), true
		}
	}
	var active jobPage
	if s.c.get("/api/jobs?state=active&limit=50", &active) == nil {
		for _, j := range active.Jobs {
			if j.Kind == pulseNightly && !seen[j.ID] {
				out = append(out, j)
			}
		}
	}
	return out
}

// todayRate rates a card (up, down, save, dismiss; open is the script's) and
// comes back to the deck. A paper that is not in the caller's deck is a 404 page.
func (h *handler) todayRate(w http.ResponseWriter, r *http.Request, s *session, v *view) {
	id, action := strings.TrimSpace(r.PostFormValue("paper_id")), r.PostFormValue("action")
	err := validRating(id, action)
	if err == nil {
		err = s.c.do(http.MethodPost, "/api/pulse/rate", map[string]string{"paper_id": id, "action": action}, nil)
	}
	if err != nil {
		if isStatus(err, http.StatusNotFound) {
			v.status = http.StatusNotFound
			v.Err = &uiError{What: "That paper is not in your Pulse deck, so it was not rated.", Do: "Rate one of the papers shown below."}
			h.todayPage(w, r, s, v)
			return
		}
		h.fail(w, r, s, v, err, h.todayPage, nil)
		return
	}
	done(w, r, "/today"+q("rated", id, "as", action)+"#card-"+id, rateDone(action))
}

// validRating checks a rating form at the edge.
func validRating(id, action string) error {
	var fields []fieldError
	if uuid.Validate(id) != nil {
		fields = append(fields, fieldError{Field: "paper_id", Message: "must be a paper of your deck"})
	}
	if rateDone(action) == "" && action != "open" {
		fields = append(fields, fieldError{Field: "action", Message: "must be one of up, down, save, dismiss"})
	}
	if len(fields) == 0 {
		return nil
	}
	return &apiError{Status: http.StatusUnprocessableEntity, Code: "validation_error",
		Detail: "The rating was not understood: choose one of the buttons of a card.", Fields: fields}
}

// todayGenerate starts a run making the caller's deck now and shows its progress
// on the Today page; while one is queued or running it says so.
func (h *handler) todayGenerate(w http.ResponseWriter, r *http.Request, s *session, _ *view) {
	var j job
	if err := s.c.do(http.MethodPost, "/api/pulse/generate", nil, &j); err != nil {
		h.actionFailed(w, r, err, "/today")
		return
	}
	done(w, r, "/today"+q("job", itoa(j.ID)), "Lectern is making your deck; it shows here when it is done.")
}

// landing is where a signed-in browser arriving at / goes: today's deck for
// someone who follows a Pulse topic, else the library (docs/decisions.md,
// "Pulse pages").
func landing(c *caller) string {
	var topics struct {
		Items []struct{} `json:"items"`
	}
	if c.get("/api/pulse/topics", &topics) == nil && len(topics.Items) > 0 {
		return "/today"
	}
	return "/library"
}
