package aggregate

import (
	"slices"
	"strings"
	"testing"
)

func TestParseSpec(t *testing.T) {
	for _, c := range []struct {
		in          string
		pre         []string
		rule        string
		takesF, own bool
	}{
		{"median", nil, "median", false, false},
		{"krum", nil, "krum", true, false},
		{"nnm+median", []string{"nnm"}, "median", true, false},
		{"bucketing+clip+mean", []string{"bucketing", "clip"}, "mean", false, false},
		{"arc+rtc", []string{"arc"}, "rtc", true, true},
		{"ios", nil, "ios", true, true},
		{"centered_clipping", nil, "centered_clipping", true, false},
	} {
		s, err := ParseSpec(c.in)
		if err != nil {
			t.Fatalf("%s: %v", c.in, err)
		}
		if !slices.Equal(s.Pre, c.pre) || s.Rule != c.rule || s.TakesF() != c.takesF || s.AroundOwn() != c.own || s.String() != c.in {
			t.Errorf("%s: %+v takesF %v around %v string %q", c.in, s, s.TakesF(), s.AroundOwn(), s)
		}
	}
	for _, c := range []struct{ in, want string }{
		{"", "unknown rule"},
		{"nnm", "is a pre-aggregator"},
		{"krum+median", `unknown pre-aggregator "krum"`},
		{"median+", "unknown rule"},
		{"centerpoint", "not available"},
		{"nnm++krum", `unknown pre-aggregator ""`},
	} {
		if _, err := ParseSpec(c.in); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ParseSpec(%q) = %v, want %q", c.in, err, c.want)
		}
	}
}

// Every rule that has an f changes its output with it on some inputs, and
// every rule without one does not: TakesF is what the rules do.
func TestTakesFMatchesTheRules(t *testing.T) {
	var xs [][]float32
	for i := range 13 { // a tight cluster, a loose one, and far points
		v := float32(i)
		xs = append(xs, []float32{v * v * float32(i%3), v - float32(i%4)*v*v/3})
	}
	own := []float32{1, 1}
	for _, name := range append(Names(), "nnm+mean", "arc+mean", "bucketing+mean", "clip+mean") {
		s, _ := ParseSpec(name)
		p := Params{}
		if s.Uses("clip") {
			p.Clip = 5
		}
		out := func(f int) []float32 {
			p.F = f
			r, err := s.New(p)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			dst := make([]float32, 2)
			if s.AroundOwn() {
				err = r.(Centered).AggregateAround(dst, own, xs)
			} else {
				err = r.Aggregate(dst, xs)
			}
			if err != nil {
				t.Fatalf("%s f=%d: %v", name, f, err)
			}
			return dst
		}
		first, changes := out(0), false
		for f := 1; f <= 2; f++ {
			changes = changes || !slices.Equal(first, out(f))
		}
		if changes != s.TakesF() {
			t.Errorf("%s: output changes with f: %v, TakesF %v", name, changes, s.TakesF())
		}
	}
}

// MaxF is where the documented conditions stop holding: krum and
// multi_krum need n > 2f + 2, trimmed_mean n > 2f, bulyan n > 4f + 3.
func TestMaxF(t *testing.T) {
	for _, c := range []struct {
		rule string
		n    int
		want int
	}{
		{"krum", 6, 1}, {"krum", 7, 2}, {"krum", 2, -1}, {"multi_krum", 10, 3},
		{"trimmed_mean", 8, 3}, {"trimmed_mean", 9, 4}, {"bulyan", 8, 1}, {"bulyan", 7, 0}, {"bulyan", 3, -1},
	} {
		s, _ := ParseSpec(c.rule)
		if got := s.MaxF(Params{}, c.n); got != c.want {
			t.Errorf("%s with n = %d: MaxF %d, want %d", c.rule, c.n, got, c.want)
		}
	}
}

func TestFFor(t *testing.T) {
	for _, c := range []struct {
		frac    float64
		n, fmax int
		r       FRounding
		want    int
	}{
		{0.25, 8, 3, Up, 2},       // ⌈0.25·7⌉ = ⌈1.75⌉
		{0.5, 6, 1, Up, 1},        // ⌈2.5⌉ = 3, capped at 1
		{0, 8, 3, Up, 0},          // no declared adversary
		{0.2, 6, 5, Up, 1},        // 0.2·5 = 1 exactly (not 2 from rounding error)
		{0.2, 10, 3, Nearest, 2},  // round(1.8)
		{0.8, 10, 3, Nearest, 3},  // round(7.2) = 7, capped at 3
		{0.25, 3, -1, Nearest, 0}, // the rule cannot run: 0, and the rule says why
	} {
		if got := FFor(c.frac, c.n, c.fmax, c.r); got != c.want {
			t.Errorf("FFor(%v, %d, %d, %v) = %d, want %d", c.frac, c.n, c.fmax, c.r, got, c.want)
		}
	}
}

// Auto resolves f from the finite inputs it is given, caps it at what the
// rule tolerates, and runs around the own vector when the rule does.
func TestAuto(t *testing.T) {
	s, _ := ParseSpec("trimmed_mean")
	a, err := NewAuto(s, Params{}, 0.25, Up)
	if err != nil {
		t.Fatal(err)
	}
	if f := a.F(8); f != 2 {
		t.Errorf("auto f with 8 inputs = %d, want 2", f)
	}
	// 8 inputs, one of them NaN: 7 finite, ⌈0.25·6⌉ = 2 trimmed at each
	// end of 7 values: the middle three of 1..7 average to 4.
	nan := float32(0)
	nan /= nan
	xs := [][]float32{{1}, {7}, {2}, {nan}, {6}, {3}, {5}, {4}}
	dst := make([]float32, 1)
	if err := a.Aggregate(dst, xs); err != nil || dst[0] != 4 {
		t.Errorf("auto trimmed mean = %v, %v; want 4", dst, err)
	}
	k, _ := ParseSpec("krum")
	ak, _ := NewAuto(k, Params{}, 0.5, Up)
	if f := ak.F(6); f != 1 {
		t.Errorf("auto krum f with 6 inputs = %d, want 1 (n > 2f + 2)", f)
	}
	// msr around the own value 0 with neighbours 10, 1, -1, -20 (n = 5):
	// f = ⌈0.5·4⌉ = 2 drops 10 and 1 above, -1 and -20 below: the own value.
	m, _ := ParseSpec("msr")
	am, _ := NewAuto(m, Params{}, 0.5, Up)
	if err := am.AggregateAround(dst, []float32{0}, [][]float32{{10}, {1}, {-1}, {-20}}); err != nil || dst[0] != 0 {
		t.Errorf("auto msr around 0 = %v, %v; want 0", dst, err)
	}
	if _, err := NewAuto(s, Params{}, 1.5, Up); err == nil {
		t.Error("fraction 1.5 accepted")
	}
}
