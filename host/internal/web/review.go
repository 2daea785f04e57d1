package web

import (
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"strconv"
	"strings"
)

type reviewData struct {
	Card     *card
	Due      int
	ClientID string
	// Last names the previous answer's rating, such as "Good recorded.".
	Last string
}

// reviewPage shows the next due card; ratings 1-4 (keys 1-4 with JavaScript) each
// name the interval they would give.
func (h *handler) reviewPage(w http.ResponseWriter, r *http.Request, s *session, v *view) {
	d := &reviewData{ClientID: newClientID()}
	// Only a known rating is named: the address carries a number, never text to show.
	if n, err := strconv.Atoi(r.URL.Query().Get("rated")); err == nil {
		if label := ratingLabel(n); label != "" {
			d.Last = label + " recorded."
		}
	}
	v.Title, v.Nav, v.Data = "Review", "review", d
	var due struct {
		Items []card `json:"items"`
	}
	if err := s.c.get("/api/reviews/due?limit=200", &due); err != nil {
		if isStatus(err, http.StatusUnauthorized) {
			h.toSignIn(w, r)
			return
		}
		v.Err = humanError(err)
	}
	d.Due = len(due.Items)
	if d.Due > 0 {
		d.Card = &due.Items[0]
	}
	h.show(w, r, "review", v)
}

// reviewPost records one answer and goes on to the next card.
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
		Card card `json:"card"`
	}
	if err := s.c.do(http.MethodPost, "/api/reviews", body, &res); err != nil {
		h.actionFailed(w, r, err, "/review")
		return
	}
	rated := ""
	if ratingLabel(rating) != "" {
		rated = strconv.Itoa(rating)
	}
	http.Redirect(w, r, "/review"+q("rated", rated), http.StatusSeeOther)
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
