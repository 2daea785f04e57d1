package fsrs

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// Review is one past review, the unit of a review log.
type Review struct {
	// CardID identifies the card reviewed.
	CardID string
	// Rating is the answer, 1 (Again) to 4 (Easy).
	Rating Rating
	// Time is when the review happened.
	Time time.Time
	// Duration is how long the review took; 0 when not recorded.
	Duration time.Duration
}

// Column names ReadReviewLog accepts, the first of each list being the name in
// py-fsrs's review log export.
var (
	cardColumns     = []string{"card_id", "cid"}
	ratingColumns   = []string{"review_rating", "rating"}
	timeColumns     = []string{"review_time", "review_datetime", "time"}
	durationColumns = []string{"review_duration", "duration_ms"}
)

// ReadReviewLog reads a review log in CSV with a header line. Columns, by
// header name, in any order (extra columns are ignored):
//
//	card_id          (or cid)                      any string identifying the card
//	review_rating    (or rating)                   1 to 4
//	review_time      (or review_datetime, time)    RFC 3339 / ISO 8601 with a zone
//	                                               offset, or Unix milliseconds
//	review_duration  (or duration_ms), optional    milliseconds; may be empty
//
// This is the layout of py-fsrs's exported review logs. A malformed line fails
// the read with an error naming its line number. Reviews come back in file
// order.
func ReadReviewLog(r io.Reader) ([]Review, error) {
	cr := csv.NewReader(r)
	cr.ReuseRecord = true
	header, err := cr.Read()
	if errors.Is(err, io.EOF) {
		return nil, errors.New("fsrs: review log: empty, want a header line")
	}
	if err != nil {
		return nil, fmt.Errorf("fsrs: review log: %w", err)
	}
	cols := map[string]int{}
	for i, h := range header {
		cols[strings.ToLower(strings.TrimSpace(strings.TrimPrefix(h, "\ufeff")))] = i
	}
	find := func(names []string) int {
		for _, n := range names {
			if i, ok := cols[n]; ok {
				return i
			}
		}
		return -1
	}
	cardCol, ratingCol, timeCol, durCol := find(cardColumns), find(ratingColumns), find(timeColumns), find(durationColumns)
	for _, need := range []struct {
		col   int
		names []string
	}{{cardCol, cardColumns}, {ratingCol, ratingColumns}, {timeCol, timeColumns}} {
		if need.col < 0 {
			return nil, fmt.Errorf("fsrs: review log: header lacks a %s column", strings.Join(need.names, " or "))
		}
	}

	var out []Review
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("fsrs: review log: %w", err)
		}
		line, _ := cr.FieldPos(0)
		rv, err := parseReview(rec, cardCol, ratingCol, timeCol, durCol)
		if err != nil {
			return nil, fmt.Errorf("fsrs: review log line %d: %w", line, err)
		}
		out = append(out, rv)
	}
}

func parseReview(rec []string, cardCol, ratingCol, timeCol, durCol int) (Review, error) {
	var rv Review
	rv.CardID = strings.TrimSpace(rec[cardCol])
	if rv.CardID == "" {
		return rv, errors.New("empty card id")
	}
	n, err := strconv.Atoi(strings.TrimSpace(rec[ratingCol]))
	if err != nil || !Rating(n).Valid() {
		return rv, fmt.Errorf("rating %q is not 1 to 4", rec[ratingCol])
	}
	rv.Rating = Rating(n)
	rv.Time, err = parseTime(strings.TrimSpace(rec[timeCol]))
	if err != nil {
		return rv, err
	}
	if durCol >= 0 {
		if s := strings.TrimSpace(rec[durCol]); s != "" {
			ms, err := strconv.ParseFloat(s, 64)
			if err != nil || ms < 0 {
				return rv, fmt.Errorf("duration %q is not a number of milliseconds", rec[durCol])
			}
			rv.Duration = time.Duration(ms * float64(time.Millisecond))
		}
	}
	return rv, nil
}

func parseTime(s string) (time.Time, error) {
	if ms, err := strconv.ParseInt(s, 10, 64); err == nil {
		return time.UnixMilli(ms).UTC(), nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("time %q is neither RFC 3339 nor Unix milliseconds", s)
	}
	return t, nil
}
