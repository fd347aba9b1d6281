package attack

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
)

// honestSet returns k honest-looking payloads of length d around a common
// center.
func honestSet(seed uint64, k, d int, spread float64) [][]float32 {
	r := stream(seed)
	c := make([]float64, d)
	for j := range c {
		c[j] = r.NormFloat64()
	}
	g := make([][]float32, k)
	for i := range g {
		g[i] = make([]float32, d)
		for j := range g[i] {
			g[i][j] = float32(c[j] + spread*r.NormFloat64())
		}
	}
	return g
}

// meanStd returns μ and the population (or sample) standard deviation of
// g per coordinate, computed naively.
func meanStd(g [][]float32, sample bool) (mu, sd []float64) {
	d := len(g[0])
	mu, sd = make([]float64, d), make([]float64, d)
	for j := range d {
		for _, x := range g {
			mu[j] += float64(x[j])
		}
		mu[j] /= float64(len(g))
		for _, x := range g {
			e := float64(x[j]) - mu[j]
			sd[j] += e * e
		}
		den := float64(len(g))
		if sample {
			den--
		}
		sd[j] = math.Sqrt(sd[j] / den)
	}
	return mu, sd
}

func craft(t *testing.T, a Attack, v *View, honest []float32, rng *rand.Rand) []float32 {
	t.Helper()
	dst := make([]float32, len(honest))
	if err := a.Craft(dst, v, honest, 0, 1, rng); err != nil {
		t.Fatalf("%s: %v", a.Name(), err)
	}
	return dst
}

func TestNewParams(t *testing.T) {
	cases := []struct {
		name string
		p    Params
		want Attack
	}{
		{"ana_proportional", Params{Percent: 5}, AnaProportional{Percent: 5}},
		{"alie", Params{}, ALIE{}},
		{"alie", Params{Z: 1.5, Minus: true}, ALIE{Z: 1.5, Minus: true}},
		{"ipm", Params{Epsilon: 3}, IPM{Epsilon: 3}},
		{"min_max", Params{Perturbation: "std", GammaInit: 4}, MinMax{Perturbation: Std, GammaInit: 4}},
		{"min_sum", Params{Perturbation: "sign"}, MinSum{Perturbation: Sign}},
		{"fang_trim", Params{B: 3}, FangTrim{B: 3}},
		{"label_flip", Params{}, LabelFlip{}},
	}
	for _, c := range cases {
		a, err := New(c.name, c.p)
		if err != nil {
			t.Fatalf("New(%s, %+v): %v", c.name, c.p, err)
		}
		if a != c.want {
			t.Errorf("New(%s, %+v) = %#v, want %#v", c.name, c.p, a, c.want)
		}
	}
	if (IPM{}).eps() != 0.1 || (FangTrim{}).b() != 2 {
		t.Error("wrong defaults of ipm's ε or fang_trim's b")
	}
	bad := []struct {
		name string
		p    Params
		want []string
	}{
		{"ana_proportional", Params{}, []string{"percent", "= 0", "(0, 1e+30]"}},
		{"ana_proportional", Params{Percent: math.NaN()}, []string{"percent", "NaN"}},
		{"alie", Params{Z: math.Inf(-1)}, []string{"z", "-Inf", "[-1e+30, 1e+30]"}},
		{"ipm", Params{Epsilon: -1}, []string{"epsilon", "= -1", "(0, 1e+30]"}},
		{"min_max", Params{Perturbation: "unit"}, []string{"perturbation", `"unit"`, `"unit_vec", "std", "sign"`}},
		{"min_sum", Params{GammaInit: -3}, []string{"gamma_init", "= -3", "(0, 1e+30]"}},
		{"min_max", Params{GammaInit: math.NaN()}, []string{"gamma_init", "NaN"}},
		{"fang_trim", Params{B: 1}, []string{"b = 1", "(1, 1e+30]"}},
		{"fang_trim", Params{B: 0.5}, []string{"b = 0.5", "(1, 1e+30]"}},
	}
	for _, c := range bad {
		_, err := New(c.name, c.p)
		if err == nil {
			t.Errorf("New(%s, %+v) accepted", c.name, c.p)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("New(%s, %+v): error %q does not say %q", c.name, c.p, err, w)
			}
		}
	}
}

// ana_proportional against its definition b + ε ⊙ b · s/100, with the
// same draws.
func TestAnaProportional(t *testing.T) {
	b := honestVector(1000)
	got := craft(t, AnaProportional{Percent: 20}, nil, b, stream(5))
	r := stream(5)
	for j, x := range b {
		want := float32(float64(x) + r.NormFloat64()*float64(x)*0.2)
		if got[j] != want {
			t.Fatalf("coordinate %d: %v, want %v", j, got[j], want)
		}
	}
	// The noise is relative: a zero coordinate stays zero.
	z := craft(t, AnaProportional{Percent: 1e6}, nil, make([]float32, 10), stream(1))
	if slices.ContainsFunc(z, func(x float32) bool { return x != 0 }) {
		t.Errorf("zero vector became %v", z)
	}
}

// The hand-checkable view of the omniscient tests: G = {(1, 2, −1),
// (3, 2, −1), (5, 8, −4)}: μ = (3, 4, −2), population σ = (√(8/3), √8, √2),
// sample σ = (2, √12, √3), per-coordinate min (1, 2, −4), max (5, 8, −1).
func handView() *View {
	return &View{Honest: [][]float32{{1, 2, -1}, {3, 2, -1}, {5, 8, -4}}}
}

func TestALIEFixedZ(t *testing.T) {
	b := []float32{100, 100, 100} // ignored
	sd := []float64{math.Sqrt(8.0 / 3), math.Sqrt(8), math.Sqrt(2)}
	mu := []float64{3, 4, -2}
	for _, minus := range []bool{false, true} {
		got := craft(t, ALIE{Z: 1.5, Minus: minus}, handView(), b, nil)
		for j := range mu {
			want := float32(mu[j] + 1.5*sd[j])
			if minus {
				want = float32(mu[j] - 1.5*sd[j])
			}
			if got[j] != want {
				t.Errorf("minus=%v coordinate %d: %v, want %v", minus, j, got[j], want)
			}
		}
	}
}

// phiInv is Φ^{-1}(q) by bisection on Φ(z) = (1 + erf(z/√2))/2,
// independent of ZMax's math.Erfinv.
func phiInv(q float64) float64 {
	lo, hi := -40.0, 40.0
	for range 200 {
		mid := (lo + hi) / 2
		if (1+math.Erf(mid/math.Sqrt2))/2 < q {
			lo = mid
		} else {
			hi = mid
		}
	}
	return (lo + hi) / 2
}

// z_max against the formula of the spec, for several (n, m), and inside a
// crafted vector.
func TestALIEZMax(t *testing.T) {
	for _, c := range []struct{ n, m int }{
		{3, 1}, {4, 1}, {4, 2}, {10, 2}, {10, 3}, {10, 5}, {11, 5}, {20, 4}, {50, 10}, {50, 24}, {100, 20}, {100, 50}, {101, 50},
	} {
		s := int(math.Floor(float64(c.n)/2+1)) - c.m
		want := phiInv(float64(c.n-c.m-s) / float64(c.n-c.m))
		got, err := ZMax(c.n, c.m)
		if err != nil {
			t.Fatalf("ZMax(%d, %d): %v", c.n, c.m, err)
		}
		if math.Abs(got-want) > 1e-9*max(1, math.Abs(want)) {
			t.Errorf("ZMax(%d, %d) = %v, want %v", c.n, c.m, got, want)
		}
	}
	// Worked value: n = 50, m = 10: s = 16, Φ^{-1}(24/40) = 0.2533471031...
	if z, _ := ZMax(50, 10); math.Abs(z-0.2533471031357997) > 1e-12 {
		t.Errorf("ZMax(50, 10) = %v, want 0.2533471031", z)
	}
	for _, c := range []struct{ n, m int }{{2, 1}, {10, 0}, {10, 6}, {10, 10}, {11, 6}, {5, -1}} {
		if z, err := ZMax(c.n, c.m); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("n = %d, m = %d", c.n, c.m)) {
			t.Errorf("ZMax(%d, %d) = %v, %v; want an error naming n and m", c.n, c.m, z, err)
		}
	}

	// In Craft: n from Senders, or len(Honest) + Attackers when 0.
	mu, sd := meanStd(handView().Honest, false)
	for _, c := range []struct{ senders, attackers, n int }{{7, 3, 7}, {7, 2, 7}, {0, 3, 6}, {0, 1, 4}} {
		v := &View{Honest: handView().Honest, Senders: c.senders, Attackers: c.attackers}
		z, err := ZMax(c.n, c.attackers)
		if err != nil {
			t.Fatal(err)
		}
		got := craft(t, ALIE{}, v, make([]float32, 3), nil)
		for j := range mu {
			if want := float32(mu[j] + z*sd[j]); got[j] != want {
				t.Errorf("senders %d attackers %d coordinate %d: %v, want %v", c.senders, c.attackers, j, got[j], want)
			}
		}
	}
	v := &View{Honest: handView().Honest, Senders: 7, Attackers: 4}
	if err := (ALIE{}).Craft(make([]float32, 3), v, make([]float32, 3), 0, 1, nil); err == nil || !strings.Contains(err.Error(), "n = 7, m = 4") {
		t.Errorf("alie with infinite z_max: err = %v", err)
	}
	err := (ALIE{}).Craft(make([]float32, 3), handView(), make([]float32, 3), 0, 1, nil)
	if err == nil || !strings.Contains(err.Error(), "View.Attackers") {
		t.Errorf("alie z_max with no attackers in the view: err = %v", err)
	}
}

func TestIPM(t *testing.T) {
	for _, c := range []struct {
		eps  float64
		want []float32
	}{
		{0, []float32{-0.3, -0.4, 0.2}},
		{2, []float32{-6, -8, 4}},
	} {
		got := craft(t, IPM{Epsilon: c.eps}, handView(), []float32{7, 7, 7}, nil)
		for j := range got {
			if math.Abs(float64(got[j]-c.want[j])) > 1e-7 {
				t.Errorf("ε = %v: %v, want %v", c.eps, got, c.want)
				break
			}
		}
	}
}

// The hand example of min_max and min_sum: G = {(0, 0), (2, 0)}, μ = (1, 0),
// unit_vec p = (1, 0); m = (1 − γ, 0) is at distance 1 + γ from (2, 0), so
// min_max accepts γ ≤ 1 (max pair distance 2); min_sum accepts
// (1 − γ)² + (1 + γ)² ≤ 4, γ ≤ 1 too. The search approaches 1 from below,
// ending with the accepted γ and the last rejected one 2·step apart, step =
// 10/2^20 < 1e-5.
func TestMinMaxHand(t *testing.T) {
	for _, a := range []interface {
		Attack
		Gamma(*View) (float64, []float64, error)
	}{MinMax{}, MinSum{}} {
		v := &View{Honest: [][]float32{{0, 0}, {2, 0}}}
		gamma, p, err := a.Gamma(v)
		if err != nil {
			t.Fatal(err)
		}
		if !(gamma <= 1 && gamma > 1-2*gammaTol) || !slices.Equal(p, []float64{1, 0}) {
			t.Errorf("%s: γ = %v, p = %v; want γ in (1 − 2e-5, 1], p = (1, 0)", a.Name(), gamma, p)
		}
		got := craft(t, a, v, []float32{9, 9}, nil)
		if want := []float32{float32(1 - gamma), 0}; !slices.Equal(got, want) {
			t.Errorf("%s sent %v, want %v", a.Name(), got, want)
		}
	}
}

// minMaxAccepts is the spec's acceptance test of m = μ − γp, computed
// directly in float64.
func minMaxAccepts(g [][]float32, mu, p []float64, gamma float64, sum bool) bool {
	m := make([]float64, len(mu))
	for j := range m {
		m[j] = mu[j] - gamma*p[j]
	}
	dist := func(x []float64, y []float32) float64 {
		var s float64
		for j := range x {
			e := x[j] - float64(y[j])
			s += e * e
		}
		return s
	}
	pair := func(i, k int) float64 {
		var s float64
		for j := range g[i] {
			e := float64(g[i][j]) - float64(g[k][j])
			s += e * e
		}
		return s
	}
	if sum {
		var lhs float64
		for _, x := range g {
			lhs += dist(m, x)
		}
		rhs := math.Inf(1)
		for i := range g {
			var s float64
			for k := range g {
				s += pair(i, k)
			}
			rhs = min(rhs, s)
		}
		return lhs <= rhs
	}
	var lhs, rhs float64
	for i, x := range g {
		lhs = max(lhs, dist(m, x))
		for k := range g {
			rhs = max(rhs, pair(i, k))
		}
	}
	return lhs <= rhs
}

// The γ the search accepts passes its test,
// and γ + 1e-3 does not, unless it reaches the search cap 2·γ_init; for
// every perturbation, several honest sets and both objectives. The sent
// vector is float32(μ − γp), with p as the spec defines it.
func TestMinMaxAcceptance(t *testing.T) {
	capped, inside := 0, 0
	for _, sum := range []bool{false, true} {
		for _, pert := range []Perturbation{UnitVec, Std, Sign} {
			for trial, c := range []struct {
				k, d      int
				spread    float64
				gammaInit float64
			}{{2, 3, 1, 0}, {5, 10, 0.5, 0}, {8, 50, 2, 0}, {20, 200, 0.1, 0}, {10, 100, 30, 0}, {6, 40, 3, 100}} {
				g := honestSet(uint64(10+trial), c.k, c.d, c.spread)
				v := &View{Honest: g}
				var a Attack
				var gamma float64
				var p []float64
				var err error
				if sum {
					ms := MinSum{Perturbation: pert, GammaInit: c.gammaInit}
					a = ms
					gamma, p, err = ms.Gamma(v)
				} else {
					mm := MinMax{Perturbation: pert, GammaInit: c.gammaInit}
					a = mm
					gamma, p, err = mm.Gamma(v)
				}
				if err != nil {
					t.Fatal(err)
				}
				name := fmt.Sprintf("%s/%s/k=%d d=%d spread=%v", a.Name(), pert, c.k, c.d, c.spread)
				mu, sdS := meanStd(g, true)
				// p as the spec defines it.
				var norm float64
				for _, x := range mu {
					norm += x * x
				}
				norm = math.Sqrt(norm)
				for j := range p {
					var want float64
					switch pert {
					case UnitVec:
						want = mu[j] / norm
					case Std:
						want = sdS[j]
					case Sign:
						want = math.Copysign(1, mu[j])
					}
					if math.Abs(p[j]-want) > 1e-12*max(1, math.Abs(want)) {
						t.Fatalf("%s: p[%d] = %v, want %v", name, j, p[j], want)
					}
				}
				if gamma <= 0 {
					t.Fatalf("%s: γ = %v, want > 0 (γ = 0 always passes)", name, gamma)
				}
				if !minMaxAccepts(g, mu, p, gamma, sum) {
					t.Errorf("%s: accepted γ = %v fails its test", name, gamma)
				}
				gi := c.gammaInit
				if gi == 0 {
					gi = DefaultGammaInit
				}
				if gamma+1e-3 < 2*gi {
					inside++
					if minMaxAccepts(g, mu, p, gamma+1e-3, sum) {
						t.Errorf("%s: γ + 1e-3 = %v passes the test too", name, gamma+1e-3)
					}
				} else {
					capped++
				}
				got := craft(t, a, v, make([]float32, c.d), nil)
				for j := range got {
					if want := float32(mu[j] - gamma*p[j]); math.Abs(float64(got[j]-want)) > 1e-6*max(1, math.Abs(float64(want))) {
						t.Fatalf("%s: sent[%d] = %v, want %v", name, j, got[j], want)
					}
				}
			}
		}
	}
	// Both sides of the cap are exercised.
	if capped == 0 || inside < 20 {
		t.Errorf("%d cases below the cap, %d at it; want both", inside, capped)
	}
	t.Logf("%d cases below the search cap, %d at it", inside, capped)
}

// min_sum's boundary has a closed form: Σ_i ||μ − γp − g_i||² = Σ_i a_i +
// |G|γ²||p||² (the b_i sum to 0) and min_i Σ_j ||g_i − g_j||² =
// |G| min_i a_i + Σ_j a_j, so γ* = sqrt(min_i a_i)/||p||. The bisection
// ends within 2e-5 below it.
func TestMinSumClosedForm(t *testing.T) {
	g := honestSet(3, 7, 30, 0.8)
	mu, sd := meanStd(g, true)
	minA := math.Inf(1)
	for _, x := range g {
		var a float64
		for j := range mu {
			e := mu[j] - float64(x[j])
			a += e * e
		}
		minA = min(minA, a)
	}
	var c float64
	for _, s := range sd {
		c += s * s
	}
	want := math.Sqrt(minA / c)
	gamma, _, err := MinSum{Perturbation: Std}.Gamma(&View{Honest: g})
	if err != nil {
		t.Fatal(err)
	}
	if !(gamma <= want && gamma > want-2*gammaTol) {
		t.Errorf("γ = %v, closed form %v", gamma, want)
	}
}

// The search itself, against the trace of the spec's loop on a known
// boundary: with accept(γ) = γ ≤ 3.3 the passes visit 10, 5, 2.5, 3.75,
// 3.125, ... and the result is the largest accepted, within 2e-5 of 3.3.
func TestSearchGamma(t *testing.T) {
	var seen []float64
	got := searchGamma(10, func(g float64) bool { seen = append(seen, g); return g <= 3.3 })
	if !slices.Equal(seen[:5], []float64{10, 5, 2.5, 3.75, 3.125}) {
		t.Errorf("visited %v", seen[:5])
	}
	if !(got <= 3.3 && got > 3.3-2*gammaTol) {
		t.Errorf("γ = %v, want within 2e-5 below 3.3", got)
	}
	// ceil(log2(10/1e-5)) = 20 passes.
	if len(seen) != 20 {
		t.Errorf("%d passes, want 20", len(seen))
	}
	// Always accepted: the cap 2·γ_init is approached, never reached.
	if g := searchGamma(10, func(float64) bool { return true }); !(g < 20 && g > 20-2e-5) {
		t.Errorf("always accepted: γ = %v", g)
	}
	if g := searchGamma(10, func(float64) bool { return false }); g != 0 {
		t.Errorf("never accepted: γ = %v", g)
	}
	// A huge γ_init still ends.
	if g := searchGamma(MaxGammaInit, func(g float64) bool { return g < 1e20 }); !(g < 1e20 && g > 0.999e20) {
		t.Errorf("γ_init 1e30: γ = %v", g)
	}
}

// fang_trim on the hand view, with coordinates chosen to take every branch
// of the spec: μ = (3, 4, −2, −3, 2, 0) with the extremes below.
func TestFangTrim(t *testing.T) {
	v := &View{Honest: [][]float32{
		{1, -2, -1, -4, 2, -1},
		{3, 6, -1, -3, 2, 1},
		{5, 8, -4, -2, 2, 0},
	}}
	// Expected intervals, b = 2 and b = 4.
	type iv struct{ lo, hi float64 }
	for _, c := range []struct {
		b    float64
		want []iv
	}{
		{0, []iv{
			{0.5, 1},   // μ > 0, min 1 > 0: [min/b, min]
			{-4, -2},   // μ > 0, min −2 ≤ 0: [b·min, min]
			{-1, -0.5}, // μ < 0, max −1 ≤ 0: [max, max/b]
			{-2, -1},   // μ < 0, max −2: [max, max/b]
			{1, 2},     // μ > 0, min 2: [1, 2]
			{0, 0},     // μ = 0: μ
		}},
		{4, []iv{{0.25, 1}, {-8, -2}, {-1, -0.25}, {-2, -0.5}, {0.5, 2}, {0, 0}}},
	} {
		got := craft(t, FangTrim{B: c.b}, v, make([]float32, 6), stream(9))
		r := stream(9)
		for j, w := range c.want {
			u := r.Float64()
			want := float32(w.lo + u*(w.hi-w.lo))
			if got[j] != want {
				t.Errorf("b = %v coordinate %d: %v, want %v (in [%v, %v])", c.b, j, got[j], want, w.lo, w.hi)
			}
		}
	}
	// The case s < 0 with max > 0: [max, b·max].
	got := craft(t, FangTrim{}, &View{Honest: [][]float32{{-5}, {1}}}, []float32{0}, stream(2))
	if u := stream(2).Float64(); got[0] != float32(1+u) {
		t.Errorf("s < 0, max 1: %v, want %v", got[0], 1+u)
	}
}

func TestLabelFlip(t *testing.T) {
	a, err := New("label_flip", Params{})
	if err != nil {
		t.Fatal(err)
	}
	da, ok := a.(DataAttack)
	if !ok {
		t.Fatal("label_flip does not implement DataAttack")
	}
	for _, c := range [][3]int{{0, 10, 9}, {9, 10, 0}, {3, 10, 6}, {1, 2, 0}, {2, 5, 2}, {-1, 10, -1}, {10, 10, 10}} {
		if got := da.FlipLabel(c[0], c[1]); got != c[2] {
			t.Errorf("FlipLabel(%d, %d) = %d, want %d", c[0], c[1], got, c[2])
		}
	}
	b := honestVector(50)
	if got := craft(t, a, nil, b, nil); !slices.Equal(got, b) {
		t.Error("label_flip changed the payload")
	}
	// No other attack is a data attack.
	for _, name := range Names() {
		x, _ := New(name, params)
		if _, ok := x.(DataAttack); ok != (name == "label_flip") {
			t.Errorf("%s: DataAttack = %v", name, ok)
		}
	}
}

// Omniscient attacks without a view, with a view of the wrong length or
// too few payloads, are errors.
func TestViewErrors(t *testing.T) {
	for _, name := range []string{"alie", "ipm", "min_max", "min_sum", "fang_trim"} {
		a, err := New(name, Params{Z: 1})
		if err != nil {
			t.Fatal(err)
		}
		x := make([]float32, 3)
		for _, v := range []*View{nil, {}, {Honest: [][]float32{}}} {
			if err := a.Craft(x, v, x, 0, 1, stream(1)); !errors.Is(err, ErrNoView) || !strings.Contains(err.Error(), name) {
				t.Errorf("%s with view %v: err = %v, want ErrNoView", name, v, err)
			}
		}
		v := &View{Honest: [][]float32{{1, 2, 3}, {1, 2}}}
		if err := a.Craft(x, v, x, 0, 1, stream(1)); !errors.Is(err, ErrLength) || !strings.Contains(err.Error(), "payload 1") {
			t.Errorf("%s with a short honest payload: err = %v", name, err)
		}
	}
	one := &View{Honest: [][]float32{{1, 2}}}
	for _, a := range []Attack{MinMax{Perturbation: Std}, MinSum{Perturbation: Std}} {
		if err := a.Craft(make([]float32, 2), one, make([]float32, 2), 0, 1, nil); err == nil || !strings.Contains(err.Error(), "at least 2") {
			t.Errorf("%s std with one honest payload: err = %v", a.Name(), err)
		}
	}
	if err := (FangTrim{}).Craft(make([]float32, 2), one, make([]float32, 2), 0, 1, nil); err == nil {
		t.Error("fang_trim with a nil rng crafted a vector")
	}
}

// Every attack sends the same vector for the same arguments and stream, on a
// fresh view or the shared one, to any receiver, and from concurrent
// goroutines on one shared View.
func TestDeterminism(t *testing.T) {
	g := honestSet(4, 9, 300, 0.5)
	b := honestVector(300)
	for _, name := range Names() {
		if name == "random" || name == "dynamic" {
			continue // tested in random_test.go and dynamic_test.go, need a model's length
		}
		a, err := New(name, Params{Sigma: 1, Percent: 10})
		if err != nil {
			t.Fatal(err)
		}
		// Every receiver hears every honest sender, so adaptive_receiver
		// too sends one vector to all.
		ids := []int{0, 1, 2, 3, 4, 5, 6, 7, 8}
		all := func(int) []int { return ids }
		fresh := func() *View { return &View{Honest: g, Senders: 12, Attackers: 3, From: ids, In: all} }
		want := craft(t, a, fresh(), b, stream(6))
		shared := fresh()
		if got := craft(t, a, shared, b, stream(6)); !slices.Equal(got, want) {
			t.Errorf("%s: second fresh view differs", name)
		}
		var wg sync.WaitGroup
		for to := range 4 {
			wg.Go(func() {
				dst := make([]float32, len(b))
				if err := a.Craft(dst, shared, b, 0, to, stream(6)); err != nil {
					t.Error(err)
					return
				}
				if !slices.Equal(dst, want) {
					t.Errorf("%s: receiver %d got another vector", name, to)
				}
			})
		}
		wg.Wait()
		// In place.
		in := slices.Clone(b)
		if err := a.Craft(in, fresh(), in, 0, 1, stream(6)); err != nil || !slices.Equal(in, want) {
			t.Errorf("%s in place: differs (err %v)", name, err)
		}
	}
}

// TestAdaptivePredictsFromThePreviousRound checks the spec's message
// pred − e·||pred||·μ/||μ|| by hand: pred = (2, 0) from the previous round's
// honest mean, μ = (0, 3) now, e = 0.1 gives (2, −0.2); without history
// pred = μ gives (0, 2.7).
func TestAdaptivePredictsFromThePreviousRound(t *testing.T) {
	a, err := New("adaptive", Params{})
	if err != nil {
		t.Fatal(err)
	}
	if !UsesPrevious(a) {
		t.Fatal("adaptive must ask the driver for the previous view")
	}
	prev := &View{Honest: [][]float32{{1, 0}, {3, 0}}}
	prev.Settle()
	if prev.Honest != nil {
		t.Fatal("Settle must drop the payloads")
	}
	dst := make([]float32, 2)
	cur := [][]float32{{0, 2}, {0, 4}}
	if err := a.Craft(dst, &View{Honest: cur, Previous: prev}, []float32{9, 9}, 0, 1, nil); err != nil {
		t.Fatal(err)
	}
	if math.Abs(float64(dst[0])-2) > 1e-6 || math.Abs(float64(dst[1])+0.2) > 1e-6 {
		t.Fatalf("with history: %v, want (2, -0.2)", dst)
	}
	if err := a.Craft(dst, &View{Honest: cur}, []float32{9, 9}, 0, 1, nil); err != nil {
		t.Fatal(err)
	}
	if math.Abs(float64(dst[0])) > 1e-6 || math.Abs(float64(dst[1])-2.7) > 1e-6 {
		t.Fatalf("first round: %v, want (0, 2.7)", dst)
	}
	if _, err := New("adaptive", Params{Epsilon: -1}); err == nil {
		t.Fatal("a negative e must be rejected")
	}
}

// With model payloads fang_trim pushes against the change of the honest
// mean, not its sign: previous mean (10, −10), current honest models
// {(11, −12), (13, −14)} with mean (12, −13): coordinate 0 grew (s > 0:
// [min/b, min] = [5.5, 11]), coordinate 1 fell (s < 0, max −12 < 0:
// [max, max/b] = [−12, −6]); then a positive coordinate that fell, where
// the sign of μ (the old rule, right for update payloads) points the
// wrong way. Without a previous round nothing moved: μ is sent.
func TestFangTrimModelDirection(t *testing.T) {
	prev := &View{Tag: "model", Honest: [][]float32{{10, -10}, {10, -10}}}
	prev.Settle()
	cur := [][]float32{{11, -12}, {13, -14}}
	got := craft(t, FangTrim{}, &View{Tag: "model", Honest: cur, Previous: prev}, make([]float32, 2), stream(3))
	r := stream(3)
	if u := r.Float64(); got[0] != float32(5.5+u*5.5) {
		t.Errorf("coordinate 0: %v, want in [5.5, 11] at u = %v", got[0], u)
	}
	if u := r.Float64(); got[1] != float32(-12+u*6) {
		t.Errorf("coordinate 1: %v, want in [-12, -6] at u = %v", got[1], u)
	}
	// Models whose mean fell where it is positive: previous (20, 0),
	// current mean (12, −13): s_0 < 0 now, max 13 > 0: [13, 26].
	prev = &View{Tag: "model", Honest: [][]float32{{20, 0}}}
	prev.Settle()
	got = craft(t, FangTrim{}, &View{Tag: "model", Honest: cur, Previous: prev}, make([]float32, 2), stream(4))
	if u := stream(4).Float64(); got[0] != float32(13+u*13) {
		t.Errorf("falling positive coordinate: %v, want in [13, 26] at u = %v", got[0], u)
	}
	// The first round with models: μ.
	got = craft(t, FangTrim{}, &View{Tag: "model", Honest: cur}, make([]float32, 2), stream(5))
	if got[0] != 12 || got[1] != -13 {
		t.Errorf("first round: %v, want μ = [12 -13]", got)
	}
	if !UsesPrevious(FangTrim{}) {
		t.Error("fang_trim must ask for the previous round's view")
	}
}
