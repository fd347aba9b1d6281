package attack

import (
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	"github.com/trellis-fl/trellis/nn"
)

// Random sends a model drawn as nn initializes one, from the seed it takes
// from rng; each draw is new, and every layer's weights and biases lie in
// ±1/sqrt(fan_in) and fill that range.
func TestRandomModel(t *testing.T) {
	a, err := New("random", Params{Model: &mlp})
	if err != nil {
		t.Fatal(err)
	}
	n := a.(*Random).NumParams()
	if want := 784*256 + 256 + 256*128 + 128 + 128*10 + 10; n != want {
		t.Fatalf("NumParams = %d, want %d", n, want)
	}
	b := honestVector(n)
	rng := stream(3)
	x, y := make([]float32, n), make([]float32, n)
	if err := a.Craft(x, nil, b, 0, 1, rng); err != nil {
		t.Fatal(err)
	}
	if err := a.Craft(y, nil, b, 0, 1, rng); err != nil {
		t.Fatal(err)
	}
	if slices.Equal(x, y) {
		t.Error("two draws gave the same model")
	}

	// The same as building the model from the seed the attack drew.
	m, err := nn.Build(mlp, stream(3).Uint64(), nn.Options{Batch: 1})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(x, m.Params()) {
		t.Error("crafted vector is not nn's initialization for the drawn seed")
	}

	// Layer by layer (PyTorch's layout: weight [out, in] then bias [out]).
	off := 0
	in := 784
	for _, out := range []int{256, 128, 10} {
		bound := 1 / math.Sqrt(float64(in))
		for part, size := range []int{out * in, out} {
			seg := x[off : off+size]
			var hi float64
			var s float64
			for _, v := range seg {
				hi = max(hi, math.Abs(float64(v)))
				s += float64(v)
			}
			if hi > bound*(1+1e-6) {
				t.Errorf("layer %d→%d part %d: |value| up to %v beyond 1/sqrt(%d) = %v", in, out, part, hi, in, bound)
			}
			if size >= 100 && hi < 0.9*bound {
				t.Errorf("layer %d→%d part %d: |value| only up to %v, want near %v", in, out, part, hi, bound)
			}
			// Uniform on ±bound: mean 0, standard error bound/sqrt(3·size).
			if se := bound / math.Sqrt(3*float64(size)); math.Abs(s/float64(size)) > 5*se {
				t.Errorf("layer %d→%d part %d: mean %v, want 0 ± %v", in, out, part, s/float64(size), 5*se)
			}
			off += size
		}
		in = out
	}
	if off != n {
		t.Errorf("layers cover %d of %d parameters", off, n)
	}
}

// Random is safe for concurrent use: each goroutine gets the model of its
// own seed.
func TestRandomConcurrent(t *testing.T) {
	spec := nn.Spec{Kind: "mlp", Input: []int{20}, Classes: 3, Hidden: []int{16}}
	a, err := NewRandom(spec)
	if err != nil {
		t.Fatal(err)
	}
	n := a.NumParams()
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			dst := make([]float32, n)
			for i := range 20 {
				seed := uint64(100*g + i)
				if err := a.Craft(dst, nil, make([]float32, n), g, 0, stream(seed)); err != nil {
					t.Error(err)
					return
				}
				m, _ := nn.Build(spec, stream(seed).Uint64(), nn.Options{Batch: 1})
				if !slices.Equal(dst, m.Params()) {
					t.Errorf("goroutine %d draw %d: wrong model", g, i)
				}
			}
		})
	}
	wg.Wait()
	if err := a.Craft(make([]float32, n), nil, make([]float32, n), 0, 0, nil); err == nil {
		t.Error("nil rng accepted")
	}
	var zero Random
	if err := zero.Craft(nil, nil, nil, 0, 0, rand.New(rand.NewPCG(1, 1))); err == nil {
		t.Error("zero Random crafted a vector")
	}
}
