package aggregate

import (
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// allRules returns one fresh value of every rule, for n inputs.
func allRules(n int) []Rule {
	return []Rule{&Mean{}, &Median{}, &TrimmedMean{F: (n - 1) / 3}}
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
	}
	if r, _ := New("trimmed_mean", 3); r.(*TrimmedMean).F != 3 {
		t.Errorf("New(trimmed_mean, 3) has F = %d", r.(*TrimmedMean).F)
	}
	_, err := New("krum_typo", 1)
	if err == nil || !strings.Contains(err.Error(), "krum_typo") || !strings.Contains(err.Error(), "mean, median, trimmed_mean") {
		t.Errorf("unknown rule: err = %v, want the name and the valid names", err)
	}
	if _, err := New("median", -1); err == nil || !strings.Contains(err.Error(), "-1") {
		t.Errorf("f = -1: err = %v", err)
	}
}

func TestErrors(t *testing.T) {
	for _, r := range allRules(3) {
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
		for _, bad := range []float32{float32(math.NaN()), float32(math.Inf(-1))} {
			err = r.Aggregate(make([]float32, 3), [][]float32{{1, 2, 3}, {1, bad, 3}, {1, 2, 3}})
			if !errors.Is(err, ErrNonFinite) || !strings.Contains(err.Error(), "input 1") || !strings.Contains(err.Error(), "coordinate 1") {
				t.Errorf("%s, %v input: err = %v", r.Name(), bad, err)
			}
		}
		if w := r.(Selector).Weights(); w != nil {
			t.Errorf("%s: weights after failed calls: %v", r.Name(), w)
		}
	}
}

// Median and trimmed mean are bit-identical under any permutation of their
// inputs, including ties, signed zeros and sums too wide to be exact.
func TestPermutationInvariance(t *testing.T) {
	r := rand.New(rand.NewPCG(10, 10))
	for _, n := range []int{1, 2, 3, 4, 10, 31, 100} {
		xs := wideInputs(r, n, 700)
		rules := []Rule{&Median{}, &TrimmedMean{}, &TrimmedMean{F: (n - 1) / 3}, &TrimmedMean{F: (n - 1) / 2}}
		for _, rule := range rules {
			want := run(t, rule, xs)
			for range 3 {
				if got := run(t, rule, permuted(xs, r.Perm(n))); !equalBits(got, want) {
					t.Fatalf("n=%d %s: output changed under a permutation of the inputs", n, rule.Name())
				}
			}
		}
	}
}

// With f inputs at ±1e6 and the rest in [-1, 1], median and trimmed mean
// (f trimmed) stay within the per-coordinate range of the honest values;
// the mean does not.
func TestByzantineOutliers(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 11))
	const n, f, d = 10, 3, 1000
	xs := make([][]float32, n)
	for i := range xs {
		xs[i] = make([]float32, d)
		for j := range xs[i] {
			if i < n-f {
				xs[i][j] = float32(2*r.Float64() - 1)
			} else {
				xs[i][j] = float32(1e6 * float64(1-2*r.IntN(2)))
			}
		}
	}
	for _, rule := range []Rule{&Median{}, &TrimmedMean{F: f}} {
		got := run(t, rule, xs)
		for j, v := range got {
			lo, hi := float32(math.Inf(1)), float32(math.Inf(-1))
			for _, x := range xs[:n-f] {
				lo, hi = min(lo, x[j]), max(hi, x[j])
			}
			if v < lo || v > hi {
				t.Fatalf("%s: coordinate %d = %v outside the honest range [%v, %v]", rule.Name(), j, v, lo, hi)
			}
		}
	}
	far := 0
	for _, v := range run(t, &Mean{}, xs) {
		if math.Abs(float64(v)) > 1e4 {
			far++
		}
	}
	if far < d/2 {
		t.Errorf("mean left the honest range in only %d of %d coordinates", far, d)
	}
}

func TestWeightsSumToOne(t *testing.T) {
	r := rand.New(rand.NewPCG(12, 12))
	for _, n := range []int{1, 2, 5, 8, 33} {
		xs := wideInputs(r, n, 900)
		for _, rule := range allRules(n) {
			run(t, rule, xs)
			w := rule.(Selector).Weights()
			if len(w) != n {
				t.Fatalf("n=%d %s: %d weights", n, rule.Name(), len(w))
			}
			if s := sum(w); math.Abs(s-1) > 1e-12 {
				t.Errorf("n=%d %s: weights sum to %v", n, rule.Name(), s)
			}
			for i, v := range w {
				if v < 0 || v > 1 {
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

// After the first call has sized the scratch, aggregating allocates
// nothing.
func TestNoAllocations(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 13))
	xs := wideInputs(r, 20, 5000)
	dst := make([]float32, 5000)
	for _, rule := range allRules(20) {
		if err := rule.Aggregate(dst, xs); err != nil {
			t.Fatal(err)
		}
		if a := testing.AllocsPerRun(3, func() { _ = rule.Aggregate(dst, xs) }); a != 0 {
			t.Errorf("%s: %v allocations per call", rule.Name(), a)
		}
	}
}
