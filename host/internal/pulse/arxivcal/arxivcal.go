// Package arxivcal knows when arXiv announces new papers, so that a night with
// nothing new from arXiv is explained ("arXiv announced nothing since Thursday")
// rather than shown as a failed source.
//
// arXiv makes submissions public Sunday to Thursday at 20:00 US Eastern time, with
// no announcement on Friday or Saturday, and defers the mailing on some US holidays
// (https://info.arxiv.org/help/availability.html). The holidays are published
// year by year; this package knows the ones arXiv has kept every year (New Year's
// Day, Martin Luther King Jr. Day, Juneteenth, Independence Day, Labor Day,
// Thanksgiving and Christmas, each on the day arXiv would otherwise announce).
// An ad hoc deferral it cannot know shows as an empty night that is not
// explained, which is what it is until arXiv's status page says otherwise.
package arxivcal

import (
	"fmt"
	"time"
	_ "time/tzdata" // the Eastern time zone without relying on the host's tz database
)

// eastern is arXiv's time zone.
var eastern = mustLoad("America/New_York")

func mustLoad(name string) *time.Location {
	loc, err := time.LoadLocation(name)
	if err != nil {
		panic(fmt.Sprintf("arxivcal: load %s: %v", name, err))
	}
	return loc
}

// announceHour is the hour of the day, Eastern time, at which arXiv announces.
const announceHour = 20

// Announcements are the instants in (from, to] at which arXiv announced (or will
// announce) new submissions, oldest first.
func Announcements(from, to time.Time) []time.Time {
	var out []time.Time
	d := from.In(eastern)
	day := time.Date(d.Year(), d.Month(), d.Day(), announceHour, 0, 0, 0, eastern)
	for ; !day.After(to); day = day.AddDate(0, 0, 1) {
		if day.After(from) && Announces(day) {
			out = append(out, day)
		}
	}
	return out
}

// Announces reports whether arXiv announces on the Eastern calendar day of t.
func Announces(t time.Time) bool {
	e := t.In(eastern)
	switch e.Weekday() {
	case time.Friday, time.Saturday:
		return false
	}
	return Holiday(e) == ""
}

// Last is the latest announcement at or before t.
func Last(t time.Time) time.Time {
	e := t.In(eastern)
	day := time.Date(e.Year(), e.Month(), e.Day(), announceHour, 0, 0, 0, eastern)
	if day.After(t) {
		day = day.AddDate(0, 0, -1)
	}
	for !Announces(day) {
		day = day.AddDate(0, 0, -1)
	}
	return day
}

// Holiday names the US holiday on the Eastern calendar day of t on which arXiv
// does not announce, or "" for none.
func Holiday(t time.Time) string {
	e := t.In(eastern)
	_, m, d := e.Date()
	switch {
	case m == time.January && d == 1:
		return "New Year's Day"
	case m == time.January && e.Weekday() == time.Monday && nth(d) == 3:
		return "Martin Luther King Jr. Day"
	case m == time.June && d == 19:
		return "Juneteenth"
	case m == time.July && d == 4:
		return "Independence Day"
	case m == time.September && e.Weekday() == time.Monday && nth(d) == 1:
		return "Labor Day"
	case m == time.November && e.Weekday() == time.Thursday && nth(d) == 4:
		return "Thanksgiving"
	case m == time.December && d == 25:
		return "Christmas Day"
	}
	return ""
}

// nth is which occurrence of its weekday day d of a month is (1 for days 1-7).
func nth(d int) int { return (d-1)/7 + 1 }

// Quiet explains why arXiv has announced nothing in (since, now], in a sentence
// for the deck's diagnostics, or "" when it did announce in that window (an empty
// result then is not the calendar's doing).
func Quiet(since, now time.Time) string {
	if len(Announcements(since, now)) > 0 {
		return ""
	}
	last := Last(now)
	why := "arXiv does not announce on Fridays and Saturdays"
	for day := last.AddDate(0, 0, 1); !day.After(now); day = day.AddDate(0, 0, 1) {
		if h := Holiday(day); h != "" && day.Weekday() != time.Friday && day.Weekday() != time.Saturday {
			why = "arXiv does not announce on " + h
			break
		}
	}
	return fmt.Sprintf("arXiv announced nothing new since %s, %s 20:00 US Eastern time: %s.",
		last.Weekday(), last.Format("2 January"), why)
}
