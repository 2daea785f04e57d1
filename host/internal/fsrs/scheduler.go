package fsrs

import (
	"errors"
	"fmt"
	"math"
	"time"
)

// Rating is the answer to a review: Again (forgot), Hard, Good or Easy.
type Rating int

// The four ratings, numbered as in every FSRS implementation.
const (
	Again Rating = 1
	Hard  Rating = 2
	Good  Rating = 3
	Easy  Rating = 4
)

// Ratings lists the four ratings in order, for ranging over.
var Ratings = [4]Rating{Again, Hard, Good, Easy}

// Valid reports whether r is one of the four ratings.
func (r Rating) Valid() bool { return r >= Again && r <= Easy }

// String returns the rating's name.
func (r Rating) String() string {
	switch r {
	case Again:
		return "Again"
	case Hard:
		return "Hard"
	case Good:
		return "Good"
	case Easy:
		return "Easy"
	}
	return fmt.Sprintf("Rating(%d)", int(r))
}

// State is where a card is in the scheduler's state machine.
type State int

// The card states. New cards have no memory yet; Learning and Relearning cards
// walk through their steps (minutes apart); Review cards are scheduled in days.
const (
	StateNew State = iota
	StateLearning
	StateReview
	StateRelearning
)

// String returns the state's name.
func (s State) String() string {
	switch s {
	case StateNew:
		return "New"
	case StateLearning:
		return "Learning"
	case StateReview:
		return "Review"
	case StateRelearning:
		return "Relearning"
	}
	return fmt.Sprintf("State(%d)", int(s))
}

// ErrRating is returned for a rating other than 1 to 4.
var ErrRating = errors.New("fsrs: rating must be 1 (Again) to 4 (Easy)")

// Card is the scheduling state of one card. The zero Card is a new card due at
// the zero time; NewCard makes one due now.
type Card struct {
	// State is the card's place in the state machine.
	State State
	// Step indexes the learning steps (in Learning) or relearning steps (in
	// Relearning); it is 0 in the other states.
	Step int
	// Stability is the memory's stability in days; 0 for a New card.
	Stability float64
	// Difficulty is the memory's difficulty in [1, 10]; 0 for a New card.
	Difficulty float64
	// Due is when the card should next be reviewed.
	Due time.Time
	// LastReview is when the card was last reviewed; zero for a New card.
	LastReview time.Time
}

// NewCard returns a card never reviewed, due at now.
func NewCard(now time.Time) Card { return Card{State: StateNew, Due: now} }

// Memory returns the card's memory state; ok is false for a card without one
// (a New card).
func (c Card) Memory() (m Memory, ok bool) {
	if c.Stability <= 0 {
		return Memory{}, false
	}
	return Memory{Stability: c.Stability, Difficulty: c.Difficulty}, true
}

// ReviewLog records one review: what was answered, when, and the card before
// and after.
type ReviewLog struct {
	// Rating is the answer given.
	Rating Rating
	// ReviewedAt is the time of the review.
	ReviewedAt time.Time
	// ElapsedDays is the number of whole days since the previous review; 0 for
	// a card's first review.
	ElapsedDays int
	// Retrievability is the recall probability the model predicted at review
	// time; 0 for a card without memory.
	Retrievability float64
	// Interval is the time from this review to the next due time.
	Interval time.Duration
	// ScheduledDays is Interval in whole days (0 for a step of minutes).
	ScheduledDays int
	// Before is the card as it was before the review.
	Before Card
	// After is the card as the review left it.
	After Card
}

// Outcome is what one rating would do to a card; see Scheduler.Preview.
type Outcome struct {
	// Rating is the rating this outcome is for.
	Rating Rating
	// Card is the card after a review with Rating.
	Card Card
	// Interval is the time until Card.Due.
	Interval time.Duration
}

// SchedulerConfig configures a Scheduler. Each field documents the value
// DefaultSchedulerConfig gives it; NewScheduler takes the fields literally.
type SchedulerConfig struct {
	// Params are the model parameters. Default: DefaultParams().
	Params Params
	// DesiredRetention is the recall probability at which reviews are
	// scheduled, in (0, 1]. Default: 0.9.
	DesiredRetention float64
	// MaximumInterval is the longest interval, in days (at least 1). Default:
	// 36500.
	MaximumInterval int
	// LearningSteps are the waits between the reviews of a new card before it
	// graduates to Review; none means it graduates on its first review.
	// Default: 1 minute, 10 minutes.
	LearningSteps []time.Duration
	// RelearningSteps are the waits between the reviews of a lapsed card
	// before it returns to Review; none means a lapse is scheduled in days.
	// Default: 10 minutes.
	RelearningSteps []time.Duration
	// EnableFuzz spreads Review intervals of 3 days or more over the py-fsrs
	// fuzz range so that cards learned together do not stay together.
	// Default: true.
	EnableFuzz bool
	// FuzzSeed seeds the fuzz. The fuzz draw is a hash of FuzzSeed, the card's
	// last review and stability and the review time, so a given review always
	// gets the same interval and Preview shows exactly what Review will do.
	// Default: 0.
	FuzzSeed uint64
	// LongTermOnly selects go-fsrs's long-term scheduler (its
	// enable_short_term = false): steps are ignored, every card goes straight
	// to Review, same-day reviews use the ordinary recall and lapse formulas,
	// and the four ratings' intervals are kept in order (Again < Hard < Good <
	// Easy, each at least a day apart). Default: false.
	LongTermOnly bool
}

// DefaultSchedulerConfig returns py-fsrs v6's default scheduler settings.
func DefaultSchedulerConfig() SchedulerConfig {
	return SchedulerConfig{
		Params:           DefaultParams(),
		DesiredRetention: 0.9,
		MaximumInterval:  36500,
		LearningSteps:    []time.Duration{time.Minute, 10 * time.Minute},
		RelearningSteps:  []time.Duration{10 * time.Minute},
		EnableFuzz:       true,
	}
}

// Scheduler reviews cards under one configuration (one deck's settings). It is
// immutable and safe for concurrent use.
type Scheduler struct {
	cfg SchedulerConfig
}

// NewScheduler checks cfg and returns a Scheduler using it.
func NewScheduler(cfg SchedulerConfig) (*Scheduler, error) {
	if err := cfg.Params.Validate(); err != nil {
		return nil, err
	}
	if !(cfg.DesiredRetention > 0 && cfg.DesiredRetention <= 1) {
		return nil, fmt.Errorf("fsrs: desired retention %v outside (0, 1]", cfg.DesiredRetention)
	}
	if cfg.MaximumInterval < 1 {
		return nil, fmt.Errorf("fsrs: maximum interval %d days is below 1", cfg.MaximumInterval)
	}
	for _, steps := range [][]time.Duration{cfg.LearningSteps, cfg.RelearningSteps} {
		for _, d := range steps {
			if d <= 0 {
				return nil, fmt.Errorf("fsrs: step %v is not positive", d)
			}
		}
	}
	cfg.LearningSteps = append([]time.Duration(nil), cfg.LearningSteps...)
	cfg.RelearningSteps = append([]time.Duration(nil), cfg.RelearningSteps...)
	return &Scheduler{cfg: cfg}, nil
}

// Params returns the scheduler's parameters.
func (s *Scheduler) Params() Params { return s.cfg.Params }

// Retrievability is the card's recall probability at now, counting whole
// elapsed days as py-fsrs does; 0 for a card without memory.
func (s *Scheduler) Retrievability(card Card, now time.Time) float64 {
	m, ok := card.Memory()
	if !ok || card.LastReview.IsZero() {
		return 0
	}
	return s.cfg.Params.Retrievability(float64(elapsedDays(card.LastReview, now)), m.Stability)
}

// Review applies a review rated r at now to card and returns the new card with
// its log. It fails only for an invalid rating or a card whose state is
// inconsistent (a Review or Relearning card without memory).
func (s *Scheduler) Review(card Card, r Rating, now time.Time) (Card, ReviewLog, error) {
	if !r.Valid() {
		return Card{}, ReviewLog{}, ErrRating
	}
	if err := checkCard(card); err != nil {
		return Card{}, ReviewLog{}, err
	}
	if s.cfg.LongTermOnly {
		out := s.longTerm(card, now)
		return out[r-1].Card, s.log(card, out[r-1], now), nil
	}
	o := s.review(card, r, now)
	return o.Card, s.log(card, o, now), nil
}

// Preview returns, for each rating in order Again, Hard, Good, Easy, what a
// review at now would do to card, fuzz included: the API shows these intervals
// on the rating buttons. A card with an inconsistent state yields an error.
func (s *Scheduler) Preview(card Card, now time.Time) ([4]Outcome, error) {
	if err := checkCard(card); err != nil {
		return [4]Outcome{}, err
	}
	if s.cfg.LongTermOnly {
		return s.longTerm(card, now), nil
	}
	var out [4]Outcome
	for i, r := range Ratings {
		out[i] = s.review(card, r, now)
	}
	return out, nil
}

func checkCard(c Card) error {
	switch c.State {
	case StateNew, StateLearning:
		return nil
	case StateReview, StateRelearning:
		if _, ok := c.Memory(); !ok || c.LastReview.IsZero() {
			return fmt.Errorf("fsrs: card in state %v has no memory or last review", c.State)
		}
		return nil
	}
	return fmt.Errorf("fsrs: unknown card state %d", int(c.State))
}

func (s *Scheduler) log(before Card, o Outcome, now time.Time) ReviewLog {
	l := ReviewLog{
		Rating:        o.Rating,
		ReviewedAt:    now,
		Interval:      o.Interval,
		ScheduledDays: int(o.Interval / day),
		Before:        before,
		After:         o.Card,
	}
	if _, ok := before.Memory(); ok && !before.LastReview.IsZero() {
		l.ElapsedDays = elapsedDays(before.LastReview, now)
		l.Retrievability = s.Retrievability(before, now)
	}
	return l
}

const day = 24 * time.Hour

// elapsedDays counts whole days from last to now, never negative (py-fsrs uses
// timedelta.days the same way).
func elapsedDays(last, now time.Time) int {
	d := now.Sub(last)
	if d < 0 {
		return 0
	}
	return int(d / day)
}

// review is py-fsrs v6's Scheduler.review_card with New as an explicit state:
// update the memory, then move through the steps or schedule in days.
func (s *Scheduler) review(card Card, r Rating, now time.Time) Outcome {
	p := s.cfg.Params
	c := card
	m, hasMemory := card.Memory()
	if !hasMemory || card.LastReview.IsZero() {
		m = p.InitialMemory(r)
		if c.State == StateNew {
			c.State, c.Step = StateLearning, 0
		}
	} else {
		m = p.NextMemory(m, r, float64(elapsedDays(card.LastReview, now)))
	}
	c.Stability, c.Difficulty = m.Stability, m.Difficulty

	var ivl time.Duration
	graduate := false
	switch c.State {
	case StateLearning:
		ivl, graduate = stepInterval(&c, r, s.cfg.LearningSteps)
	case StateRelearning:
		ivl, graduate = stepInterval(&c, r, s.cfg.RelearningSteps)
	case StateReview:
		if r == Again && len(s.cfg.RelearningSteps) > 0 {
			c.State, c.Step = StateRelearning, 0
			ivl = s.cfg.RelearningSteps[0]
		} else {
			graduate = true
		}
	}
	if graduate {
		c.State, c.Step = StateReview, 0
		days := p.NextInterval(c.Stability, s.cfg.DesiredRetention, s.cfg.MaximumInterval)
		if s.cfg.EnableFuzz {
			days = s.fuzz(days, s.fuzzDraw(card, now))
		}
		ivl = time.Duration(days) * day
	}
	c.LastReview = now
	c.Due = now.Add(ivl)
	return Outcome{Rating: r, Card: c, Interval: ivl}
}

// stepInterval moves a Learning or Relearning card through its steps as
// py-fsrs v6 does: Again restarts at the first step; Hard repeats the current
// step (on the first step it waits the mean of the first two steps, or 1.5× a
// single step); Good advances and graduates after the last step; Easy
// graduates at once. A card whose step lies past the end of the steps (the
// steps were shortened) graduates on any successful rating.
func stepInterval(c *Card, r Rating, steps []time.Duration) (time.Duration, bool) {
	if len(steps) == 0 || (c.Step >= len(steps) && r != Again) {
		return 0, true
	}
	switch r {
	case Again:
		c.Step = 0
		return steps[0], false
	case Hard:
		switch {
		case c.Step == 0 && len(steps) == 1:
			return steps[0] * 3 / 2, false
		case c.Step == 0:
			return (steps[0] + steps[1]) / 2, false
		}
		return steps[c.Step], false
	case Good:
		if c.Step+1 == len(steps) {
			return 0, true
		}
		c.Step++
		return steps[c.Step], false
	}
	return 0, true
}

// StepAfter returns the learning or relearning step a card in state at step is
// left at by a review rated r: what Review would store as Card.Step, without the
// memory. It lets a caller that logged each review's state and rating, but not
// the step, replay the steps (undoing a review restores the step before it).
func (s *Scheduler) StepAfter(state State, step int, r Rating) int {
	if s.cfg.LongTermOnly {
		return 0
	}
	c := Card{State: state, Step: step}
	var steps []time.Duration
	switch state {
	case StateNew:
		c.Step, steps = 0, s.cfg.LearningSteps
	case StateLearning:
		steps = s.cfg.LearningSteps
	case StateRelearning:
		steps = s.cfg.RelearningSteps
	case StateReview:
		return 0 // Again enters relearning at its first step; the rest graduate
	}
	if _, graduate := stepInterval(&c, r, steps); graduate {
		return 0
	}
	return c.Step
}

// longTerm is go-fsrs's long-term scheduler: all four outcomes at once, with
// their intervals kept in order.
func (s *Scheduler) longTerm(card Card, now time.Time) [4]Outcome {
	p := s.cfg.Params
	m, hasMemory := card.Memory()
	if card.LastReview.IsZero() {
		hasMemory = false
	}
	elapsed := 0.0
	if hasMemory {
		elapsed = float64(elapsedDays(card.LastReview, now))
	}
	u := s.fuzzDraw(card, now)
	var out [4]Outcome
	var days [4]int
	for i, r := range Ratings {
		next := p.InitialMemory(r)
		if hasMemory {
			next = p.longTermMemory(m, r, elapsed)
		}
		days[i] = p.NextInterval(next.Stability, s.cfg.DesiredRetention, s.cfg.MaximumInterval)
		if s.cfg.EnableFuzz {
			days[i] = s.fuzz(days[i], u)
		}
		out[i] = Outcome{Rating: r, Card: Card{State: StateReview, Stability: next.Stability, Difficulty: next.Difficulty, LastReview: now}}
	}
	days[0] = min(days[0], days[1])
	days[1] = max(days[1], days[0]+1)
	days[2] = max(days[2], days[1]+1)
	days[3] = max(days[3], days[2]+1)
	for i := range out {
		d := min(days[i], s.cfg.MaximumInterval)
		out[i].Interval = time.Duration(d) * day
		out[i].Card.Due = now.Add(out[i].Interval)
	}
	return out
}

// fuzzRange is one band of py-fsrs's FUZZ_RANGES: intervals between start and
// end days widen the fuzz by factor per day.
type fuzzRange struct{ start, end, factor float64 }

var fuzzRanges = [...]fuzzRange{
	{2.5, 7, 0.15},
	{7, 20, 0.1},
	{20, math.Inf(1), 0.05},
}

// fuzz spreads an interval of days over py-fsrs's fuzz range: intervals under
// 2.5 days are left alone; otherwise the interval moves by up to
// delta = 1 + Σ factor·(overlap of [start, end] with the interval), within
// [max(2, days−delta), min(days+delta, maximum)] both rounded. u in [0, 1)
// picks a whole day uniformly in that range (py-fsrs rounds a continuous draw
// instead, which gives the two end days half the weight of the others).
func (s *Scheduler) fuzz(days int, u float64) int {
	if float64(days) < 2.5 {
		return days
	}
	delta := 1.0
	for _, fr := range fuzzRanges {
		delta += fr.factor * max(min(float64(days), fr.end)-fr.start, 0)
	}
	lo := int(math.Round(float64(days) - delta))
	hi := int(math.Round(float64(days) + delta))
	lo = max(2, lo)
	hi = min(hi, s.cfg.MaximumInterval)
	lo = min(lo, hi)
	return min(lo+int(u*float64(hi-lo+1)), hi)
}

// fuzzDraw is a number in [0, 1) fixed by the seed, the card and the review
// time (splitmix64 over those values), so that Preview and Review agree and a
// replay gives the same intervals.
func (s *Scheduler) fuzzDraw(card Card, now time.Time) float64 {
	x := s.cfg.FuzzSeed
	for _, v := range []uint64{
		uint64(now.UnixNano()),
		uint64(card.LastReview.UnixNano()),
		math.Float64bits(card.Stability),
		math.Float64bits(card.Difficulty),
	} {
		x = splitmix64(x ^ v)
	}
	return float64(x>>11) / (1 << 53)
}

func splitmix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}
