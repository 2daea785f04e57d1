package arxivcal

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func utc(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t
}

func TestAnnouncementsFollowTheWeeklySchedule(t *testing.T) {
	t.Parallel()
	// A plain week in November (Eastern standard time, UTC-5): Sunday to
	// Thursday at 20:00 Eastern is 01:00 UTC the next day.
	got := Announcements(utc("2026-11-08T00:00:00Z"), utc("2026-11-15T00:00:00Z"))
	var when []string
	for _, a := range got {
		when = append(when, a.UTC().Format(time.RFC3339))
	}
	require.Equal(t, []string{"2026-11-09T01:00:00Z", "2026-11-10T01:00:00Z", "2026-11-11T01:00:00Z",
		"2026-11-12T01:00:00Z", "2026-11-13T01:00:00Z"}, when)

	// In summer (daylight time, UTC-4) it is midnight UTC.
	got = Announcements(utc("2026-07-12T12:00:00Z"), utc("2026-07-13T12:00:00Z"))
	require.Len(t, got, 1)
	require.Equal(t, "2026-07-13T00:00:00Z", got[0].UTC().Format(time.RFC3339))
}

func TestHolidays(t *testing.T) {
	t.Parallel()
	for day, want := range map[string]string{
		"2026-11-26T22:00:00Z": "Thanksgiving", // the fourth Thursday of November 2026
		"2026-11-19T22:00:00Z": "",
		"2027-01-18T22:00:00Z": "Martin Luther King Jr. Day",
		"2026-09-07T22:00:00Z": "Labor Day",
		"2026-12-25T22:00:00Z": "Christmas Day",
		"2026-06-19T22:00:00Z": "Juneteenth",
		"2026-07-04T22:00:00Z": "Independence Day",
		"2027-01-01T22:00:00Z": "New Year's Day",
		// 02:00 UTC on 27 November is still Thanksgiving evening in New York.
		"2026-11-27T02:00:00Z": "Thanksgiving",
	} {
		require.Equal(t, want, Holiday(utc(day)), day)
	}
	require.False(t, Announces(utc("2026-11-26T22:00:00Z")))
	require.True(t, Announces(utc("2026-11-25T22:00:00Z")))
}

func TestQuietExplainsAnEmptyNight(t *testing.T) {
	t.Parallel()
	// Friday morning after Thanksgiving 2026: Thursday's announcement was deferred.
	require.Equal(t, "arXiv announced nothing new since Wednesday, 25 November 20:00 US Eastern time: arXiv does not announce on Thanksgiving.",
		Quiet(utc("2026-11-26T08:00:00Z"), utc("2026-11-27T08:00:00Z")))
	// Saturday morning: nothing on Friday evening.
	require.Equal(t, "arXiv announced nothing new since Thursday, 19 November 20:00 US Eastern time: arXiv does not announce on Fridays and Saturdays.",
		Quiet(utc("2026-11-20T12:00:00Z"), utc("2026-11-21T12:00:00Z")))
	// Monday morning: Sunday evening's announcement happened, so an empty result
	// is not the calendar's doing.
	require.Empty(t, Quiet(utc("2026-11-22T08:00:00Z"), utc("2026-11-23T08:00:00Z")))
	require.Equal(t, utc("2026-11-23T01:00:00Z"), Last(utc("2026-11-23T08:00:00Z")).UTC())
}
