package aggregate

import (
	"fmt"
	"slices"
)

// Krum is the rule of Blanchard et al. (NeurIPS 2017), "krum" in
// docs/methods/toolbox.md: each input's score is the sum of its squared
// distances to its n − f − 2 nearest other inputs, and the output is the
// input with the lowest score. It needs n > 2f + 2.
//
// The squared distances come from one Gram-matrix product (see gram:
// float32 GEMM in chunks added in float64, clamped at 0; a second product
// around a central input when the inputs are clustered far from the
// origin). Each score sums its distances in ascending order, so it depends
// on the input's neighborhood only; equal scores are broken by the inputs'
// contents (lexicographic) and then by index, so the output is
// bit-identical under any permutation of the inputs. Weights gives the chosen input 1 and every other input 0.
//
// A Krum holds scratch: use it through a pointer, from one goroutine at a
// time.
type Krum struct {
	// F is the number of faulty inputs to tolerate.
	F int
	// Threads is the number of goroutines the distance computation is split
	// across (0 or 1: the caller's only). The output does not depend on it.
	Threads int

	s  screen
	ks krumScratch
}

// Name implements Rule.
func (*Krum) Name() string { return "krum" }

// Aggregate implements Rule.
func (k *Krum) Aggregate(dst []float32, xs [][]float32) error {
	xs, err := k.ks.score(&k.s, "krum", dst, xs, k.F, k.Threads)
	if err != nil {
		return err
	}
	copy(dst, xs[k.ks.order[0]])
	k.s.done()
	return nil
}

// Weights implements Selector.
func (k *Krum) Weights() []float64 {
	if k.s.n == 0 {
		return nil
	}
	w := make([]float64, len(k.ks.order))
	w[k.ks.order[0]] = 1
	return k.s.expand(w)
}

// Dropped implements Dropper.
func (k *Krum) Dropped() int { return k.s.Dropped() }

// MultiKrum averages the M inputs with the lowest Krum scores ("multi-krum"
// in docs/methods/toolbox.md; M = n − f when M is 0). It needs n > 2f + 2 and
// 1 <= M <= n.
//
// Inputs are ranked as by Krum (score, then contents, then index) and the
// selected ones are averaged per coordinate in float64 in rank order, so the
// output is bit-identical under any permutation of the inputs. Weights
// gives each selected input 1/M.
//
// A MultiKrum holds scratch: use it through a pointer, from one goroutine
// at a time.
type MultiKrum struct {
	// F is the number of faulty inputs to tolerate.
	F int
	// M is the number of inputs averaged; 0 means n − F.
	M int
	// Threads is the number of goroutines the work is split across (0 or 1:
	// the caller's only). The output does not depend on it.
	Threads int

	s   screen
	ks  krumScratch
	m   int
	sel [][]float32
	j   meanJob
}

// Name implements Rule.
func (*MultiKrum) Name() string { return "multi_krum" }

// Aggregate implements Rule.
func (mk *MultiKrum) Aggregate(dst []float32, xs [][]float32) error {
	if mk.M < 0 {
		mk.s.fail()
		return fmt.Errorf("multi_krum: m = %d, allowed range [1, n] (0: n − f)", mk.M)
	}
	xs, err := mk.ks.score(&mk.s, "multi_krum", dst, xs, mk.F, mk.Threads)
	if err != nil {
		return err
	}
	n, m := len(xs), mk.M
	if m == 0 {
		m = n - mk.F
	}
	if m > n {
		mk.s.fail()
		return fmt.Errorf("multi_krum: %w: m = %d but only n = %d inputs", ErrTooFewInputs, m, n)
	}
	mk.sel = mk.sel[:0]
	for _, i := range mk.ks.order[:m] {
		mk.sel = append(mk.sel, xs[i])
	}
	mk.j.run(dst, mk.sel, mk.Threads)
	clear(mk.sel)
	mk.m = m
	mk.s.done()
	return nil
}

// Weights implements Selector.
func (mk *MultiKrum) Weights() []float64 {
	if mk.s.n == 0 {
		return nil
	}
	w := make([]float64, len(mk.ks.order))
	for _, i := range mk.ks.order[:mk.m] {
		w[i] = 1 / float64(mk.m)
	}
	return mk.s.expand(w)
}

// Dropped implements Dropper.
func (mk *MultiKrum) Dropped() int { return mk.s.Dropped() }

// krumScratch is the shared part of Krum and MultiKrum: screening, the
// distances, the scores and the ranking.
type krumScratch struct {
	g      gram
	scores []float64
	row    []float64
	order  []int // kept-input indices, best score first
	rk     ranker
}

// score screens xs, checks n > 2f + 2, and ranks the kept inputs by Krum
// score into order. It returns the kept inputs.
func (ks *krumScratch) score(s *screen, rule string, dst []float32, xs [][]float32, f, threads int) ([][]float32, error) {
	if f < 0 {
		s.fail()
		return nil, fmt.Errorf("%s: f = %d, allowed range [0, ∞)", rule, f)
	}
	xs, _, err := s.in(rule, dst, xs, threads)
	if err != nil {
		return nil, err
	}
	n := len(xs)
	if f >= n || n <= 2*f+2 { // f >= n first: 2f+2 could overflow
		s.fail()
		return nil, s.tooFew(rule, n, f, fmt.Sprintf("n > 2f + 2 = %d", 2*f+2))
	}
	ks.g.run(xs, threads)
	ks.order = growInts(ks.order, n)
	for i := range ks.order {
		ks.order[i] = i
	}
	ks.scores = growFloats(ks.scores, n)
	ks.row = growFloats(ks.row, n)
	krumScores(ks.scores, ks.g.d2, n, ks.order, f, ks.row)
	ks.rk.reset(n)
	ks.rk.sort(ks.order, xs, ks.scores)
	return xs, nil
}

// krumScores sets scores[a] for each input a of set: the sum, in ascending
// order, of its max(0, |set| − f − 2) smallest squared distances to the
// other members of set. d2 is the n×n distance matrix; row is scratch of at
// least |set|.
func krumScores(scores, d2 []float64, n int, set []int, f int, row []float64) {
	k := max(0, len(set)-f-2)
	for _, a := range set {
		r := row[:0]
		for _, b := range set {
			if b != a {
				r = append(r, d2[a*n+b])
			}
		}
		slices.Sort(r)
		var s float64
		for _, v := range r[:k] {
			s += v
		}
		scores[a] = s
	}
}

func growInts(s []int, n int) []int {
	if cap(s) < n {
		return make([]int, n)
	}
	return s[:n]
}

func growFloats(s []float64, n int) []float64 {
	if cap(s) < n {
		return make([]float64, n)
	}
	return s[:n]
}
