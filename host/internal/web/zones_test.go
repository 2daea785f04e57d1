package web

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestTimesShowInTheViewersZone: a known instant reads on the viewer's clock with
// its zone's name, in winter and in summer; a viewer in UTC, without a zone or with
// one Go does not know sees UTC.
func TestTimesShowInTheViewersZone(t *testing.T) {
	t.Parallel()
	rd, err := newRenderer(slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	winter := time.Date(2026, 3, 1, 15, 30, 0, 0, time.UTC)
	summer := time.Date(2026, 7, 1, 15, 30, 0, 0, time.UTC)
	for _, tc := range []struct {
		zone string
		want []string
	}{
		{"America/New_York", []string{"Started 1 Mar 2026 10:30 EST", "Started 1 Jul 2026 11:30 EDT"}},
		{"Asia/Kolkata", []string{"Started 1 Mar 2026 21:00 IST"}},
		{"America/Sao_Paulo", []string{"Started 1 Mar 2026 12:30 UTC-03"}},
		{"UTC", []string{"Started 1 Mar 2026 15:30 UTC", "Started 1 Jul 2026 15:30 UTC"}},
		{"", []string{"Started 1 Mar 2026 15:30 UTC"}},
		{"Mars/Olympus_Mons", []string{"Started 1 Mar 2026 15:30 UTC"}},
	} {
		t.Run(tc.zone, func(t *testing.T) {
			t.Parallel()
			rec := httptest.NewRecorder()
			data := &jobsData{Jobs: []job{{ID: 1, State: "succeeded", CreatedAt: winter}, {ID: 2, State: "succeeded", CreatedAt: summer}}}
			rd.render(rec, httptest.NewRequest(http.MethodGet, "/jobs", nil), http.StatusOK, "jobs",
				&view{Me: &me{Timezone: tc.zone}, Data: data})
			require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
			for _, want := range tc.want {
				require.Contains(t, rec.Body.String(), want)
			}
		})
	}
}

func TestDatesFallOnTheViewersDay(t *testing.T) {
	t.Parallel()
	ny, err := time.LoadLocation("America/New_York")
	require.NoError(t, err)
	tokyo, err := time.LoadLocation("Asia/Tokyo")
	require.NoError(t, err)
	for _, tc := range []struct {
		name string
		loc  *time.Location
		in   any
		want string
	}{
		{"instant before midnight in New York", ny, "2026-03-01T02:00:00Z", "28 Feb 2026"},
		{"the same instant in UTC", nil, "2026-03-01T02:00:00Z", "1 Mar 2026"},
		{"a plain date stays its day", ny, "2026-03-01", "1 Mar 2026"},
		{"a time.Time", tokyo, time.Date(2026, 3, 1, 20, 0, 0, 0, time.UTC), "2 Mar 2026"},
		{"due on the day picked in New York", ny, dueAt("2026-03-10", ny), "10 Mar 2026"},
		{"due on the day picked in Tokyo", tokyo, dueAt("2026-03-10", tokyo), "10 Mar 2026"},
		{"due on the day picked in UTC", nil, dueAt("2026-03-10", time.UTC), "10 Mar 2026"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tc.want, fmtDate(tc.loc, tc.in))
		})
	}
	require.Equal(t, "2026-03-10T17:00:00-04:00", dueAt("2026-03-10", ny), "17:00 on the day, after the switch to summer time")
	require.Equal(t, "soonT17:00:00Z", dueAt("soon", ny), "what is not a date goes to the API to refuse")
}

// TestTimeZoneListIsTheTZDatabase: the field's list holds the zones people pick,
// and every one loads.
func TestTimeZoneListIsTheTZDatabase(t *testing.T) {
	t.Parallel()
	zones := timeZones()
	require.Greater(t, len(zones), 300)
	for _, z := range []string{"Europe/Berlin", "Asia/Kolkata", "America/New_York", "Pacific/Kiritimati", "UTC"} {
		require.Contains(t, zones, z)
	}
	require.NotContains(t, zones, "EST5EDT", "old aliases outside the areas are left out")
	for _, z := range zones {
		_, err := time.LoadLocation(z)
		require.NoError(t, err, z)
	}
}

// TestDashboardTimesFollowTheProfile walks it through the dashboard: the settings
// field offers the list, and once the profile says New York the jobs page shows
// the job's start on New York's clock; back in UTC, in UTC. A task due on a day
// picked in Tokyo shows that day.
func TestDashboardTimesFollowTheProfile(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	b := s.browser(t)
	p := b.post("/onboarding/admin", url.Values{"email": {"ada@example.org"}})
	require.Equal(t, http.StatusOK, p.status, p.body)
	p = b.upload("/onboarding/upload", "spaced.pdf", samplePDF("Spaced Repetition for Readers", paperPages))
	require.Equal(t, http.StatusOK, p.status, p.body)

	p = b.get("/settings")
	require.Equal(t, http.StatusOK, p.status, p.body)
	require.Contains(t, p.body, `list="timezones"`)
	require.Contains(t, p.body, `data-zones="/static/zones.txt"`)
	p = b.get("/static/zones.txt")
	require.Equal(t, http.StatusOK, p.status)
	require.Contains(t, strings.Fields(p.body), "Europe/Berlin")
	require.Contains(t, strings.Fields(p.body), "Asia/Kolkata")

	var jp jobPage
	require.Equal(t, http.StatusOK, b.apiJSON(http.MethodGet, "/api/jobs", nil, &jp))
	require.NotEmpty(t, jp.Jobs)
	started := jp.Jobs[len(jp.Jobs)-1].CreatedAt
	ny, err := time.LoadLocation("America/New_York")
	require.NoError(t, err)

	p = b.post("/settings/profile", url.Values{"display_name": {"Ada"}, "timezone": {"America/New_York"}})
	require.Equal(t, http.StatusOK, p.status, p.body)
	p = b.get("/jobs")
	require.Equal(t, http.StatusOK, p.status, p.body)
	inNY := started.In(ny)
	require.Contains(t, p.body, "Started "+inNY.Format("2 Jan 2006 15:04 MST"))
	require.True(t, strings.Contains(p.body, " EST") || strings.Contains(p.body, " EDT"))

	p = b.post("/settings/profile", url.Values{"display_name": {"Ada"}, "timezone": {"UTC"}})
	require.Equal(t, http.StatusOK, p.status, p.body)
	p = b.get("/jobs")
	require.Contains(t, p.body, "Started "+started.UTC().Format("2 Jan 2006 15:04")+" UTC")

	p = b.post("/settings/profile", url.Values{"display_name": {"Ada"}, "timezone": {"Asia/Tokyo"}})
	require.Equal(t, http.StatusOK, p.status, p.body)
	p = b.post("/projects", url.Values{"name": {"Thesis"}})
	require.Equal(t, http.StatusOK, p.status, p.body)
	project := strings.SplitN(p.url, "?", 2)[0]
	p = b.post(project+"/tasks", url.Values{"title": {"Draft"}, "due_at": {"2026-03-10"}})
	require.Equal(t, http.StatusOK, p.status, p.body)
	require.Contains(t, p.body, "due 10 Mar 2026")
}
