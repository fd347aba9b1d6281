package aggregate

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// Every rule except the mean (which sums in input order) and bucketing
// (whose seeded permutation applies to the input order, by design) is
// bit-identical under any permutation of its inputs, including ties,
// duplicate inputs, signed zeros and magnitudes from 1e-30 to 1e6.
func TestPermutationInvariance(t *testing.T) {
	r := rand.New(rand.NewPCG(10, 10))
	for _, n := range []int{1, 2, 3, 4, 10, 31} {
		xs := wideInputs(r, n, 700)
		if n >= 10 {
			xs[n-1] = xs[0] // a duplicate input
		}
		for i, rule := range newRules(t, n, (n-1)/4, 1) {
			if rule.Name() == "mean" || strings.Contains(rule.Name(), "bucketing") {
				continue
			}
			want := run(t, rule, xs)
			for range 3 {
				again := newRules(t, n, (n-1)/4, 1)[i]
				if got := run(t, again, permuted(xs, r.Perm(n))); !equalBits(got, want) {
					t.Fatalf("n=%d %s: output changed under a permutation of the inputs", n, rule.Name())
				}
			}
		}
	}
	// The pre-aggregators' outputs are permuted with their inputs.
	xs := wideInputs(r, 12, 500)
	perm := r.Perm(12)
	for _, mk := range []func() Pre{
		func() Pre { return &NNM{F: 3} }, func() Pre { return &AdaptiveClip{F: 3} }, func() Pre { return &Clip{C: 2} },
	} {
		a, err := mk().Apply(xs)
		if err != nil {
			t.Fatal(err)
		}
		b, err := mk().Apply(permuted(xs, perm))
		if err != nil {
			t.Fatal(err)
		}
		for k, p := range perm {
			if !equalBits(a[p], b[k]) {
				t.Fatalf("%s: output %d changed under a permutation", mk().Name(), p)
			}
		}
	}
}

// Outputs are bit-identical for every thread count, with enough
// coordinates for several groups.
func TestThreadInvariance(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 21))
	const n, d = 13, 3*minGroup + 77
	xs := wideInputs(r, n, d)
	for i, one := range newRules(t, n, 2, 1) {
		want := run(t, one, xs)
		wantW := one.(Selector).Weights()
		for _, threads := range []int{2, 3, 8} {
			rule := newRules(t, n, 2, threads)[i]
			if got := run(t, rule, xs); !equalBits(got, want) {
				t.Fatalf("%s: output with %d threads differs from 1 thread", rule.Name(), threads)
			}
			if w := rule.(Selector).Weights(); fmt.Sprint(w) != fmt.Sprint(wantW) {
				t.Errorf("%s: weights with %d threads differ", rule.Name(), threads)
			}
		}
	}
}

// Rules that commute with translations: A(x_i + t) = A(x_i) + t, up to
// float32 rounding of the shifted inputs. Clipping (norm-based) does not
// commute and is left out.
func TestTranslationEquivariance(t *testing.T) {
	r := rand.New(rand.NewPCG(22, 22))
	const n, f, d = 17, 3, 40
	xs := make([][]float32, n)
	for i := range xs {
		xs[i] = make([]float32, d)
		for j := range xs[i] {
			xs[i][j] = float32(r.NormFloat64())
		}
	}
	shift := make([]float32, d)
	for j := range shift {
		shift[j] = float32(4 * r.NormFloat64())
	}
	moved := make([][]float32, n)
	for i, x := range xs {
		moved[i] = make([]float32, d)
		for j, v := range x {
			moved[i][j] = v + shift[j]
		}
	}
	for i, rule := range newRules(t, n, f, 1) {
		if strings.Contains(rule.Name(), "clip") || strings.Contains(rule.Name(), "arc") {
			continue
		}
		a := run(t, rule, xs)
		b := run(t, newRules(t, n, f, 1)[i], moved)
		for j := range a {
			want := float64(a[j]) + float64(shift[j])
			// The shifted inputs were rounded once (half an ulp of |x|+|t|)
			// and iterative rules stop at a relative change of 1e-6.
			tol := 1e-5 * (1 + math.Abs(float64(shift[j])))
			if strings.Contains(rule.Name(), "geometric_median") {
				tol = 1e-4 * (1 + math.Abs(float64(shift[j])))
			}
			if math.Abs(float64(b[j])-want) > tol {
				t.Fatalf("%s: coordinate %d: A(x+t) = %v, A(x)+t = %v", rule.Name(), j, b[j], want)
			}
		}
	}
	// Centered rules move with their own vector.
	for _, mk := range []func() Centered{func() Centered { return &CenteredClipping{Tau: 1.5} }, func() Centered { return &MSR{F: 2} },
		func() Centered { return &IOS{F: 2} }, func() Centered { return &RTC{F: 2} }} {
		a, b := make([]float32, d), make([]float32, d)
		if err := mk().AggregateAround(a, xs[0], xs[1:]); err != nil {
			t.Fatal(err)
		}
		if err := mk().AggregateAround(b, moved[0], moved[1:]); err != nil {
			t.Fatal(err)
		}
		for j := range a {
			if want := float64(a[j]) + float64(shift[j]); math.Abs(float64(b[j])-want) > 1e-5*(1+math.Abs(float64(shift[j]))) {
				t.Fatalf("%s around: coordinate %d: %v, want %v", mk().Name(), j, b[j], want)
			}
		}
	}
}

// unitBall returns n points uniform in the unit ball of R^d.
func unitBall(r *rand.Rand, n, d int) [][]float32 {
	xs := make([][]float32, n)
	for i := range xs {
		x := make([]float64, d)
		var s float64
		for j := range x {
			x[j] = r.NormFloat64()
			s += x[j] * x[j]
		}
		rad := math.Pow(r.Float64(), 1/float64(d)) / math.Sqrt(s)
		xs[i] = make([]float32, d)
		for j := range x {
			xs[i][j] = float32(x[j] * rad * 0.999999)
		}
	}
	return xs
}

// With f inputs at 1e6 magnitude and the other n − f in the unit ball, the
// robust rules stay within a stated distance of the honest mean; the mean
// does not. Bounds, with ȳ the honest mean (in the
// unit ball, so every honest point is within 2 of it):
//
//   - median, trimmed mean (f), Bulyan, MSR (median reference): every
//     coordinate lies within the honest values' range of that coordinate
//     (checked exactly), hence ||A − ȳ|| <= 2√d.
//   - Krum: the output is one of the honest inputs (checked), hence <= 2.
//   - Multi-Krum (m = n − f): it selects exactly the honest inputs, so the
//     output is ȳ up to float32 rounding: <= 1e-5.
//   - geometric median: at most a fraction α = f/n < 1/2 of the points lie
//     farther than r = 2 from ȳ, so ||A − ȳ|| <= C_α·r with C_α = (1 −
//     α)/√(1 − 2α) (Minsker 2015, Lemma 2.1).
//   - centered clipping, τ = 1, M = 3: each iteration moves v toward a
//     weighted mean of the honest points (within 2 of ȳ) by the honest
//     share and lets the f others move it by at most f·τ/n, so ||v_M − ȳ||
//     <= max(||v_0 − ȳ||, 2) + M·f·τ/n; from the median (v_0 measured in
//     the test) and around an honest own vector (||v_0 − ȳ|| <= 2).
func TestByzantineOutliers(t *testing.T) {
	const n, f, d = 20, 4, 10
	r := rand.New(rand.NewPCG(11, 11))
	for trial, shape := range []string{"same", "spread", "huge"} {
		xs := unitBall(r, n, d)
		honest := xs[:n-f]
		for i := n - f; i < n; i++ {
			for j := range xs[i] {
				switch shape {
				case "same":
					xs[i][j] = 1e6
				case "spread":
					xs[i][j] = float32(1e6 * float64(1-2*r.IntN(2)))
				case "huge":
					xs[i][j] = float32(1e6 * r.NormFloat64())
				}
			}
		}
		// Byzantine inputs first: positions must not matter.
		xs = append(xs[n-f:], xs[:n-f]...)
		ybar := run(t, &Mean{}, honest)
		dist := func(v []float32) float64 {
			var s float64
			for j := range v {
				e := float64(v[j]) - float64(ybar[j])
				s += e * e
			}
			return math.Sqrt(s)
		}
		inRange := func(name string, v []float32) {
			for j := range v {
				lo, hi := float32(math.Inf(1)), float32(math.Inf(-1))
				for _, x := range honest {
					lo, hi = min(lo, x[j]), max(hi, x[j])
				}
				if v[j] < lo || v[j] > hi {
					t.Errorf("%s %s: coordinate %d = %v outside the honest range [%v, %v]", shape, name, j, v[j], lo, hi)
				}
			}
		}
		alpha := float64(f) / n
		check := func(name string, v []float32, bound float64) {
			t.Helper()
			if e := dist(v); e > bound {
				t.Errorf("%s %s: ||A − ȳ|| = %.3g above its bound %.3g", shape, name, e, bound)
			} else {
				t.Logf("%s %-20s ||A − ȳ|| = %.3g (bound %.3g)", shape, name, e, bound)
			}
		}
		rootD := 2 * math.Sqrt(d)
		for _, rule := range []Rule{&Median{}, &TrimmedMean{F: f}, &Bulyan{F: f}, &MSR{F: f}} {
			v := run(t, rule, xs)
			inRange(rule.Name(), v)
			check(rule.Name(), v, rootD)
		}
		kv := run(t, &Krum{F: f}, xs)
		found := false
		for _, x := range honest {
			found = found || equalBits(x, kv)
		}
		if !found {
			t.Errorf("%s krum: output is not an honest input", shape)
		}
		check("krum", kv, 2)
		check("multi_krum", run(t, &MultiKrum{F: f}, xs), 1e-5)
		check("geometric_median", run(t, &GeometricMedian{}, xs), 2*(1-alpha)/math.Sqrt(1-2*alpha))
		const tau, m = 1.0, 3
		v0 := dist(run(t, &Median{}, xs))
		check("centered_clipping", run(t, &CenteredClipping{Tau: tau}, xs), max(v0, 2)+m*f*tau/n)
		own := honest[trial]
		around := make([]float32, d)
		if err := (&CenteredClipping{Tau: tau}).AggregateAround(around, own, xs); err != nil {
			t.Fatal(err)
		}
		check("centered_clipping/own", around, 2+m*f*tau/n)
		if e := dist(run(t, &Mean{}, xs)); e < 1e4 {
			t.Errorf("%s mean: ||A − ȳ|| = %.3g, expected the outliers to carry it away", shape, e)
		}
	}
}
