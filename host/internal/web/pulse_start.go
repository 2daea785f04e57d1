package web

import (
	"net/http"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// The cold start of Pulse (/pulse/start): a new user picks topics, names authors
// to follow, and rates a first batch of papers, so that their first morning deck
// already knows what they like. Steps 1 and 2 use the API's topics and authors
// routes; step 3 is /api/pulse/onboarding.

// pulseStartSteps are the page's steps, in order.
var pulseStartSteps = []string{"topics", "authors", "rate"}

// arxivCategory is an arXiv category the topics step offers to tick. Ticking one
// follows a topic named Label that keeps to Code.
type arxivCategory struct{ Code, Label, Query string }

// commonCategories are the arXiv categories most Lectern users read, by field.
var commonCategories = []arxivCategory{
	{"cs.LG", "Machine learning", "machine learning"},
	{"cs.AI", "Artificial intelligence", "artificial intelligence"},
	{"cs.CL", "Natural language processing", "language"},
	{"cs.CV", "Computer vision", "vision"},
	{"cs.IR", "Information retrieval", "retrieval"},
	{"stat.ML", "Statistical learning", "learning"},
	{"cs.RO", "Robotics", "robot"},
	{"cs.HC", "Human-computer interaction", "interaction"},
	{"cs.CR", "Security and cryptography", "security"},
	{"cs.DB", "Databases", "database"},
	{"cs.DC", "Distributed computing", "distributed"},
	{"cs.SE", "Software engineering", "software"},
	{"q-bio.NC", "Neuroscience", "neural"},
	{"q-bio.QM", "Quantitative biology", "biology"},
	{"quant-ph", "Quantum physics", "quantum"},
	{"math.OC", "Optimisation and control", "optimization"},
	{"econ.EM", "Econometrics", "econometric"},
	{"eess.SP", "Signal processing", "signal"},
}

// pulseTopic and pulseAuthor are the API's topic and author.
type pulseTopic struct {
	ID         string   `json:"id"`
	Name       string   `json:"name"`
	Query      string   `json:"query"`
	Categories []string `json:"categories"`
}

type pulseAuthor struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

// category is the common category t stands for, if it was made by ticking one.
func (t pulseTopic) category() (arxivCategory, bool) {
	for _, c := range commonCategories {
		if len(t.Categories) == 1 && t.Categories[0] == c.Code && t.Name == c.Label {
			return c, true
		}
	}
	return arxivCategory{}, false
}

// onboardingState is GET /api/pulse/onboarding's answer.
type onboardingState struct {
	LibraryEmpty bool                  `json:"library_empty"`
	TopicCount   int                   `json:"topic_count"`
	AuthorCount  int                   `json:"author_count"`
	Rated        int                   `json:"rated"`
	Up           int                   `json:"up"`
	Down         int                   `json:"down"`
	Target       int                   `json:"target"`
	Complete     bool                  `json:"complete"`
	HasDeck      bool                  `json:"has_deck"`
	Candidates   []onboardingCandidate `json:"candidates"`
	CorpusShort  bool                  `json:"corpus_short"`
	Message      string                `json:"message"`
}

type onboardingCandidate struct {
	Paper   paper  `json:"paper"`
	Matched string `json:"matched"`
}

// Published is the paper's publication date as a reader says it ("25 Nov
// 2026"); the day, never moved by a time zone.
func (c onboardingCandidate) Published() string {
	d := c.Paper.PublicationDate
	if len(d) < 10 {
		return ""
	}
	t, err := time.Parse(time.DateOnly, d[:10])
	if err != nil {
		return ""
	}
	return t.Format("2 Jan 2006")
}

// Excerpt is the start of the abstract, cut at a word.
func (c onboardingCandidate) Excerpt() string {
	const max = 320
	a := strings.Join(strings.Fields(c.Paper.Abstract), " ")
	if utf8.RuneCountInString(a) <= max {
		return a
	}
	cut := string([]rune(a)[:max])
	if i := strings.LastIndexByte(cut, ' '); i > max/2 {
		cut = cut[:i]
	}
	return cut + " …"
}

// pulseStartData is the page's data.
type pulseStartData struct {
	Step   string
	Steps  []string
	Number int
	// Categories are the common categories, Ticked those followed.
	Categories []arxivCategory
	Ticked     map[string]bool
	// Keywords are the topics followed by words alone; Others the topics made
	// another way (through the API), listed and kept.
	Keywords []pulseTopic
	Others   []pulseTopic
	Authors  []pulseAuthor
	State    *onboardingState
}

// Remaining is how many more ratings the batch asks for.
func (d *pulseStartData) Remaining() int {
	if d.State == nil {
		return 0
	}
	return max(d.State.Target-d.State.Rated, 0)
}

// pulseStartPage shows one step of the cold start.
func (h *handler) pulseStartPage(w http.ResponseWriter, r *http.Request, s *session, v *view) {
	step := r.URL.Query().Get("step")
	if r.Method == http.MethodPost {
		step = r.PostFormValue("step")
	}
	if !slices.Contains(pulseStartSteps, step) {
		step = pulseStartSteps[0]
	}
	d := &pulseStartData{Step: step, Steps: pulseStartSteps, Number: slices.Index(pulseStartSteps, step) + 1,
		Categories: commonCategories, Ticked: map[string]bool{}}
	v.Title, v.Nav, v.Data = "Set up your morning deck", "settings", d
	var err error
	switch step {
	case "topics":
		err = h.loadTopics(s, d)
	case "authors":
		err = h.loadAuthors(s, d)
	default:
		d.State = &onboardingState{}
		err = s.c.get("/api/pulse/onboarding", d.State)
	}
	if err != nil {
		if isStatus(err, http.StatusUnauthorized) {
			h.toSignIn(w, r)
			return
		}
		if v.Err == nil {
			v.Err = humanError(err)
		}
	}
	h.show(w, r, "pulse_start", v)
}

func (h *handler) loadTopics(s *session, d *pulseStartData) error {
	topics, err := h.topicsOf(s)
	for _, t := range topics {
		if c, ok := t.category(); ok {
			d.Ticked[c.Code] = true
		} else if len(t.Categories) == 0 {
			d.Keywords = append(d.Keywords, t)
		} else {
			d.Others = append(d.Others, t)
		}
	}
	return err
}

func (h *handler) loadAuthors(s *session, d *pulseStartData) error {
	var list struct {
		Items []pulseAuthor `json:"items"`
	}
	err := s.c.get("/api/pulse/authors", &list)
	d.Authors = list.Items
	return err
}

func (h *handler) topicsOf(s *session) ([]pulseTopic, error) {
	var list struct {
		Items []pulseTopic `json:"items"`
	}
	err := s.c.get("/api/pulse/topics", &list)
	return list.Items, err
}

// pulseStartTopics saves step 1: the ticked categories and the kept keywords are
// followed, the others dropped, and each new keyword becomes a topic.
func (h *handler) pulseStartTopics(w http.ResponseWriter, r *http.Request, s *session, v *view) {
	r.PostForm.Set("step", "topics")
	topics, err := h.topicsOf(s)
	if err != nil {
		h.fail(w, r, s, v, err, h.pulseStartPage, nil)
		return
	}
	ticked := r.PostForm["category"]
	kept := r.PostForm["keep"]
	added := splitList(r.PostFormValue("keywords"))
	following := len(ticked) + len(kept) + len(added)
	for _, t := range topics {
		if _, ok := t.category(); !ok && len(t.Categories) > 0 {
			following++ // made elsewhere: kept as it is
		}
	}
	if following == 0 {
		v.Err, v.Form, v.status = &uiError{What: "Tick a field or type a few keywords.",
			Do: "The papers to rate, and your deck, are drawn from what you follow."}, r.PostForm, http.StatusUnprocessableEntity
		h.pulseStartPage(w, r, s, v)
		return
	}
	for _, t := range topics {
		c, isCategory := t.category()
		drop := (isCategory && !slices.Contains(ticked, c.Code)) || (len(t.Categories) == 0 && !slices.Contains(kept, t.ID))
		if !drop {
			continue
		}
		if err := s.c.do(http.MethodDelete, "/api/pulse/topics/"+pathEscape(t.ID), nil, nil); err != nil && !isStatus(err, http.StatusNotFound) {
			h.fail(w, r, s, v, err, h.pulseStartPage, nil)
			return
		}
	}
	for _, c := range commonCategories {
		if !slices.Contains(ticked, c.Code) {
			continue
		}
		body := map[string]any{"name": c.Label, "query": c.Query, "categories": []string{c.Code}}
		if err := s.c.do(http.MethodPost, "/api/pulse/topics", body, nil); err != nil {
			h.fail(w, r, s, v, err, h.pulseStartPage, map[string]string{"name": "category"})
			return
		}
	}
	for _, k := range added {
		if err := s.c.do(http.MethodPost, "/api/pulse/topics", map[string]any{"name": k}, nil); err != nil {
			h.fail(w, r, s, v, err, h.pulseStartPage, map[string]string{"name": "keywords", "query": "keywords"})
			return
		}
	}
	done(w, r, "/pulse/start?step=authors", "Saved what you follow.")
}

// pulseStartAuthors saves step 2: the kept authors stay followed, the others
// are dropped, and each name typed is followed.
func (h *handler) pulseStartAuthors(w http.ResponseWriter, r *http.Request, s *session, v *view) {
	r.PostForm.Set("step", "authors")
	var list struct {
		Items []pulseAuthor `json:"items"`
	}
	if err := s.c.get("/api/pulse/authors", &list); err != nil {
		h.fail(w, r, s, v, err, h.pulseStartPage, nil)
		return
	}
	kept := r.PostForm["keep"]
	for _, a := range list.Items {
		if slices.Contains(kept, a.ID) {
			continue
		}
		if err := s.c.do(http.MethodDelete, "/api/pulse/authors/"+pathEscape(a.ID), nil, nil); err != nil && !isStatus(err, http.StatusNotFound) {
			h.fail(w, r, s, v, err, h.pulseStartPage, nil)
			return
		}
	}
	for _, name := range splitLines(r.PostFormValue("names")) {
		if err := s.c.do(http.MethodPost, "/api/pulse/authors", map[string]any{"name": name}, nil); err != nil {
			h.fail(w, r, s, v, err, h.pulseStartPage, map[string]string{"name": "names"})
			return
		}
	}
	done(w, r, "/pulse/start?step=rate", "Saved the authors you follow.")
}

// pulseStartRate rates one paper of the batch: up, down or skip.
func (h *handler) pulseStartRate(w http.ResponseWriter, r *http.Request, s *session, v *view) {
	rating := r.PostFormValue("rating")
	if !slices.Contains([]string{"up", "down", "skip"}, rating) {
		setFlashError(w, &uiError{What: "Choose Interested, Not for me or Skip.", Do: "Press one of the three buttons under the paper."})
		http.Redirect(w, r, "/pulse/start?step=rate", http.StatusSeeOther)
		return
	}
	var res struct {
		Rated    int  `json:"rated"`
		Target   int  `json:"target"`
		Complete bool `json:"complete"`
	}
	body := map[string]string{"paper_id": r.PostFormValue("paper_id"), "rating": rating}
	if err := s.c.do(http.MethodPost, "/api/pulse/onboarding/rate", body, &res); err != nil {
		if isStatus(err, http.StatusNotFound) {
			// Not a paper this user may see: say so on a page of its own, and
			// change nothing.
			v.Title, v.Err, v.status = "No such paper", &uiError{What: "That paper is not one you can rate.",
				Do: "Go back to the list of papers to rate and choose one there."}, http.StatusNotFound
			h.show(w, r, "error", v)
			return
		}
		h.actionFailed(w, r, err, "/pulse/start?step=rate")
		return
	}
	msg := ""
	if res.Complete && res.Rated == res.Target && rating != "skip" {
		msg = "That makes enough ratings for your first deck."
	}
	done(w, r, "/pulse/start?step=rate#batch", msg)
}

// pulseStartDiscover asks the sources for recent papers on what the user
// follows, and shows what came of it in words.
func (h *handler) pulseStartDiscover(w http.ResponseWriter, r *http.Request, s *session, v *view) {
	var res struct {
		Found   int    `json:"found"`
		Message string `json:"message"`
	}
	// The sources may take their time; the page waits for them.
	_ = http.NewResponseController(w).SetWriteDeadline(time.Now().Add(longCall))
	if err := s.c.do(http.MethodPost, "/api/pulse/onboarding/discover", nil, &res); err != nil {
		h.actionFailed(w, r, err, "/pulse/start?step=rate")
		return
	}
	if res.Found > 0 {
		done(w, r, "/pulse/start?step=rate#batch", res.Message)
		return
	}
	what, do, _ := strings.Cut(res.Message, ". ")
	if do != "" {
		what += "."
	}
	setFlashError(w, &uiError{What: what, Do: do})
	http.Redirect(w, r, "/pulse/start?step=rate", http.StatusSeeOther)
}

// pulseStartGenerate makes the user's first deck now (pulse.nightly).
func (h *handler) pulseStartGenerate(w http.ResponseWriter, r *http.Request, s *session, v *view) {
	err := s.c.do(http.MethodPost, "/api/pulse/generate", nil, nil)
	switch {
	case isStatus(err, http.StatusConflict):
		done(w, r, "/pulse/start?step=rate", "Your first deck is already being made; it appears on Today when it is done.")
	case err != nil:
		h.actionFailed(w, r, err, "/pulse/start?step=rate")
	default:
		done(w, r, "/pulse/start?step=rate", "Your first deck is being made; it appears on Today in a minute or two.")
	}
}

// splitList splits what was typed into a keyword field: by line and by comma,
// each trimmed, empty and repeated ones dropped.
func splitList(s string) []string {
	return uniqueNonEmpty(strings.FieldsFunc(s, func(r rune) bool { return r == '\n' || r == ',' || r == ';' }))
}

// splitLines splits a names field by line (a name may hold a comma).
func splitLines(s string) []string { return uniqueNonEmpty(strings.Split(s, "\n")) }

func uniqueNonEmpty(parts []string) []string {
	var out []string
	for _, p := range parts {
		p = strings.Join(strings.Fields(p), " ")
		if p != "" && !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out
}
