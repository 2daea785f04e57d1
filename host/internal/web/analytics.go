package web

import (
	"math"
	"net/http"
	"sort"
	"time"
)

type analyticsData struct {
	A         analytics
	Reviews   barChart
	Forecast  barChart
	Retention gauge
	// Daily is the retention of each day with mature reviews, in percent.
	Daily  barChart
	States []stateCount
}

type stateCount struct {
	State string
	Count int
}

// analyticsPage draws the review statistics as SVG: reviews per day, retention and
// the 30-day due forecast.
func (h *handler) analyticsPage(w http.ResponseWriter, r *http.Request, s *session, v *view) {
	d := &analyticsData{}
	v.Title, v.Nav, v.Data = "Analytics", "analytics", d
	if err := s.c.get("/api/analytics?days=30", &d.A); err != nil {
		if isStatus(err, http.StatusUnauthorized) {
			h.toSignIn(w, r)
			return
		}
		v.Err = humanError(err)
	}
	loc, err := time.LoadLocation(d.A.Timezone)
	if err != nil || d.A.Timezone == "" {
		loc = time.UTC
	}
	now := time.Now().In(loc)
	today := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC)
	d.Reviews = newBarChart("Reviews per day", "Cards reviewed on each of the last 30 days.", "reviews",
		fillDays(d.A.ReviewsPerDay, today.AddDate(0, 0, -29), 30), func(c dayCount) int { return c.Reviews })
	d.Forecast = newBarChart("Due in the next 30 days", "Cards falling due on each of the next 30 days; today includes overdue cards.", "due",
		fillDays(d.A.DueForecast, today, 30), func(c dayCount) int { return c.Due })
	d.Daily = newBarChart("Retention per day", "Share of each day's reviews of mature cards not answered Again, in percent; days without such reviews are empty.", "%",
		fillDays(d.A.ReviewsPerDay, today.AddDate(0, 0, -29), 30), func(c dayCount) int {
			if c.Mature == 0 {
				return 0
			}
			return int(math.Round(100 * float64(c.Recalled) / float64(c.Mature)))
		})
	d.Retention = newGauge("Retention", "Share of reviews of mature cards not answered Again, against the 90 % target.",
		d.A.TrueRetention, 0.9, d.A.MatureReviews == 0)
	for st, n := range d.A.CardsByState {
		d.States = append(d.States, stateCount{st, n})
	}
	sort.Slice(d.States, func(i, j int) bool { return d.States[i].State < d.States[j].State })
	h.show(w, r, "analytics", v)
}
