package aggregate

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// Bucketing on the unit vectors e_0 .. e_6 with s = 3: each output is the
// mean of its bucket, so its nonzero coordinates name the members (1/3, or
// 1 for the last bucket of one); the buckets partition the inputs; and the
// permutation changes from call to call but repeats for the same seed.
func TestBucketing(t *testing.T) {
	const n = 7
	xs := make([][]float32, n)
	for i := range xs {
		xs[i] = make([]float32, n)
		xs[i][i] = 1
	}
	members := func(out [][]float32) [][]int {
		var ms [][]int
		seen := make([]bool, n)
		for b, o := range out {
			var m []int
			for j, v := range o {
				if v != 0 {
					m = append(m, j)
					if seen[j] {
						t.Fatalf("input %d in two buckets", j)
					}
					seen[j] = true
				}
			}
			size := min(3, n-3*b)
			if len(m) != size {
				t.Fatalf("bucket %d has %d members, want %d", b, len(m), size)
			}
			for _, j := range m {
				if o[j] != float32(1/float64(size)) {
					t.Fatalf("bucket %d: coordinate %d = %v, want 1/%d", b, j, o[j], size)
				}
			}
			ms = append(ms, m)
		}
		return ms
	}
	b := &Bucketing{S: 3, Seed: 5}
	out, err := b.Apply(xs)
	if err != nil || len(out) != 3 {
		t.Fatalf("%d outputs, err %v", len(out), err)
	}
	first := members(out)
	// Credit: a bucket's weight is shared equally by its members.
	w := b.Credit([]float64{0.6, 0.3, 0.1})
	for k, m := range first {
		for _, j := range m {
			if want := []float64{0.6, 0.3, 0.1}[k] / float64(len(m)); math.Abs(w[j]-want) > 1e-15 {
				t.Errorf("credit of input %d = %v, want %v", j, w[j], want)
			}
		}
	}
	out, _ = b.Apply(xs)
	second := members(out)
	again := &Bucketing{S: 3, Seed: 5}
	out, _ = again.Apply(xs)
	if !slices.EqualFunc(members(out), first, slices.Equal) {
		t.Error("the same seed gave another permutation")
	}
	if slices.EqualFunc(first, second, slices.Equal) {
		t.Error("two calls gave the same permutation")
	}
	// s >= n: one bucket, the mean.
	out, _ = (&Bucketing{S: 10}).Apply(xs)
	if len(out) != 1 || out[0][3] != float32(1.0/7) {
		t.Errorf("s = 10: %v", out)
	}
}

func TestNNMHandComputed(t *testing.T) {
	// {0, 1, 2, 10}, f = 1: each point's 3 nearest (itself included):
	// 0 → {0, 1, 2}, 1 → {1, 0, 2}, 2 → {2, 1, 0}, 10 → {10, 2, 1}.
	xs := [][]float32{{0}, {1}, {2}, {10}}
	m := &NNM{F: 1}
	out, err := m.Apply(xs)
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []float32{1, 1, 1, float32(13.0 / 3)} {
		if out[i][0] != want {
			t.Errorf("output %d = %v, want %v", i, out[i][0], want)
		}
	}
	// Credit: output 3's weight goes 1/3 each to inputs 3, 2, 1.
	w := m.Credit([]float64{0, 0, 0, 1})
	if want := []float64{0, 1.0 / 3, 1.0 / 3, 1.0 / 3}; !slices.Equal(w, want) {
		t.Errorf("credit %v, want %v", w, want)
	}
	// f = 0 replaces every input by the mean.
	out, _ = (&NNM{}).Apply(xs)
	for i := range out {
		if out[i][0] != 3.25 {
			t.Errorf("f = 0: output %d = %v, want 3.25", i, out[i][0])
		}
	}
}

func TestClipping(t *testing.T) {
	xs := [][]float32{{3, 4}, {6, 8}, {0, 0}, {0.6, 0.8}}
	out, err := (&Clip{C: 5}).Apply(xs)
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range [][]float32{{3, 4}, {3, 4}, {0, 0}, {0.6, 0.8}} {
		if !slices.Equal(out[i], want) {
			t.Errorf("clip 5: output %d = %v, want %v", i, out[i], want)
		}
	}
	if &out[0][0] != &xs[0][0] {
		t.Error("an unclipped input was copied")
	}
	// ARC with f = 1: norms 5, 10, 0, 1; the (n − f) = 3rd smallest is 5.
	a := &AdaptiveClip{F: 1}
	out, err = a.Apply(xs)
	if err != nil || a.Radius() != 5 || !slices.Equal(out[1], []float32{3, 4}) || !slices.Equal(out[0], xs[0]) {
		t.Errorf("arc: radius %v, outputs %v (%v)", a.Radius(), out, err)
	}
	// f = 2: radius 1 clips (3,4) and (6,8) to (0.6, 0.8).
	out, _ = (&AdaptiveClip{F: 2}).Apply(xs)
	for _, i := range []int{0, 1} {
		if math.Abs(float64(out[i][0])-0.6) > 1e-7 || math.Abs(float64(out[i][1])-0.8) > 1e-7 {
			t.Errorf("arc f=2: output %d = %v", i, out[i])
		}
	}
	if w := a.Credit([]float64{0.1, 0.2, 0.3, 0.4}); !slices.Equal(w, []float64{0.1, 0.2, 0.3, 0.4}) {
		t.Errorf("clipping credit %v", w)
	}
}

// ARC clips k = ⌊2·(f/n)·(n − f)⌋ inputs, not f (the ARC paper's
// Algorithm 2). Hand values on the scalars 1..10 (norms 1..10): f = 2
// gives k = ⌊2·0.2·8⌋ = 3, so 8, 9 and 10 are clipped to the fourth
// largest norm, 7; f = 1 gives k = ⌊1.8⌋ = 1 (10 to 9); f = 4 gives
// k = ⌊4.8⌋ = 4 (7..10 to 6). Then, for every n <= 24 and f < n, with
// distinct norms, the number clipped is the paper's k, computed here in
// floating point from its formula.
func TestARCClipsThePapersCount(t *testing.T) {
	ten := scalars(3, 10, 1, 7, 5, 2, 9, 4, 8, 6)
	for _, c := range []struct {
		f      int
		radius float64
	}{{1, 9}, {2, 7}, {4, 6}} {
		a := &AdaptiveClip{F: c.f}
		out, err := a.Apply(ten)
		if err != nil || a.Radius() != c.radius {
			t.Fatalf("f = %d: radius %v (%v), want %v", c.f, a.Radius(), err, c.radius)
		}
		for i, x := range ten {
			if want := min(float64(x[0]), c.radius); float64(out[i][0]) != want {
				t.Errorf("f = %d: input %v -> %v, want %v", c.f, x[0], out[i][0], want)
			}
		}
	}
	for n := 1; n <= 24; n++ {
		xs := make([][]float32, n)
		for i := range xs {
			xs[i] = []float32{float32(i + 1), float32(-i)} // norms increasing in i
		}
		for f := 0; f < n; f++ {
			k := int(math.Floor(2*float64(f)/float64(n)*float64(n-f) + 1e-9))
			out, err := (&AdaptiveClip{F: f}).Apply(xs)
			if err != nil {
				t.Fatal(err)
			}
			clipped := 0
			for i := range xs {
				if !slices.Equal(out[i], xs[i]) {
					clipped++
				}
			}
			if clipped != k {
				t.Errorf("n = %d, f = %d: %d clipped, the paper's ⌊2(f/n)(n − f)⌋ = %d", n, f, clipped, k)
			}
		}
	}
}

// A chain runs its pre-aggregators in order and credits the rule's
// weights back to the original inputs.
func TestChain(t *testing.T) {
	xs := [][]float32{{0}, {1}, {2}, {10}}
	c := &Chain{Pre: []Pre{&NNM{F: 1}}, Rule: &Krum{F: 0}}
	// NNM outputs {1, 1, 1, 13/3}; Krum (f = 0, 2 nearest) picks the first
	// 1 (score 0, lowest index among equals): NNM output 0, whose
	// neighbors are inputs 0, 1, 2.
	got := run(t, c, xs)
	if got[0] != 1 || c.Name() != "nnm+krum" {
		t.Errorf("%s = %v, want 1", c.Name(), got[0])
	}
	if w, want := c.Weights(), []float64{1.0 / 3, 1.0 / 3, 1.0 / 3, 0}; !slices.Equal(w, want) {
		t.Errorf("weights %v, want %v", w, want)
	}
	// Around an own vector with a centered rule.
	cc := &Chain{Pre: []Pre{&Clip{C: 5}}, Rule: &CenteredClipping{Tau: 100, Iterations: 1}}
	dst := make([]float32, 1)
	if err := cc.AggregateAround(dst, []float32{0}, xs); err != nil || dst[0] != 2 {
		t.Errorf("clip+centered_clipping around 0: %v (%v), want (0+1+2+5)/4 = 2", dst[0], err)
	}
	// Through NewWith, with bucketing: the weights still sum to 1.
	r, _ := NewWith("bucketing+nnm+trimmed_mean", Params{F: 1, Bucket: 2, Seed: 3})
	run(t, r, wideInputs(rand.New(rand.NewPCG(1, 1)), 9, 50))
	if s := sum(r.(Selector).Weights()); math.Abs(s-1) > 1e-12 {
		t.Errorf("chain weights sum to %v", s)
	}
}
