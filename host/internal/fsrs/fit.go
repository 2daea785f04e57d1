package fsrs

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"time"
)

// FitOptions tunes Fit. The zero value uses every default.
type FitOptions struct {
	// Initial are the parameters fitting starts from, regularizes toward and
	// compares against. Default (zero value): DefaultParams().
	Initial Params
	// Epochs is the number of passes over the cards. Default: 5, as in
	// fsrs-rs and py-fsrs.
	Epochs int
	// BatchSize is the number of loss terms (reviews with a prediction) per
	// optimizer step; cards are never split across batches. Default: 512, as
	// in fsrs-rs and py-fsrs.
	BatchSize int
	// LearningRate is Adam's initial step size, annealed to zero along a
	// cosine. Default: 0.04, as in fsrs-rs and py-fsrs.
	LearningRate float64
	// Regularization weighs an L2 penalty on each parameter's distance from
	// Initial, measured in units of that parameter's allowed range
	// (UpperBounds − LowerBounds), added to the mean log loss. It keeps
	// parameters that few reviews inform near Initial. Default (zero value):
	// 0.001; a negative value turns the penalty off.
	Regularization float64
	// MinReviews is the smallest review log worth fitting: with fewer
	// reviews Fit returns Initial unchanged with FitReport.Skipped set, as
	// py-fsrs's optimizer does below 512. Default: 512.
	MinReviews int
	// Seed fixes the shuffling of cards between epochs; a given log, options
	// and seed always give the same parameters. Default: 0.
	Seed uint64
	// Workers is how many goroutines compute gradients. Default:
	// runtime.GOMAXPROCS(0).
	Workers int
}

func (o FitOptions) withDefaults() FitOptions {
	if o.Initial == (Params{}) {
		o.Initial = DefaultParams()
	}
	if o.Epochs <= 0 {
		o.Epochs = 5
	}
	switch {
	case o.Regularization == 0:
		o.Regularization = 0.001
	case o.Regularization < 0:
		o.Regularization = 0
	}
	if o.BatchSize <= 0 {
		o.BatchSize = 512
	}
	if o.LearningRate <= 0 {
		o.LearningRate = 0.04
	}
	if o.MinReviews <= 0 {
		o.MinReviews = 512
	}
	if o.Workers <= 0 {
		o.Workers = runtime.GOMAXPROCS(0)
	}
	return o
}

// Metrics measures how well parameters predict a review log: every review
// after a card's first, at least one whole day after the previous review, is a
// prediction of recall (rating above Again) with probability R.
type Metrics struct {
	// LogLoss is the mean binary cross-entropy of R against the outcome.
	LogLoss float64
	// RMSEBins is the FSRS benchmark's "RMSE (bins)": predictions are grouped
	// by elapsed days, review number and lapse count (each on a logarithmic
	// scale, as fsrs-optimizer bins them), and the count-weighted root mean
	// square of mean outcome minus mean R over the groups is taken.
	RMSEBins float64
	// RMSE is the plain root mean square of outcome minus R over predictions
	// (the square root of the Brier score).
	RMSE float64
	// Predictions is the number of reviews predicted.
	Predictions int
}

// FitReport describes a Fit.
type FitReport struct {
	// Reviews and Cards count the input.
	Reviews, Cards int
	// Default measures FitOptions.Initial (the default parameters unless
	// given) on the log.
	Default Metrics
	// Fitted measures the fitted parameters on the log.
	Fitted Metrics
	// Better is true only when the fitted parameters have a lower log loss
	// than the initial ones: apply fitted parameters only then.
	Better bool
	// Skipped is true when the log was too short to fit (see
	// FitOptions.MinReviews) and Initial was returned unchanged.
	Skipped bool
	// Steps is the number of optimizer steps taken.
	Steps int
	// Elapsed is the wall-clock time Fit took.
	Elapsed time.Duration
}

// step is one review of a card as the model sees it.
type step struct {
	rating Rating
	// days since the previous review of the card, whole days (0 for the first).
	days float64
	// lapses counts earlier Again ratings at least a day after their
	// predecessor (fsrs-optimizer's lapse count for RMSE bins).
	lapses int
	// predict is true when the review contributes to the loss: not the first
	// review, and at least one day after the previous one.
	predict bool
}

type sequence struct {
	steps []step
	terms int
}

// buildSequences groups reviews by card in time order, as fsrs-rs and py-fsrs
// build their training items: a card's first review sets its initial memory;
// every later review at least a day after the previous one is a prediction of
// recall; same-day reviews update the memory through the short-term formula
// without being predicted. Elapsed time counts whole days (the floor), as
// py-fsrs does.
func buildSequences(reviews []Review) ([]sequence, error) {
	byCard := map[string][]Review{}
	var order []string
	for i, r := range reviews {
		if !r.Rating.Valid() {
			return nil, fmt.Errorf("fsrs: review %d of card %q: %w", i, r.CardID, ErrRating)
		}
		if _, ok := byCard[r.CardID]; !ok {
			order = append(order, r.CardID)
		}
		byCard[r.CardID] = append(byCard[r.CardID], r)
	}
	seqs := make([]sequence, 0, len(order))
	for _, id := range order {
		rs := byCard[id]
		slices.SortStableFunc(rs, func(a, b Review) int { return a.Time.Compare(b.Time) })
		seq := sequence{steps: make([]step, len(rs))}
		lapses := 0
		for i, r := range rs {
			st := step{rating: r.Rating, lapses: lapses}
			if i > 0 {
				st.days = float64(elapsedDays(rs[i-1].Time, r.Time))
				st.predict = st.days >= 1
			}
			if st.predict {
				seq.terms++
				if r.Rating == Again {
					lapses++
				}
			}
			seq.steps[i] = st
		}
		seqs = append(seqs, seq)
	}
	return seqs, nil
}

// predictionFloor keeps R away from 0 and 1 in the log loss, as fsrs-optimizer
// clamps it.
const predictionFloor = 1e-4

func logLoss(rr float64, recalled bool) float64 {
	rr = min(max(rr, predictionFloor), 1-predictionFloor)
	if recalled {
		return -math.Log(rr)
	}
	return -math.Log(1 - rr)
}

type binKey struct {
	days, index, lapses float64
}

func logBin(x, base, scale float64, digits int) float64 {
	v := scale * math.Pow(base, math.Floor(math.Log(x)/math.Log(base)))
	p := math.Pow(10, float64(digits))
	return math.Round(v*p) / p
}

// evaluate measures p on the sequences.
func evaluate(p Params, seqs []sequence) Metrics {
	type bin struct{ y, r, n float64 }
	index := map[binKey]int{} // into bins, so sums run in a fixed order
	var bins []bin
	var loss, sq float64
	n := 0
	for _, seq := range seqs {
		var m Memory
		for i, st := range seq.steps {
			if i == 0 {
				m = p.InitialMemory(st.rating)
				continue
			}
			if st.predict {
				rr := p.Retrievability(st.days, m.Stability)
				y := 0.0
				if st.rating > Again {
					y = 1
				}
				loss += logLoss(rr, y == 1)
				sq += (y - rr) * (y - rr)
				n++
				k := binKey{days: logBin(st.days, 3.62, 2.48, 2), index: logBin(float64(i+1), 1.89, 1.99, 0)}
				if st.lapses > 0 {
					k.lapses = logBin(float64(st.lapses), 1.73, 1.65, 0)
				}
				j, ok := index[k]
				if !ok {
					j = len(bins)
					index[k] = j
					bins = append(bins, bin{})
				}
				b := &bins[j]
				b.y += y
				b.r += rr
				b.n++
			}
			m = p.NextMemory(m, st.rating, st.days)
		}
	}
	if n == 0 {
		return Metrics{}
	}
	var binSq float64
	for _, b := range bins {
		d := b.y/b.n - b.r/b.n
		binSq += b.n * d * d
	}
	return Metrics{
		LogLoss:     loss / float64(n),
		RMSEBins:    math.Sqrt(binSq / float64(n)),
		RMSE:        math.Sqrt(sq / float64(n)),
		Predictions: n,
	}
}

// Evaluate measures how well p predicts the review log, building predictions
// as Fit does.
func Evaluate(reviews []Review, p Params) (Metrics, error) {
	seqs, err := buildSequences(reviews)
	if err != nil {
		return Metrics{}, err
	}
	return evaluate(p, seqs), nil
}

// gradient adds to g the gradient of the summed log loss over seqs and
// returns the summed loss.
func gradient(p Params, seqs []sequence, g *[NumParams]float64) float64 {
	model := newDualModel(p)
	var total float64
	for _, seq := range seqs {
		if seq.terms == 0 {
			continue
		}
		var m dualMemory
		for i, st := range seq.steps {
			if i == 0 {
				m = model.initial(st.rating)
				continue
			}
			if st.predict {
				rr := model.retrievability(st.days, m.s)
				var l dual
				switch {
				case rr.v < predictionFloor:
					l = constant(predictionFloor)
				case rr.v > 1-predictionFloor:
					l = constant(1 - predictionFloor)
				default:
					l = rr
				}
				if st.rating == Again {
					l = l.scale(-1).addConst(1)
				}
				l = l.log()
				total -= l.v
				for j := range g {
					g[j] -= l.g[j]
				}
			}
			m = model.next(m, st.rating, st.days)
		}
	}
	return total
}

// Fit fits the 21 FSRS-6 parameters to a review log.
//
// Method (after fsrs-rs and py-fsrs's optimizer): reviews are grouped by card
// into sequences (see Evaluate for which reviews are predicted); the loss is
// the mean binary cross-entropy between the predicted retrievability and
// recall, plus the L2 penalty toward Initial; Adam (β1 0.9, β2 0.999)
// minimizes it over mini-batches of whole cards, shuffled each epoch, with a
// learning rate annealed along a cosine, and after every step the parameters
// are clamped to [LowerBounds, UpperBounds] as fsrs-rs's parameter clipper
// does. The gradient
// is exact, by forward-mode automatic differentiation through each card's
// sequence. Parameters no review informs (for example the Easy bonus when no
// review is rated Easy) keep their initial values.
//
// The fitted parameters are returned even when they are no better; apply them
// only when FitReport.Better is true. With fewer than FitOptions.MinReviews
// reviews Fit returns the initial parameters with FitReport.Skipped set. Fit
// fails on an invalid rating or initial parameters outside the bounds.
func Fit(reviews []Review, opts FitOptions) (Params, FitReport, error) {
	start := time.Now()
	opts = opts.withDefaults()
	if err := opts.Initial.Validate(); err != nil {
		return opts.Initial, FitReport{}, fmt.Errorf("fsrs: fit: initial parameters: %w", err)
	}
	seqs, err := buildSequences(reviews)
	if err != nil {
		return opts.Initial, FitReport{}, err
	}
	rep := FitReport{Reviews: len(reviews), Cards: len(seqs)}
	rep.Default = evaluate(opts.Initial, seqs)
	if len(reviews) < opts.MinReviews || rep.Default.Predictions == 0 {
		rep.Fitted, rep.Skipped = rep.Default, true
		rep.Elapsed = time.Since(start)
		return opts.Initial, rep, nil
	}

	batches := func(rng *rand.Rand) [][]sequence {
		idx := rng.Perm(len(seqs))
		var out [][]sequence
		var cur []sequence
		terms := 0
		for _, i := range idx {
			if seqs[i].terms == 0 {
				continue
			}
			cur = append(cur, seqs[i])
			terms += seqs[i].terms
			if terms >= opts.BatchSize {
				out = append(out, cur)
				cur, terms = nil, 0
			}
		}
		if len(cur) > 0 {
			out = append(out, cur)
		}
		return out
	}
	rng := rand.New(rand.NewPCG(opts.Seed, 0x6673727336))
	plan := make([][][]sequence, opts.Epochs)
	totalSteps := 0
	for e := range plan {
		plan[e] = batches(rng)
		totalSteps += len(plan[e])
	}

	lo, hi := LowerBounds(), UpperBounds()
	p := opts.Initial
	var m1, m2 [NumParams]float64
	const beta1, beta2, eps = 0.9, 0.999, 1e-8
	stepN := 0
	for _, epoch := range plan {
		for _, batch := range epoch {
			g, terms := parallelGradient(p, batch, opts.Workers)
			for j := range g {
				g[j] /= float64(terms)
				if opts.Regularization > 0 {
					span := hi[j] - lo[j]
					g[j] += 2 * opts.Regularization * (p[j] - opts.Initial[j]) / (span * span)
				}
			}
			lr := opts.LearningRate * 0.5 * (1 + math.Cos(math.Pi*float64(stepN)/float64(totalSteps)))
			stepN++
			c1 := 1 - math.Pow(beta1, float64(stepN))
			c2 := 1 - math.Pow(beta2, float64(stepN))
			for j := range p {
				m1[j] = beta1*m1[j] + (1-beta1)*g[j]
				m2[j] = beta2*m2[j] + (1-beta2)*g[j]*g[j]
				p[j] -= lr * (m1[j] / c1) / (math.Sqrt(m2[j]/c2) + eps)
			}
			p = p.Clamp()
		}
	}
	rep.Steps = stepN
	rep.Fitted = evaluate(p, seqs)
	rep.Better = rep.Fitted.LogLoss < rep.Default.LogLoss
	rep.Elapsed = time.Since(start)
	return p, rep, nil
}

// parallelGradient splits a batch's cards over workers and sums their
// gradients; it returns the summed gradient and the number of loss terms.
func parallelGradient(p Params, batch []sequence, workers int) ([NumParams]float64, int) {
	terms := 0
	for _, s := range batch {
		terms += s.terms
	}
	workers = max(1, min(workers, len(batch)))
	parts := make([][NumParams]float64, workers)
	var wg sync.WaitGroup
	for w := range workers {
		lo, hi := w*len(batch)/workers, (w+1)*len(batch)/workers
		wg.Go(func() { gradient(p, batch[lo:hi], &parts[w]) })
	}
	wg.Wait()
	var g [NumParams]float64
	for _, part := range parts {
		for j := range g {
			g[j] += part[j]
		}
	}
	return g, terms
}
