package data

import (
	"math"
	"math/rand/v2"
)

// partitionDirichlet is the label-skew partition, step by step: for each class c in order, shuffle the
// class's samples, draw p ~ Dir(alpha·1_N) over the N clients, give client i
// floor(p_i·n_c) samples, and hand out the remaining samples one by one to
// clients drawn without replacement; finally, unless empty clients are
// allowed, make every client non-empty by moving single samples from the
// largest client (fillEmpty). One random stream, used in that order.
func partitionDirichlet(pool []int32, labels []int, k, clients int, alpha float64, allowEmpty bool, seed uint64) *Partition {
	r := stream(seed, purposeDirichlet, 0)
	classes := byClass(pool, labels, k)
	counts := make([][]int, k)
	logg := make([]float64, clients)
	order := make([]int, clients)
	for c, idx := range classes {
		shuffle32(r, idx)
		p := dirichletDraw(r, alpha, logg)
		counts[c] = make([]int, clients)
		nc := len(idx)
		given := 0
		for i, pi := range p {
			counts[c][i] = int(math.Floor(pi * float64(nc)))
			given += counts[c][i]
		}
		// Fewer than N samples remain (the floors lose less than 1 each);
		// the first `rem` clients of a random permutation get one more.
		rem := nc - given
		if rem > clients { // unreachable unless rounding misbehaves; keep every sample
			counts[c][0] += rem - clients
			rem = clients
		}
		for i := range order {
			order[i] = i
		}
		for j := 0; j < rem; j++ {
			s := j + r.IntN(clients-j)
			order[j], order[s] = order[s], order[j]
			counts[c][order[j]]++
		}
	}
	if !allowEmpty {
		fillEmpty(counts, clients)
	}
	return fromCounts(classes, counts, clients)
}

// dirichletDraw draws p ~ Dir(alpha, ..., alpha) of len(buf) components as
// normalized Gamma(alpha, 1) variates. It works with log-Gamma draws so that
// a tiny alpha, whose Gamma variates underflow to 0, still yields a proper
// (extremely concentrated) distribution. p overwrites buf.
func dirichletDraw(r *rand.Rand, alpha float64, buf []float64) []float64 {
	m := math.Inf(-1)
	for i := range buf {
		buf[i] = logGammaDraw(r, alpha)
		m = max(m, buf[i])
	}
	var s float64
	for i, g := range buf {
		buf[i] = math.Exp(g - m)
		s += buf[i]
	}
	for i := range buf {
		buf[i] /= s
	}
	return buf
}

// logGammaDraw returns log X for X ~ Gamma(a, 1): Marsaglia and Tsang (2000)
// for a ≥ 1, and for a < 1 the boost Gamma(a) = Gamma(a+1)·U^(1/a).
func logGammaDraw(r *rand.Rand, a float64) float64 {
	if a < 1 {
		u := 1 - r.Float64() // in (0, 1]
		return logGammaDraw(r, a+1) + math.Log(u)/a
	}
	d := a - 1.0/3
	c := 1 / math.Sqrt(9*d)
	for {
		x := r.NormFloat64()
		v := 1 + c*x
		if v <= 0 {
			continue
		}
		v = v * v * v
		u := 1 - r.Float64()
		if u < 1-0.0331*x*x*x*x || math.Log(u) < 0.5*x*x+d*(1-v+math.Log(v)) {
			return math.Log(d * v)
		}
	}
}
