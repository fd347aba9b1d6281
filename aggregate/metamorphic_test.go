package aggregate

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// Metamorphic tests: relations every rule and chain must keep on
// every input, checked on families of inputs chosen so that the relation
// holds exactly (inputs on a grid of dyadic values, offsets and scales that
// are powers of two), so a broken relation is a defect, not rounding.
// Choices of the distance-based rules are also cross-checked against
// distances computed directly in float64 (oracle functions below, written
// from the definitions in docs/methods/toolbox.md, not from the rules' code).

// metaNames are ruleNames plus four common chains.
var metaNames = append(slices.Clone(ruleNames), "nnm+multi_krum", "nnm+bulyan", "arc+trimmed_mean", "bucketing+krum")

// metaRule builds name for n inputs tolerating f, or nil when n is too
// small for it.
func metaRule(t *testing.T, name string, n, f int) Rule {
	t.Helper()
	if strings.HasSuffix(name, "bulyan") && n <= 4*f+3 || strings.HasSuffix(name, "krum") && n <= 2*f+2 {
		return nil
	}
	if strings.HasPrefix(name, "bucketing+") && strings.HasSuffix(name, "krum") && (n+1)/2 <= 2*f+2 {
		return nil
	}
	p := Params{F: f}
	if strings.Contains(name, "clip+") {
		p.Clip = 3
	}
	if strings.Contains(name, "bucketing") {
		p.Seed = 42
	}
	if strings.HasPrefix(name, "bucketing+") && strings.HasSuffix(name, "krum") {
		p.F = 1
	}
	r, err := NewWith(name, p)
	if err != nil {
		t.Fatalf("NewWith(%q): %v", name, err)
	}
	return r
}

// gridInputs returns n distinct vectors of length d with coordinates k/16,
// |k| <= 16: translating them by ±2^19 or scaling them by 2^±60 is exact
// in float32.
func gridInputs(r *rand.Rand, n, d int) [][]float32 {
	xs := make([][]float32, n)
	for i := range xs {
		xs[i] = make([]float32, d)
		for j := range xs[i] {
			xs[i][j] = float32(r.IntN(33)-16) / 16
		}
	}
	return xs
}

func mapInputs(xs [][]float32, f func(j int, v float32) float32) [][]float32 {
	out := make([][]float32, len(xs))
	for i, x := range xs {
		out[i] = make([]float32, len(x))
		for j, v := range x {
			out[i][j] = f(j, v)
		}
	}
	return out
}

// exactWeights reports whether the rule's weights are exact functions of
// the order of distances or values (so a metamorphic relation must keep
// them bit for bit). The iterative rules' weights move with rounding, and
// so do those of chains whose pre-aggregator averages (NNM, bucketing):
// the float32 rounding of a mean of translated inputs is not the
// translation of the rounded mean, and near-ties among the means may
// flip.
func exactWeights(name string) bool {
	for _, s := range []string{"geometric_median", "centered_clipping", "nnm", "bucketing"} {
		if strings.Contains(name, s) {
			return false
		}
	}
	return true
}

// preSpread is, per coordinate, the range of the vectors the chain's
// pre-aggregators hand to its rule (0 for a plain rule): how far a flipped
// near-tie among them can move the output.
func preSpread(t *testing.T, r Rule, xs [][]float32) []float64 {
	t.Helper()
	out := make([]float64, len(xs[0]))
	c, ok := r.(*Chain)
	if !ok {
		return out
	}
	ys := xs
	for _, p := range c.Pre {
		var err error
		if ys, err = p.Apply(ys); err != nil {
			t.Fatal(err)
		}
	}
	for j := range out {
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, y := range ys {
			lo, hi = min(lo, float64(y[j])), max(hi, float64(y[j]))
		}
		out[j] = hi - lo
	}
	return out
}

func runW(t *testing.T, r Rule, xs [][]float32) ([]float32, []float64) {
	t.Helper()
	out := run(t, r, xs)
	return out, r.(Selector).Weights()
}

func ulp32(v float64) float64 {
	v = math.Abs(v)
	return float64(math.Nextafter32(float32(v), float32(math.Inf(1))) - float32(v))
}

// Translation by a large offset: results translate and choices (weights)
// do not change. The translated inputs lie within 2^-19 of each other
// relative to their norm (about 1e-6): the late phase of training.
func TestMetamorphicTranslation(t *testing.T) {
	r := rand.New(rand.NewPCG(70, 70))
	const n, f, d = 15, 2, 300
	xs := gridInputs(r, n, d)
	for _, off := range []float64{1 << 10, 1 << 16, 1 << 19} {
		shift := make([]float64, d)
		for j := range shift {
			shift[j] = off * float64(1-2*r.IntN(2))
		}
		moved := mapInputs(xs, func(j int, v float32) float32 { return float32(float64(v) + shift[j]) })
		for _, name := range metaNames {
			if strings.Contains(name, "clip") || strings.Contains(name, "arc") {
				continue // norm-based: not translation-equivariant
			}
			a, wa := runW(t, metaRule(t, name, n, f), xs)
			b, wb := runW(t, metaRule(t, name, n, f), moved)
			if exactWeights(name) && fmt.Sprint(wa) != fmt.Sprint(wb) {
				t.Errorf("offset %g %s: choices changed under translation:\n  weights %v\n  became  %v", off, name, wa, wb)
				continue
			}
			spread := preSpread(t, metaRule(t, name, n, f), xs)
			for j := range a {
				want := float64(a[j]) + shift[j]
				tol := 4*ulp32(off) + spread[j]
				if strings.Contains(name, "geometric_median") || strings.Contains(name, "centered_clipping") {
					tol = 1e-5 * off // iterative: stops at a relative change
				}
				if math.Abs(float64(b[j])-want) > tol {
					t.Errorf("offset %g %s: coordinate %d: A(x+t) = %v, A(x)+t = %v", off, name, j, b[j], want)
					break
				}
			}
		}
	}
}

// Positive scaling by powers of two: results scale, choices do not change.
// The geometric median's smoothing ν = 1e-6 is absolute (spec), so it is
// scaled up only: below, distances under ν make it a plain mean.
func TestMetamorphicScaling(t *testing.T) {
	r := rand.New(rand.NewPCG(71, 71))
	const n, f, d = 15, 2, 300
	xs := gridInputs(r, n, d)
	for _, e := range []int{-60, -20, 20, 60} {
		s := math.Ldexp(1, e)
		scaled := mapInputs(xs, func(_ int, v float32) float32 { return float32(float64(v) * s) })
		for _, name := range metaNames {
			if strings.Contains(name, "clip+") || e < 0 && strings.Contains(name, "geometric_median") {
				continue // a fixed norm bound, or ν, does not scale
			}
			a, wa := runW(t, metaRule(t, name, n, f), xs)
			b, wb := runW(t, metaRule(t, name, n, f), scaled)
			if exactWeights(name) && fmt.Sprint(wa) != fmt.Sprint(wb) {
				t.Errorf("scale 2^%d %s: choices changed under scaling", e, name)
				continue
			}
			for j := range a {
				want := float64(a[j]) * s
				if math.Abs(float64(b[j])-want) > 1e-5*math.Abs(want)+1e-5*s {
					t.Errorf("scale 2^%d %s: coordinate %d: A(sx) = %v, sA(x) = %v", e, name, j, b[j], want)
					break
				}
			}
		}
	}
}

// families are the input sets the choice checks run on: each has n − f
// honest vectors and f crafted ones, the crafted ones lexicographically
// smallest, so that a rule that loses the distances to rounding and falls
// to its tie-break picks them.
func families(r *rand.Rand, n, f, d int) map[string][][]float32 {
	fam := map[string][][]float32{}
	// Near-identical: c + ε_i, ||ε_i|| about 1e-6 ||c||; the crafted ones
	// are 30 times farther out.
	c := make([]float64, d)
	for j := range c {
		c[j] = 1 + r.Float64()
	}
	near := make([][]float32, n)
	for i := range near {
		near[i] = make([]float32, d)
		amp := 2e-6
		if i < f {
			amp = 6e-5
		}
		for j := range near[i] {
			near[i][j] = float32(c[j] * (1 + amp*r.NormFloat64()))
		}
		if i < f {
			near[i][0] = float32(c[0] * (1 - 1e-4))
		}
	}
	fam["near-identical"] = near
	// Huge and tiny coordinates mixed: even coordinates 1000 in every
	// input, odd ones of order 1e-3 (a model whose changing parameters are
	// small next to the fixed ones); the crafted inputs are 30 times
	// farther out on the small coordinates.
	mixed := make([][]float32, n)
	for i := range mixed {
		mixed[i] = make([]float32, d)
		amp := 1e-3
		if i < f {
			amp = 3e-2
		}
		for j := range mixed[i] {
			if j%2 == 0 {
				mixed[i][j] = 1000
			} else {
				mixed[i][j] = float32(amp * r.NormFloat64())
			}
		}
		if i < f {
			mixed[i][1] = -1
		}
	}
	fam["huge-and-tiny"] = mixed
	// A spread set with a duplicated honest input.
	dup := gridInputs(r, n, d)
	dup[n-1] = slices.Clone(dup[f])
	fam["duplicate"] = dup
	return fam
}

// sqDist64 is ||x − y||² computed directly in float64.
func sqDist64(x, y []float32) float64 {
	var s float64
	for k := range x {
		e := float64(x[k]) - float64(y[k])
		s += e * e
	}
	return s
}

// krumScores64 are Krum's scores over set from direct float64 distances.
func krumScores64(xs [][]float32, set []int, f int) map[int]float64 {
	k := max(0, len(set)-f-2)
	sc := map[int]float64{}
	for _, a := range set {
		var r []float64
		for _, b := range set {
			if b != a {
				r = append(r, sqDist64(xs[a], xs[b]))
			}
		}
		slices.Sort(r)
		var s float64
		for _, v := range r[:k] {
			s += v
		}
		sc[a] = s
	}
	return sc
}

// nearlyLE reports a <= b up to the rounding of float64 sums.
func nearlyLE(a, b float64) bool { return a <= b*(1+1e-9)+1e-300 }

// checkSelection checks that the inputs with weight > 0 (the selected ones)
// have float64 scores no larger than the others'.
func checkSelection(t *testing.T, what string, sc map[int]float64, w []float64) {
	t.Helper()
	for i, wi := range w {
		for j, wj := range w {
			if wi > 0 && wj == 0 && !nearlyLE(sc[i], sc[j]) {
				t.Errorf("%s: selected input %d has float64 score %.6g above unselected input %d's %.6g", what, i, sc[i], j, sc[j])
				return
			}
		}
	}
}

// The distance-based rules choose by the distances alone: their choices
// agree with scores from direct float64 distances, on every family,
// including n at the smallest the rule allows (f at its maximum).
func TestMetamorphicChoicesFollowDistances(t *testing.T) {
	r := rand.New(rand.NewPCG(72, 72))
	const d = 512
	for _, sz := range []struct{ n, f int }{{15, 2}, {9, 3}, {12, 2}} {
		n, f := sz.n, sz.f
		for fname, xs := range families(r, n, f, d) {
			all := make([]int, n)
			for i := range all {
				all[i] = i
			}
			what := fmt.Sprintf("%s n=%d f=%d", fname, n, f)
			sc := krumScores64(xs, all, f)
			if n > 2*f+2 {
				k := &Krum{F: f}
				run(t, k, xs)
				checkSelection(t, what+" krum", sc, k.Weights())
				mk := &MultiKrum{F: f}
				run(t, mk, xs)
				checkSelection(t, what+" multi_krum", sc, mk.Weights())
			}
			if n > 4*f+3 {
				b := &Bulyan{F: f}
				run(t, b, xs)
				rest := slices.Clone(all)
				for round, p := range b.picked {
					sc := krumScores64(xs, rest, f)
					for _, q := range rest {
						if !nearlyLE(sc[p], sc[q]) {
							t.Errorf("%s bulyan: round %d picked %d (float64 score %.6g) over %d (%.6g)", what, round, p, sc[p], q, sc[q])
						}
					}
					rest = slices.DeleteFunc(rest, func(i int) bool { return i == p })
				}
			}
			// NNM: each output's neighbors are its n − f nearest inputs.
			m := &NNM{F: f}
			if _, err := m.Apply(xs); err != nil {
				t.Fatal(err)
			}
			kk := n - f
			for i := range n {
				nb := m.nb[i*kk : (i+1)*kk]
				var worstIn float64
				for _, j := range nb {
					worstIn = max(worstIn, sqDist64(xs[i], xs[j]))
				}
				for j := range n {
					if !slices.Contains(nb, j) && !nearlyLE(worstIn, sqDist64(xs[i], xs[j])) {
						t.Errorf("%s nnm: input %d mixes a neighbor at squared distance %.6g but not input %d at %.6g", what, i, worstIn, j, sqDist64(xs[i], xs[j]))
						break
					}
				}
			}
		}
	}
}

// The Gram-matrix distances agree with direct float64 differences to a
// relative 1e-3 on every family, wherever they decide a choice (every
// pair).
func TestGramMatchesDirectDistances(t *testing.T) {
	r := rand.New(rand.NewPCG(73, 73))
	const n, f, d = 12, 2, 700
	for fname, xs := range families(r, n, f, d) {
		var g gram
		g.run(xs, 1)
		for i := range n {
			for j := range n {
				want := sqDist64(xs[i], xs[j])
				if got := g.d2[i*n+j]; math.Abs(got-want) > 1e-3*want {
					t.Errorf("%s: d²(%d, %d) = %.6g from the Gram matrix, %.6g directly", fname, i, j, got, want)
					i = n
					break
				}
			}
		}
	}
}

// Every rule and chain: permuting the inputs does not change the output
// (bit for bit; the mean and bucketing depend on the order by design) on
// each family, and duplicating the input set (every input twice, f twice)
// keeps the coordinate-wise rules' outputs (not MSR's: its reference counts
// once however many inputs there are).
func TestMetamorphicPermutationAndDuplication(t *testing.T) {
	r := rand.New(rand.NewPCG(74, 74))
	const n, f, d = 14, 2, 64
	for fname, xs := range families(r, n, f, d) {
		for _, name := range metaNames {
			if name == "mean" || strings.Contains(name, "bucketing") {
				continue
			}
			want := run(t, metaRule(t, name, n, f), xs)
			if got := run(t, metaRule(t, name, n, f), permuted(xs, r.Perm(n))); !equalBits(got, want) {
				t.Errorf("%s %s: output changed under a permutation", fname, name)
			}
		}
		twice := append(slices.Clone(xs), xs...)
		for _, name := range []string{"mean", "median", "trimmed_mean"} {
			a := run(t, metaRule(t, name, n, f), xs)
			b := run(t, metaRule(t, name, 2*n, 2*f), twice)
			for j := range a {
				if math.Abs(float64(a[j])-float64(b[j])) > 2*ulp32(float64(a[j])) {
					t.Errorf("%s %s: duplicating every input moved coordinate %d from %v to %v", fname, name, j, a[j], b[j])
					break
				}
			}
		}
	}
}
