package web

import (
	"strings"
	"time"
	_ "time/tzdata" // the zones load on a host without /usr/share/zoneinfo too
)

//go:generate go run zones_generate.go

// zonesFile is the list the profile's time zone field offers, served as a static
// file and filled into the field's datalist by app.js: every Area/Location name of
// the tz database the Go toolchain ships, plus UTC, written by zones_generate.go
// from $GOROOT/lib/time/zoneinfo.zip.
const zonesFile = "static/zones.txt"

// timeZones returns the names the time zone field offers, sorted.
func timeZones() []string {
	raw, err := staticFS.ReadFile(zonesFile)
	if err != nil {
		return nil
	}
	return strings.Fields(string(raw))
}

// zoneOf is where the viewer's times are shown: the profile's time zone, or UTC
// when there is no profile or its zone is not one Go knows.
func zoneOf(m *me) *time.Location {
	if m == nil || m.Timezone == "" {
		return time.UTC
	}
	loc, err := time.LoadLocation(m.Timezone)
	if err != nil {
		return time.UTC
	}
	return loc
}

// inZone is t in loc; a nil loc is UTC.
func inZone(t time.Time, loc *time.Location) time.Time {
	if loc == nil {
		loc = time.UTC
	}
	return t.In(loc)
}

// zoneAbbrev names t's zone as a clock shows it: "EST", "CET", "UTC". Zones the tz
// database gives no letters for ("-03") read as an offset from UTC ("UTC-03").
func zoneAbbrev(t time.Time) string {
	name, _ := t.Zone()
	if strings.HasPrefix(name, "+") || strings.HasPrefix(name, "-") {
		return "UTC" + name
	}
	return name
}
