package attack

import (
	"math"
	"slices"
	"testing"
)

// The noise Gaussian adds has mean 0, standard deviation σ and a normal
// shape, over 100k coordinates: each statistic within 5 standard errors.
func TestGaussianNoise(t *testing.T) {
	const d, sigma = 100000, 3.0
	b := honestVector(d)
	for _, replace := range []bool{false, true} {
		dst := make([]float32, d)
		if err := (Gaussian{Sigma: sigma, Replace: replace}).Craft(dst, nil, b, 0, 1, stream(7)); err != nil {
			t.Fatal(err)
		}
		var s, ss float64
		within1 := 0
		for i, v := range dst {
			z := float64(v)
			if !replace {
				z -= float64(b[i])
			}
			s += z
			ss += z * z
			if math.Abs(z) < sigma {
				within1++
			}
		}
		mean := s / d
		std := math.Sqrt(ss/d - mean*mean)
		if se := sigma / math.Sqrt(d); math.Abs(mean) > 5*se {
			t.Errorf("replace=%v: noise mean %v, want 0 ± %v", replace, mean, 5*se)
		}
		if se := sigma / math.Sqrt(2*d); math.Abs(std-sigma) > 5*se {
			t.Errorf("replace=%v: noise std %v, want %v ± %v", replace, std, sigma, 5*se)
		}
		// P(|Z| < 1) = erf(1/√2) for a normal.
		p, want := float64(within1)/d, math.Erf(1/math.Sqrt2)
		if se := math.Sqrt(want * (1 - want) / d); math.Abs(p-want) > 5*se {
			t.Errorf("replace=%v: %v of the noise within 1σ, want %v ± %v", replace, p, want, 5*se)
		}
	}
}

// The same stream gives the same vector, bit for bit; another stream
// another vector.
func TestGaussianDeterminism(t *testing.T) {
	b := honestVector(5000)
	g := Gaussian{Sigma: 10}
	x, y, z := make([]float32, len(b)), make([]float32, len(b)), make([]float32, len(b))
	for _, c := range []struct {
		dst  []float32
		seed uint64
	}{{x, 1}, {y, 1}, {z, 2}} {
		if err := g.Craft(c.dst, nil, b, 0, 1, stream(c.seed)); err != nil {
			t.Fatal(err)
		}
	}
	if !slices.Equal(x, y) {
		t.Error("same seed, different vectors")
	}
	if slices.Equal(x, z) {
		t.Error("different seeds, same vector")
	}
	// The receiver does not change what is sent.
	if err := g.Craft(z, nil, b, 0, 5, stream(1)); err != nil || !slices.Equal(x, z) {
		t.Errorf("another receiver changed the vector (err %v)", err)
	}
	if err := g.Craft(x, nil, b, 0, 1, nil); err == nil {
		t.Error("nil rng accepted")
	}
	if err := (Gaussian{}).Craft(x, nil, b, 0, 1, stream(1)); err == nil {
		t.Error("Gaussian{} with sigma 0 crafted a vector")
	}
}
