package fsrs_test

import (
	"fmt"
	"time"

	"github.com/lectern-research/lectern/host/internal/fsrs"
)

// A new card through its two learning steps into Review, then what each
// rating would do at its due time.
func ExampleScheduler() {
	cfg := fsrs.DefaultSchedulerConfig()
	cfg.EnableFuzz = false
	s, err := fsrs.NewScheduler(cfg)
	if err != nil {
		panic(err)
	}
	now := time.Date(2024, 5, 1, 9, 0, 0, 0, time.UTC)
	card := fsrs.NewCard(now)
	for range 2 {
		var log fsrs.ReviewLog
		card, log, err = s.Review(card, fsrs.Good, card.Due)
		if err != nil {
			panic(err)
		}
		fmt.Printf("%v -> %v, next in %v\n", log.Before.State, card.State, log.Interval)
	}
	out, err := s.Preview(card, card.Due)
	if err != nil {
		panic(err)
	}
	for _, o := range out {
		fmt.Printf("%v: %v\n", o.Rating, o.Interval)
	}
	// Output:
	// New -> Learning, next in 10m0s
	// Learning -> Review, next in 48h0m0s
	// Again: 10m0s
	// Hard: 192h0m0s
	// Good: 264h0m0s
	// Easy: 456h0m0s
}
