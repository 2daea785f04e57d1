package web

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
)

type reviewData struct {
	Card     *card
	Due      int
	ClientID string
	// Last names the previous answer's rating, such as "Good recorded.".
	Last string
	// UndoID is the review the page offers to undo (the one just recorded).
	UndoID string
	// NextDue is when the next card on a short-term step comes back, when no
	// card is due now; Wait is how long that is, WaitMS the same for the script.
	NextDue *time.Time
	Wait    string
	WaitMS  int64
}

// dueAnswer is GET /api/reviews/due.
type dueAnswer struct {
	Items             []card     `json:"items"`
	Now               time.Time  `json:"now"`
	NextLearningDueAt *time.Time `json:"next_learning_due_at"`
}

// reviewPage shows the next due card: its front, and behind "Show answer" (Space
// with JavaScript, the native disclosure without) the answer, the source sentence
// apart from it with a link to the reader, and the rating buttons, each naming the
// interval it would give (keys 1-4). After a rating the page offers to undo it.
// When only cards on a short-term learning step remain, it says when the next
// comes back (and, with JavaScript, shows it then). It is never cached, so going
// back to it after a rating shows the queue as it is, never the rated card again.
func (h *handler) reviewPage(w http.ResponseWriter, r *http.Request, s *session, v *view) {
	w.Header().Set("Cache-Control", "no-store")
	d := &reviewData{ClientID: newClientID()}
	query := r.URL.Query()
	// Only a known rating is named: the address carries a number, never text to show.
	if n, err := strconv.Atoi(query.Get("rated")); err == nil {
		if label := ratingLabel(n); label != "" {
			d.Last = label + " recorded."
			if query.Get("dup") != "" {
				d.Last = "This card was rated already (" + label + "). Undo that rating to rate it again."
			}
		}
	}
	if id := query.Get("undo"); d.Last != "" && uuid.Validate(id) == nil {
		d.UndoID = id
	}
	v.Title, v.Nav, v.Data = "Review", "review", d
	var due dueAnswer
	if err := s.c.get("/api/reviews/due?limit=200", &due); err != nil {
		if isStatus(err, http.StatusUnauthorized) {
			h.toSignIn(w, r)
			return
		}
		v.Err = humanError(err)
	}
	d.Due = len(due.Items)
	id := ""
	if d.Due > 0 {
		id = due.Items[0].ID
	}
	// A card whose rating was just undone is asked again first, as Anki does.
	if c := query.Get("card"); uuid.Validate(c) == nil && isDue(due, c) {
		id = c
	}
	if id != "" {
		var c card
		if err := s.c.get("/api/cards/"+pathEscape(id), &c); err != nil && v.Err == nil {
			v.Err = humanError(err)
		} else if err == nil {
			d.Card = &c
		}
	}
	if d.Card == nil && due.NextLearningDueAt != nil {
		wait := max(due.NextLearningDueAt.Sub(due.Now), 0)
		d.NextDue, d.Wait, d.WaitMS = due.NextLearningDueAt, waitText(wait), wait.Milliseconds()
	}
	h.show(w, r, "review", v)
}

// isDue reports whether the card id is in the due queue.
func isDue(due dueAnswer, id string) bool {
	for _, c := range due.Items {
		if c.ID == id {
			return true
		}
	}
	return false
}

// waitText says a wait in whole minutes and seconds: "9 min 5 s", "40 s".
func waitText(d time.Duration) string {
	d = d.Round(time.Second)
	if d < time.Minute {
		return fmt.Sprintf("%d s", int(d.Seconds()))
	}
	if s := int(d.Seconds()) % 60; s != 0 && d < 10*time.Minute {
		return fmt.Sprintf("%d min %d s", int(d.Minutes()), s)
	}
	return fmt.Sprintf("%d min", int(d.Round(time.Minute).Minutes()))
}

// reviewPost records one answer and goes on to the next card, offering to undo
// it. The same answer sent twice (the page submitted again after going back) is
// recorded once, and the page says so and offers the undo instead.
func (h *handler) reviewPost(w http.ResponseWriter, r *http.Request, s *session, v *view) {
	rating, _ := strconv.Atoi(r.PostFormValue("rating"))
	body := map[string]any{"card_id": r.PostFormValue("card_id"), "rating": rating}
	if id := r.PostFormValue("client_id"); id != "" {
		body["client_id"] = id
	}
	if ms, err := strconv.Atoi(r.PostFormValue("duration_ms")); err == nil && ms > 0 {
		body["duration_ms"] = ms
	}
	var res struct {
		ReviewID  string `json:"review_id"`
		Duplicate bool   `json:"duplicate"`
	}
	if err := s.c.do(http.MethodPost, "/api/reviews", body, &res); err != nil {
		h.actionFailed(w, r, err, "/review")
		return
	}
	rated := ""
	if ratingLabel(rating) != "" {
		rated = strconv.Itoa(rating)
	}
	dup := ""
	if res.Duplicate {
		dup = "1"
	}
	http.Redirect(w, r, "/review"+q("rated", rated, "undo", res.ReviewID, "dup", dup), http.StatusSeeOther)
}

// reviewUndo takes back a rating and asks the card again.
func (h *handler) reviewUndo(w http.ResponseWriter, r *http.Request, s *session, _ *view) {
	id := strings.TrimSpace(r.PostFormValue("review_id"))
	var res struct {
		Card card `json:"card"`
	}
	if err := s.c.do(http.MethodPost, "/api/reviews/"+pathEscape(id)+"/undo", nil, &res); err != nil {
		h.actionFailed(w, r, err, "/review")
		return
	}
	done(w, r, "/review"+q("card", res.Card.ID), "The rating is undone: rate the card again.")
}

func ratingLabel(r int) string {
	return map[int]string{1: "Again", 2: "Hard", 3: "Good", 4: "Easy"}[r]
}

// newClientID makes a review's client id, so that sending the same answer twice
// records it once.
func newClientID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return "web-" + strings.ToLower(hex.EncodeToString(b[:]))
}
