package web

import (
	"net/http"
	"strconv"
	"strings"
	"time"
)

// The weekly summary page (/weekly?days=7): per topic, the papers the caller acted
// on in the window and the synthesis of what they share, its themes checked
// against the papers' text (GET /api/digest/weekly).

// weekly is GET /api/digest/weekly's answer.
type weekly struct {
	Days       int           `json:"days"`
	Since      time.Time     `json:"since"`
	Topics     []weeklyTopic `json:"topics"`
	PaperCount int           `json:"paper_count"`
	Message    string        `json:"message"`
}

type weeklyTopic struct {
	Name       string          `json:"name"`
	PaperCount int             `json:"paper_count"`
	Papers     []engagedPaper  `json:"papers"`
	Synthesis  *topicSynthesis `json:"synthesis"`
}

// More is how many of the topic's papers are not listed.
func (t weeklyTopic) More() int { return max(t.PaperCount-len(t.Papers), 0) }

type engagedPaper struct {
	ID    string    `json:"id"`
	Title string    `json:"title"`
	How   []string  `json:"how"`
	At    time.Time `json:"at"`
}

// Did says what the user did with the paper: "starred, liked".
func (p engagedPaper) Did() string {
	words := map[string]string{"starred": "starred", "reading": "started reading", "done": "finished", "liked": "liked"}
	out := make([]string, 0, len(p.How))
	for _, h := range p.How {
		if w, ok := words[h]; ok {
			out = append(out, w)
		} else {
			out = append(out, h)
		}
	}
	return strings.Join(out, ", ")
}

type topicSynthesis struct {
	TLDR     string   `json:"tldr"`
	Summary  string   `json:"summary"`
	Themes   []string `json:"themes"`
	Model    string   `json:"model"`
	Fallback *struct {
		Message string `json:"message"`
	} `json:"fallback"`
}

// Body is the summary when it says more than the one-line TL;DR (the builtin
// method's often only repeats it).
func (s topicSynthesis) Body() string {
	if s.TLDR != "" && strings.Contains(s.Summary, s.TLDR) {
		return ""
	}
	return s.Summary
}

// Extractive reports whether the builtin method (no language model) wrote it.
func (s topicSynthesis) Extractive() bool { return strings.HasPrefix(s.Model, "builtin") }

type weeklyData struct {
	Days    int
	Choices []int
	Summary *weekly
}

// weeklyDays are the windows the page offers; any from 1 to 30 may be asked for.
var weeklyDays = []int{7, 14, 30}

// weeklyPage shows the caller's weekly summary of the last days (1-30, default 7).
func (h *handler) weeklyPage(w http.ResponseWriter, r *http.Request, s *session, v *view) {
	d := &weeklyData{Days: 7, Choices: weeklyDays}
	v.Title, v.Nav, v.Data = "Weekly summary", "weekly", d
	if raw := strings.TrimSpace(r.URL.Query().Get("days")); raw != "" {
		n, err := strconv.Atoi(raw)
		if err != nil || n < 1 || n > 30 {
			v.status = http.StatusUnprocessableEntity
			v.Err = &uiError{What: "The number of days must be a whole number from 1 to 30.", Do: "Choose one of the windows below."}
			h.show(w, r, "weekly", v)
			return
		}
		d.Days = n
	}
	var sum weekly
	if err := s.c.get("/api/digest/weekly"+q("days", strconv.Itoa(d.Days)), &sum); err != nil {
		if isStatus(err, http.StatusUnauthorized) {
			h.toSignIn(w, r)
			return
		}
		v.status = statusOf(err)
		v.Err = humanError(err)
		h.show(w, r, "weekly", v)
		return
	}
	d.Summary = &sum
	h.show(w, r, "weekly", v)
}
