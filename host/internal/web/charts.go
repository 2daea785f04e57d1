package web

import (
	"fmt"
	"math"
	"time"
)

// barChart is a bar chart drawn as SVG by the analytics page: bars, a y axis with
// round ticks, and a few x labels. Coordinates are in the SVG's own units.
type barChart struct {
	Title   string
	Desc    string
	Width   float64
	Height  float64
	Bars    []chartBar
	Ticks   []chartTick
	XLabels []chartLabel
	// Left and Bottom are the plot's left edge and baseline.
	Left, Bottom float64
	Empty        bool
}

type chartBar struct {
	X, Y, W, H float64
	// Label is the bar's tooltip and accessible text, such as "3 Mar: 12 reviews".
	Label string
}

type chartTick struct {
	Y     float64
	Label string
}

type chartLabel struct {
	X     float64
	Label string
}

const (
	chartWidth  = 640
	chartHeight = 220
	chartLeft   = 40
	chartTop    = 10
	chartBottom = 190
)

// newBarChart lays out one bar per day; unit names what a bar counts ("reviews").
func newBarChart(title, desc, unit string, days []dayCount, value func(dayCount) int) barChart {
	c := barChart{Title: title, Desc: desc, Width: chartWidth, Height: chartHeight, Left: chartLeft, Bottom: chartBottom}
	maxV := 0
	for _, d := range days {
		maxV = max(maxV, value(d))
	}
	c.Empty = maxV == 0
	top := niceMax(maxV)
	plotW := float64(chartWidth - chartLeft - 10)
	plotH := float64(chartBottom - chartTop)
	n := len(days)
	if n == 0 {
		return c
	}
	slot := plotW / float64(n)
	barW := math.Max(1, slot*0.75)
	for i, d := range days {
		v := value(d)
		h := plotH * float64(v) / float64(top)
		x := chartLeft + float64(i)*slot + (slot-barW)/2
		c.Bars = append(c.Bars, chartBar{X: round1(x), Y: round1(chartBottom - h), W: round1(barW), H: round1(h),
			Label: fmt.Sprintf("%s: %d %s", shortDate(d.Date), v, unit)})
	}
	for _, t := range []int{0, top / 2, top} {
		c.Ticks = append(c.Ticks, chartTick{Y: round1(chartBottom - plotH*float64(t)/float64(top)), Label: fmt.Sprint(t)})
	}
	step := max(1, n/6)
	for i := 0; i < n; i += step {
		c.XLabels = append(c.XLabels, chartLabel{X: round1(chartLeft + float64(i)*slot + slot/2), Label: shortDate(days[i].Date)})
	}
	return c
}

// niceMax rounds v up to a tick-friendly maximum (at least 2, even, so the middle
// tick is whole).
func niceMax(v int) int {
	if v <= 2 {
		return 2
	}
	mag := int(math.Pow(10, math.Floor(math.Log10(float64(v)))))
	for _, m := range []int{1, 2, 4, 6, 8, 10} {
		if top := m * mag; top >= v && top%2 == 0 {
			return top
		}
	}
	return 10 * mag
}

func round1(f float64) float64 { return math.Round(f*10) / 10 }

func shortDate(s string) string {
	t, err := time.Parse("2006-01-02", s)
	if err != nil {
		return s
	}
	return t.Format("2 Jan")
}

// gauge is a horizontal bar from 0 to 100 %, with a mark at a target.
type gauge struct {
	Title   string
	Desc    string
	Percent float64
	// Fill is the filled width out of 100; TargetX where the target mark stands.
	Fill    float64
	TargetX float64
	Target  float64
	Empty   bool
}

func newGauge(title, desc string, share, target float64, empty bool) gauge {
	share = math.Max(0, math.Min(1, share))
	return gauge{Title: title, Desc: desc, Percent: math.Round(share * 100), Fill: round1(share * 100),
		TargetX: round1(target * 100), Target: math.Round(target * 100), Empty: empty}
}

// fillDays returns n consecutive days from start (YYYY-MM-DD), each with the
// counts days gives it and zero where it gives none, so that a chart shows gaps as
// empty days rather than leaving them out.
func fillDays(days []dayCount, start time.Time, n int) []dayCount {
	byDate := make(map[string]dayCount, len(days))
	for _, d := range days {
		byDate[d.Date] = d
	}
	out := make([]dayCount, n)
	for i := range out {
		date := start.AddDate(0, 0, i).Format("2006-01-02")
		out[i] = byDate[date]
		out[i].Date = date
	}
	return out
}
