package aggregate

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// allRules returns one fresh value of every rule of the original three, for
// n inputs (the no-allocation and weight tests below run them all).
func allRules(n int) []Rule {
	return []Rule{&Mean{}, &Median{}, &TrimmedMean{F: (n - 1) / 3}}
}

// ruleNames are the rules and chains the property tests run, through
// NewWith.
var ruleNames = []string{
	"mean", "median", "trimmed_mean", "krum", "multi_krum", "geometric_median",
	"centered_clipping", "bulyan", "msr", "ios", "rtc", "nnm+krum", "arc+median",
	"clip+trimmed_mean", "bucketing+median", "nnm+bucketing+geometric_median",
}

// newRules returns a fresh value of every rule of ruleNames that can run on
// n inputs with f faulty ones, with the given thread count.
func newRules(t *testing.T, n, f, threads int) []Rule {
	t.Helper()
	var rs []Rule
	for _, name := range ruleNames {
		if strings.HasSuffix(name, "bulyan") && n <= 4*f+3 || strings.HasSuffix(name, "krum") && n <= 2*f+2 {
			continue
		}
		p := Params{F: f, Threads: threads}
		if strings.Contains(name, "clip+") {
			p.Clip = 3
		}
		if strings.Contains(name, "bucketing") {
			p.Seed = 42
		}
		r, err := NewWith(name, p)
		if err != nil {
			t.Fatalf("NewWith(%q): %v", name, err)
		}
		rs = append(rs, r)
	}
	return rs
}

func TestNew(t *testing.T) {
	for _, name := range Names() {
		r, err := New(name, 2)
		if err != nil {
			t.Fatalf("New(%q): %v", name, err)
		}
		if r.Name() != name {
			t.Errorf("New(%q).Name() = %q", name, r.Name())
		}
		if _, ok := r.(Selector); !ok {
			t.Errorf("%s does not implement Selector", name)
		}
		if _, ok := r.(Dropper); !ok {
			t.Errorf("%s does not implement Dropper", name)
		}
	}
	if r, _ := New("trimmed_mean", 3); r.(*TrimmedMean).F != 3 {
		t.Errorf("New(trimmed_mean, 3) has F = %d", r.(*TrimmedMean).F)
	}
	_, err := New("krum_typo", 1)
	if err == nil || !strings.Contains(err.Error(), "krum_typo") || !strings.Contains(err.Error(), "mean, median, trimmed_mean, krum") {
		t.Errorf("unknown rule: err = %v, want the name and the valid names", err)
	}
	if _, err := New("median", -1); err == nil || !strings.Contains(err.Error(), "-1") {
		t.Errorf("f = -1: err = %v", err)
	}
	for _, c := range []struct{ name string }{{"centered_clipping"}, {"msr"}} {
		r, _ := New(c.name, 1)
		if _, ok := r.(Centered); !ok {
			t.Errorf("%s is not Centered", c.name)
		}
	}
}

func TestNewWith(t *testing.T) {
	r, err := NewWith("bucketing+nnm+multi_krum", Params{F: 2, M: 3, Bucket: 3, Seed: 7, Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	c := r.(*Chain)
	if c.Name() != "bucketing+nnm+multi_krum" {
		t.Errorf("name %q", c.Name())
	}
	b, nnm, mk := c.Pre[0].(*Bucketing), c.Pre[1].(*NNM), c.Rule.(*MultiKrum)
	if b.S != 3 || b.Seed != 7 || nnm.F != 2 || mk.F != 2 || mk.M != 3 || mk.Threads != 2 {
		t.Errorf("parameters not passed on: %+v %+v %+v", b, nnm, mk)
	}
	if r, _ := NewWith("bucketing+median", Params{}); r.(*Chain).Pre[0].(*Bucketing).S != 2 {
		t.Error("bucketing's default s is not 2")
	}
	cc, _ := NewWith("centered_clipping", Params{Tau: 0.5, Iterations: 5, FromPrevious: true})
	if c := cc.(*CenteredClipping); c.Tau != 0.5 || c.Iterations != 5 || !c.FromPrevious {
		t.Errorf("centered_clipping parameters: %+v", c)
	}
	for _, c := range []struct {
		name string
		p    Params
		want []string
	}{
		{"nope", Params{}, []string{`"nope"`, "geometric_median", "bucketing"}},
		{"nnm", Params{}, []string{"pre-aggregator", "nnm+median"}},
		{"nmm+krum", Params{}, []string{`"nmm"`, "bucketing, nnm, clip, arc"}},
		{"median", Params{M: 3}, []string{"m = 3", "multi_krum"}},
		{"median", Params{Tau: 1}, []string{"tau = 1", "centered_clipping"}},
		{"krum", Params{Iterations: 4}, []string{"iterations = 4"}},
		{"median", Params{Bucket: 4}, []string{"bucket = 4", "bucketing"}},
		{"median", Params{Seed: 4}, []string{"seed = 4"}},
		{"median", Params{Clip: 4}, []string{"clip = 4"}},
		{"median", Params{FromPrevious: true}, []string{"from_previous"}},
		{"clip+median", Params{}, []string{"clip > 0"}},
		{"clip+median", Params{Clip: math.NaN()}, []string{"clip = NaN", "(0, ∞)"}},
		{"multi_krum", Params{M: -1}, []string{"m = -1", "[1, n]"}},
		{"centered_clipping", Params{Tau: -2}, []string{"tau = -2"}},
		{"centered_clipping", Params{Tau: math.Inf(1)}, []string{"tau = +Inf"}},
		{"geometric_median", Params{Iterations: -1}, []string{"iterations = -1"}},
		{"bucketing+median", Params{Bucket: -1}, []string{"bucket = -1"}},
		{"median", Params{Threads: -1}, []string{"threads = -1"}},
		{"krum", Params{F: -3}, []string{"f = -3"}},
	} {
		_, err := NewWith(c.name, c.p)
		if err == nil {
			t.Errorf("NewWith(%q, %+v) accepted", c.name, c.p)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("NewWith(%q, %+v): error %q does not say %q", c.name, c.p, err, w)
			}
		}
	}
}

// Invalid use is an error wrapping the right sentinel, never a panic.
func TestErrors(t *testing.T) {
	for _, r := range newRules(t, 3, 0, 1) {
		if err := r.Aggregate(nil, nil); !errors.Is(err, ErrNoInputs) {
			t.Errorf("%s, no inputs: err = %v", r.Name(), err)
		}
		err := r.Aggregate(make([]float32, 3), [][]float32{{1, 2, 3}, {1, 2, 3}, {1, 2}})
		if !errors.Is(err, ErrLength) || !strings.Contains(err.Error(), "input 2 has length 2, input 0 has length 3") {
			t.Errorf("%s, short input: err = %v", r.Name(), err)
		}
		err = r.Aggregate(make([]float32, 4), [][]float32{{1, 2, 3}, {1, 2, 3}, {1, 2, 3}})
		if !errors.Is(err, ErrLength) || !strings.Contains(err.Error(), "dst has length 4, inputs have length 3") {
			t.Errorf("%s, long dst: err = %v", r.Name(), err)
		}
		nan := float32(math.NaN())
		err = r.Aggregate(make([]float32, 3), [][]float32{{nan, 2, 3}, {1, float32(math.Inf(1)), 3}})
		if !errors.Is(err, ErrNoInputs) || !errors.Is(err, ErrNonFinite) {
			t.Errorf("%s, all inputs non-finite: err = %v", r.Name(), err)
		}
		if w := r.(Selector).Weights(); w != nil {
			t.Errorf("%s: weights after failed calls: %v", r.Name(), w)
		}
		if d := r.(Dropper).Dropped(); d != 2 {
			t.Errorf("%s: dropped %d of 2 non-finite inputs", r.Name(), d)
		}
	}
	one := [][]float32{{1}, {2}, {3}, {4}, {5}, {6}}
	for _, c := range []struct {
		r    Rule
		n    int
		want string
	}{
		{&TrimmedMean{F: 2}, 4, "n = 4 inputs with f = 2, need n > 2f = 4"},
		{&Krum{F: 1}, 4, "n = 4 inputs with f = 1, need n > 2f + 2 = 4"},
		{&Krum{F: 2}, 6, "n = 6 inputs with f = 2, need n > 2f + 2 = 6"},
		{&MultiKrum{F: 1}, 4, "need n > 2f + 2 = 4"},
		{&Bulyan{F: 1}, 6, "n = 6 inputs with f = 1, need n > 4f + 3 = 7"},
		{&Bulyan{F: 0}, 3, "need n > 4f + 3 = 3"},
		{&CenteredClipping{F: 3}, 3, "n > f"},
	} {
		err := c.r.Aggregate(make([]float32, 1), one[:c.n])
		if !errors.Is(err, ErrTooFewInputs) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s with n = %d: err = %v, want ErrTooFewInputs saying %q", c.r.Name(), c.n, err, c.want)
		}
	}
	// Dropping can leave too few: the error says how many were dropped.
	nan := float32(math.NaN())
	err := (&Krum{F: 1}).Aggregate(make([]float32, 1), [][]float32{{1}, {2}, {3}, {4}, {nan}, {nan}})
	if !errors.Is(err, ErrTooFewInputs) || !strings.Contains(err.Error(), "after dropping 2 non-finite") {
		t.Errorf("krum after drops: err = %v", err)
	}
	if err := (&MultiKrum{F: 1, M: 6}).Aggregate(make([]float32, 1), one[:5]); !errors.Is(err, ErrTooFewInputs) || !strings.Contains(err.Error(), "m = 6") {
		t.Errorf("multi_krum m > n: err = %v", err)
	}
	if err := (&MultiKrum{F: 1, M: -1}).Aggregate(make([]float32, 1), one); err == nil {
		t.Error("multi_krum m = -1 accepted")
	}
	if err := (&Centerpoint{}).Aggregate(make([]float32, 3), [][]float32{{1, 2, 3}}); !errors.Is(err, ErrLength) || !strings.Contains(err.Error(), "d = 3") {
		t.Errorf("centerpoint d = 3: err = %v", err)
	}
	if err := (&GeometricMedian{Nu: -1}).Aggregate(make([]float32, 1), one); err == nil {
		t.Error("geometric_median nu = -1 accepted")
	}
	for _, cr := range []Centered{&CenteredClipping{}, &MSR{F: 1}} {
		if err := cr.AggregateAround(make([]float32, 1), []float32{1, 2}, one); !errors.Is(err, ErrLength) || !strings.Contains(err.Error(), "own vector has length 2") {
			t.Errorf("%s, own of wrong length: err = %v", cr.Name(), err)
		}
		if err := cr.AggregateAround(make([]float32, 1), []float32{nan}, one); !errors.Is(err, ErrNonFinite) {
			t.Errorf("%s, non-finite own: err = %v", cr.Name(), err)
		}
	}
	chain := &Chain{Rule: &Median{}}
	if err := chain.AggregateAround(make([]float32, 1), []float32{1}, one); err == nil || !strings.Contains(err.Error(), "no own-vector form") {
		t.Errorf("chain around a non-centered rule: err = %v", err)
	}
	if err := (&Chain{}).Aggregate(make([]float32, 1), one); err == nil {
		t.Error("chain without a rule accepted")
	}
	for _, p := range []Pre{&Bucketing{}, &NNM{F: 6}, &Clip{}, &AdaptiveClip{F: 6}, &AdaptiveClip{F: -1}, &NNM{F: -1}} {
		if _, err := p.Apply(one); err == nil {
			t.Errorf("%s %+v accepted", p.Name(), p)
		}
		if _, err := p.Apply(nil); err == nil {
			t.Errorf("%s accepted no inputs", p.Name())
		}
	}
}

// Non-finite inputs are dropped and counted: the output is the rule's on
// the finite inputs, bit for bit, and the dropped inputs get weight 0.
func TestNonFiniteDropped(t *testing.T) {
	r := rand.New(rand.NewPCG(20, 20))
	xs := wideInputs(r, 14, 300)
	bad := slices.Clone(xs)
	nan, inf := make([]float32, 300), make([]float32, 300)
	nan[17], inf[299] = float32(math.NaN()), float32(math.Inf(-1))
	bad = slices.Insert(bad, 3, nan)
	bad = slices.Insert(bad, 9, inf)
	for i, r1 := range newRules(t, 14, 2, 1) {
		r2 := newRules(t, 14, 2, 1)[i]
		want, got := run(t, r1, xs), run(t, r2, bad)
		if !equalBits(want, got) {
			t.Errorf("%s: output with non-finite inputs differs from the output without them", r1.Name())
		}
		if d := r2.(Dropper).Dropped(); d != 2 {
			t.Errorf("%s: Dropped() = %d, want 2", r1.Name(), d)
		}
		w1, w2 := r1.(Selector).Weights(), r2.(Selector).Weights()
		if len(w2) != 16 || w2[3] != 0 || w2[9] != 0 {
			t.Fatalf("%s: weights %v, want 16 with 0 at 3 and 9", r1.Name(), w2)
		}
		w2 = slices.Delete(slices.Delete(w2, 9, 10), 3, 4)
		if !slices.Equal(w1, w2) {
			t.Errorf("%s: weights of the kept inputs differ: %v vs %v", r1.Name(), w1, w2)
		}
	}
	// Centered rules drop too.
	own := xs[0]
	for _, mk := range []func() Centered{func() Centered { return &CenteredClipping{Tau: 1} }, func() Centered { return &MSR{F: 2} }} {
		a, b := mk(), mk()
		want, got := make([]float32, 300), make([]float32, 300)
		if err := a.AggregateAround(want, own, xs); err != nil {
			t.Fatal(err)
		}
		if err := b.AggregateAround(got, own, bad); err != nil {
			t.Fatal(err)
		}
		if !equalBits(want, got) || b.(Dropper).Dropped() != 2 {
			t.Errorf("%s around: dropping changed the output or was not counted", a.Name())
		}
	}
}

func TestWeightsSumToOne(t *testing.T) {
	r := rand.New(rand.NewPCG(12, 12))
	for _, n := range []int{1, 2, 5, 8, 33} {
		xs := wideInputs(r, n, 900)
		for _, rule := range append(allRules(n), newRules(t, n, (n-1)/4, 1)...) {
			run(t, rule, xs)
			w := rule.(Selector).Weights()
			if len(w) != n {
				t.Fatalf("n=%d %s: %d weights", n, rule.Name(), len(w))
			}
			if s := sum(w); math.Abs(s-1) > 1e-12 {
				t.Errorf("n=%d %s: weights sum to %v", n, rule.Name(), s)
			}
			for i, v := range w {
				if v < 0 || v > 1+1e-15 {
					t.Errorf("n=%d %s: weight %d = %v", n, rule.Name(), i, v)
				}
			}
		}
	}
	// No coordinates: every input counts equally.
	m := &Median{}
	run(t, m, [][]float32{{}, {}})
	if w := m.Weights(); len(w) != 2 || w[0] != 0.5 || w[1] != 0.5 {
		t.Errorf("empty vectors: weights %v", w)
	}
}

// After the first call has sized the scratch, a single-threaded call
// allocates nothing, for the original rules and for the new ones that
// take no pre-aggregator.
func TestNoAllocations(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 13))
	xs := wideInputs(r, 20, 5000)
	dst := make([]float32, 5000)
	rules := append(allRules(20), &Krum{F: 3}, &MultiKrum{F: 3}, &GeometricMedian{}, &CenteredClipping{}, &Bulyan{F: 3}, &MSR{F: 3})
	for _, rule := range rules {
		if err := rule.Aggregate(dst, xs); err != nil {
			t.Fatal(err)
		}
		if a := testing.AllocsPerRun(3, func() { _ = rule.Aggregate(dst, xs) }); a != 0 {
			t.Errorf("%s: %v allocations per call", rule.Name(), a)
		}
	}
}

// Random calls with hostile values (NaN, ±Inf, ±MaxFloat32, subnormals,
// signed zeros, ragged lengths) never panic, and a call that succeeds
// writes finite values.
func TestHostileInputs(t *testing.T) {
	r := rand.New(rand.NewPCG(60, 60))
	palette := []float32{0, float32(math.Copysign(0, -1)), 1, -1, math.SmallestNonzeroFloat32, math.MaxFloat32, -math.MaxFloat32,
		float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)), 1e30, -1e-30}
	value := func() float32 {
		if r.IntN(3) == 0 {
			return palette[r.IntN(len(palette))]
		}
		return float32(r.NormFloat64())
	}
	for trial := range 400 {
		n, d, f := 1+r.IntN(12), r.IntN(5), r.IntN(4)
		xs := make([][]float32, n)
		for i := range xs {
			dd := d
			if r.IntN(40) == 0 {
				dd = d + 1
			}
			xs[i] = make([]float32, dd)
			for j := range xs[i] {
				xs[i][j] = value()
			}
		}
		own := make([]float32, d)
		for j := range own {
			own[j] = float32(r.NormFloat64())
		}
		rules := newRules(t, 1000, f, 1+r.IntN(2)) // every rule, whatever n
		rules = append(rules, &Centerpoint{}, &MultiKrum{F: f, M: 1 + r.IntN(3)}, &CenteredClipping{Tau: 0.5, FromPrevious: true})
		for _, rule := range rules {
			dst := make([]float32, d)
			err := rule.Aggregate(dst, xs)
			if cr, ok := rule.(Centered); ok && r.IntN(2) == 0 {
				err = cr.AggregateAround(dst, own, xs)
				if err != nil && strings.Contains(err.Error(), "no own-vector form") {
					continue
				}
			}
			if err != nil {
				continue
			}
			for j, v := range dst {
				if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
					t.Fatalf("trial %d: %s on %v gave %v at %d", trial, rule.Name(), xs, v, j)
				}
			}
		}
	}
}

// An f so large that 2f + 2 or 4f + 3 overflows is still too large.
func TestHugeF(t *testing.T) {
	xs := [][]float32{{1}, {2}, {3}}
	for _, r := range []Rule{&TrimmedMean{F: math.MaxInt / 2}, &Krum{F: math.MaxInt / 2}, &MultiKrum{F: math.MaxInt/2 + 1}, &Bulyan{F: math.MaxInt / 4}, &Bulyan{F: math.MaxInt/4 + 1}} {
		if err := r.Aggregate(make([]float32, 1), xs); !errors.Is(err, ErrTooFewInputs) {
			t.Errorf("%s with f = %v: err = %v", r.Name(), r, err)
		}
	}
}

// centerpoint is refused as a config rule, with the reason, so that a
// config on a model fails at validation.
func TestNewRefusesCenterpoint(t *testing.T) {
	for _, name := range []string{"centerpoint", "nnm+centerpoint"} {
		_, err := NewWith(name, Params{})
		if err == nil || !strings.Contains(err.Error(), "d <= 2") {
			t.Errorf("NewWith(%q): %v, want a refusal naming d <= 2", name, err)
		}
	}
}
