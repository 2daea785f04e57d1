package fsrs

import "math"

// dual is a number carrying its gradient with respect to the 21 parameters
// (forward-mode automatic differentiation). Fitting runs the FSRS-6 model on
// duals so that one pass over a card's reviews yields the loss and its exact
// gradient.
type dual struct {
	v float64
	g [NumParams]float64
}

func constant(v float64) dual { return dual{v: v} }

func paramDual(p Params, i int) dual {
	d := dual{v: p[i]}
	d.g[i] = 1
	return d
}

func (a dual) add(b dual) dual {
	a.v += b.v
	for i := range a.g {
		a.g[i] += b.g[i]
	}
	return a
}

func (a dual) sub(b dual) dual {
	a.v -= b.v
	for i := range a.g {
		a.g[i] -= b.g[i]
	}
	return a
}

func (a dual) addConst(c float64) dual {
	a.v += c
	return a
}

func (a dual) scale(c float64) dual {
	a.v *= c
	for i := range a.g {
		a.g[i] *= c
	}
	return a
}

func (a dual) mul(b dual) dual {
	out := dual{v: a.v * b.v}
	for i := range out.g {
		out.g[i] = a.g[i]*b.v + a.v*b.g[i]
	}
	return out
}

func (a dual) div(b dual) dual {
	out := dual{v: a.v / b.v}
	inv := 1 / (b.v * b.v)
	for i := range out.g {
		out.g[i] = (a.g[i]*b.v - a.v*b.g[i]) * inv
	}
	return out
}

// chain applies a scalar function with value f and derivative df at a.v.
func (a dual) chain(f, df float64) dual {
	a.v = f
	for i := range a.g {
		a.g[i] *= df
	}
	return a
}

func (a dual) exp() dual {
	e := math.Exp(a.v)
	return a.chain(e, e)
}

func (a dual) log() dual { return a.chain(math.Log(a.v), 1/a.v) }

// pow is a^b for a positive base.
func (a dual) pow(b dual) dual { return a.log().mul(b).exp() }

// clamp keeps a within [lo, hi]; outside, the gradient is zero as in the
// reference trainers' clamps.
func (a dual) clamp(lo, hi float64) dual {
	switch {
	case a.v < lo:
		return constant(lo)
	case a.v > hi:
		return constant(hi)
	}
	return a
}

func minDual(a, b dual) dual {
	if b.v < a.v {
		return b
	}
	return a
}

// dualModel is the FSRS-6 model of params.go over duals; TestDualModel checks
// that both give the same values and that the gradient matches finite
// differences.
type dualModel struct {
	w [NumParams]dual
}

func newDualModel(p Params) *dualModel {
	m := &dualModel{}
	for i := range m.w {
		m.w[i] = paramDual(p, i)
	}
	return m
}

type dualMemory struct{ s, d dual }

func (m *dualModel) rawInitialDifficulty(r Rating) dual {
	return m.w[4].sub(m.w[5].scale(float64(r - 1)).exp()).addConst(1)
}

func (m *dualModel) initial(r Rating) dualMemory {
	return dualMemory{
		s: m.w[r-1].clamp(MinStability, MaxStability),
		d: m.rawInitialDifficulty(r).clamp(MinDifficulty, MaxDifficulty),
	}
}

// retrievability is (1 + factor·t/S)^(−w20), factor = 0.9^(−1/w20) − 1.
func (m *dualModel) retrievability(t float64, s dual) dual {
	w20 := m.w[20]
	factor := constant(-math.Log(0.9)).div(w20).exp().addConst(-1)
	base := factor.scale(t).div(s).addConst(1)
	return base.log().mul(w20).scale(-1).exp()
}

func (m *dualModel) next(mem dualMemory, r Rating, t float64) dualMemory {
	w := &m.w
	var s dual
	switch {
	case t < 1:
		inc := w[17].mul(w[18].addConst(float64(r) - 3)).exp().mul(mem.s.pow(w[19].scale(-1)))
		if r >= Hard && inc.v < 1 {
			inc = constant(1)
		}
		s = mem.s.mul(inc)
	case r == Again:
		rr := m.retrievability(t, mem.s)
		long := w[11].mul(mem.d.pow(w[12].scale(-1))).
			mul(mem.s.addConst(1).pow(w[13]).addConst(-1)).
			mul(w[14].mul(rr.scale(-1).addConst(1)).exp())
		short := mem.s.div(w[17].mul(w[18]).exp())
		s = minDual(long, short)
	default:
		rr := m.retrievability(t, mem.s)
		inc := w[8].exp().mul(mem.d.scale(-1).addConst(11)).
			mul(mem.s.pow(w[9].scale(-1))).
			mul(w[10].mul(rr.scale(-1).addConst(1)).exp().addConst(-1))
		switch r {
		case Hard:
			inc = inc.mul(w[15])
		case Easy:
			inc = inc.mul(w[16])
		}
		s = mem.s.mul(inc.addConst(1))
	}
	delta := -float64(r - 3)
	damped := mem.d.add(mem.d.scale(-1).addConst(10).mul(w[6].scale(delta / 9)))
	d := w[7].mul(m.rawInitialDifficulty(Easy)).add(w[7].scale(-1).addConst(1).mul(damped))
	return dualMemory{s: s.clamp(MinStability, MaxStability), d: d.clamp(MinDifficulty, MaxDifficulty)}
}
