package privacy

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/trellis-fl/trellis/vec"
)

// ksStatistic is the Kolmogorov–Smirnov distance sup |F_n − F| between the
// empirical law of xs and the CDF cdf.
func ksStatistic(xs []float64, cdf func(float64) float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	n := float64(len(s))
	d := 0.0
	for i, x := range s {
		f := cdf(x)
		d = max(d, math.Abs(f-float64(i)/n), math.Abs(float64(i+1)/n-f))
	}
	return d
}

func normalCDF(x float64) float64 { return 0.5 * math.Erfc(-x/math.Sqrt2) }

func laplaceCDF(b float64) func(float64) float64 {
	return func(x float64) float64 {
		if x < 0 {
			return 0.5 * math.Exp(x/b)
		}
		return 1 - 0.5*math.Exp(-x/b)
	}
}

// ksCritical001 is the asymptotic KS critical value at level 0.001,
// 1.949/√n (Smirnov's limit law); the tests use fixed seeds, so they are
// deterministic, and the level only says how unusual a failure would be.
func ksCritical001(n int) float64 { return 1.949 / math.Sqrt(float64(n)) }

func moments(xs []float64) (mean, variance float64) {
	for _, x := range xs {
		mean += x
	}
	mean /= float64(len(xs))
	for _, x := range xs {
		variance += (x - mean) * (x - mean)
	}
	return mean, variance / float64(len(xs)-1)
}

// noiseOf releases a copy of v and returns release − clip(v).
func noiseOf(t *testing.T, m Mechanism, v []float32, src Source, clip func([]float32)) ([]float64, Released) {
	t.Helper()
	out := slices.Clone(v)
	rel, err := m.Release(out, src)
	if err != nil {
		t.Fatal(err)
	}
	ref := slices.Clone(v)
	clip(ref)
	d := make([]float64, len(v))
	for i := range d {
		d[i] = float64(out[i]) - float64(ref[i])
	}
	return d, rel
}

func TestGaussianNoiseLaw(t *testing.T) {
	const n = 50000
	g, _ := NewGaussian(2, 0.75) // σ = 1.5
	v := make([]float32, n)
	r := rand.New(rand.NewPCG(3, 4))
	for i := range v {
		v[i] = float32(r.NormFloat64())
	}
	d, rel := noiseOf(t, g, v, NewSeededSource(11, 12), func(x []float32) { ClipL2(x, 2) })
	if !rel.Clipped || rel.Scale != 1.5 || math.Abs(rel.Norm-vec.Norm(v)) > 1e-9 {
		t.Errorf("released %+v", rel)
	}
	mean, variance := moments(d)
	// The mean of n N(0, 2.25) draws has sd 1.5/√n ≈ 0.0067; its variance
	// has sd ≈ 2.25·√(2/n) ≈ 0.014. Allow 5 sd.
	if math.Abs(mean) > 5*1.5/math.Sqrt(n) || math.Abs(variance-2.25) > 5*2.25*math.Sqrt(2.0/n) {
		t.Errorf("noise mean %v, variance %v; want 0, 2.25", mean, variance)
	}
	for i := range d {
		d[i] /= 1.5
	}
	// The float32 rounding of v + noise perturbs each draw by ≤ 2⁻²⁴·|v|,
	// far below the KS resolution.
	if D := ksStatistic(d, normalCDF); D > ksCritical001(n) {
		t.Errorf("KS distance to N(0, 1): %v > %v", D, ksCritical001(n))
	}
	if ev, ok := rel.Event.(GaussianEvent); !ok || ev.Multiplier != 0.75 || ev.Sampling.Rate() != 1 {
		t.Errorf("event %+v", rel.Event)
	}
}

func TestLaplaceNoiseLaw(t *testing.T) {
	const n = 50000
	l, _ := NewLaplace(3, 0.5) // b = 6
	v := make([]float32, n)
	d, rel := noiseOf(t, l, v, NewSeededSource(5, 6), func(x []float32) { ClipL1(x, 3) })
	if rel.Clipped || rel.Scale != 6 {
		t.Errorf("released %+v", rel)
	}
	mean, variance := moments(d)
	// Laplace(b): variance 2b² = 72; fourth central moment 24b⁴, so the
	// sample variance has sd ≈ √(20b⁴/n) ≈ 0.72.
	if math.Abs(mean) > 5*math.Sqrt(72.0/n) || math.Abs(variance-72) > 5*math.Sqrt(20*1296.0/n) {
		t.Errorf("noise mean %v, variance %v; want 0, 72", mean, variance)
	}
	if D := ksStatistic(d, laplaceCDF(6)); D > ksCritical001(n) {
		t.Errorf("KS distance to Laplace(6): %v > %v", D, ksCritical001(n))
	}
	// The KS test can tell laws apart at this n: the same draws are far
	// from a Gaussian of the same variance.
	if D := ksStatistic(d, func(x float64) float64 { return normalCDF(x / math.Sqrt(72)) }); D < 2*ksCritical001(n) {
		t.Errorf("KS cannot tell Laplace from Gaussian: D = %v", D)
	}
}

// TestCryptoSourceLaw checks the crypto/rand source's laws. Its draws are
// not reproducible, so the thresholds sit at ≈ 7 standard deviations and
// the KS level at about 1e-40: a failure means a broken sampler.
func TestCryptoSourceLaw(t *testing.T) {
	const n = 20000
	src := NewCryptoSource()
	gs, es := make([]float64, n), make([]float64, n)
	for i := range gs {
		gs[i] = src.NormFloat64()
		es[i] = src.ExpFloat64() - src.ExpFloat64()
	}
	m, v := moments(gs)
	if math.Abs(m) > 7/math.Sqrt(n) || math.Abs(v-1) > 7*math.Sqrt(2.0/n) {
		t.Errorf("crypto normal: mean %v, variance %v", m, v)
	}
	crit := 7 / math.Sqrt(float64(n))
	if D := ksStatistic(gs, normalCDF); D > crit {
		t.Errorf("crypto normal: KS %v > %v", D, crit)
	}
	if D := ksStatistic(es, laplaceCDF(1)); D > crit {
		t.Errorf("crypto Laplace: KS %v > %v", D, crit)
	}
	// Two crypto sources do not repeat each other.
	a, b := NewCryptoSource(), NewCryptoSource()
	if a.NormFloat64() == b.NormFloat64() && a.NormFloat64() == b.NormFloat64() {
		t.Error("two crypto sources drew the same values")
	}
}

func TestSeededSourceIsReproducible(t *testing.T) {
	g, _ := NewGaussian(1, 1)
	x, y := make([]float32, 100), make([]float32, 100)
	g.Release(x, NewSeededSource(1, 2))
	g.Release(y, NewSeededSource(1, 2))
	if !slices.Equal(x, y) {
		t.Error("same seed, different noise")
	}
}

func TestClippingExact(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 9))
	for trial := range 500 {
		n := 1 + r.IntN(3000)
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(r.NormFloat64() * math.Pow(10, float64(r.IntN(8)-4)))
		}
		c := math.Pow(10, r.Float64()*6-3)
		orig := slices.Clone(v)
		for _, k := range []struct {
			clip func([]float32, float64) bool
			norm func([]float32) float64
		}{{ClipL2, vec.Norm}, {ClipL1, vec.SumAbs}} {
			copy(v, orig)
			before := k.norm(v)
			did := k.clip(v, c)
			after := k.norm(v)
			if did != (before > c) {
				t.Fatalf("trial %d: clipped = %v with norm %v, bound %v", trial, did, before, c)
			}
			if !did {
				if !slices.Equal(v, orig) {
					t.Fatalf("trial %d: a vector within the bound changed", trial)
				}
				continue
			}
			// Exactly within the bound, and on it up to float32 rounding.
			if after > c || after < c*(1-1e-5) {
				t.Fatalf("trial %d: norm %v after clipping to %v", trial, after, c)
			}
			// Same direction: every coordinate scaled by one factor.
			f := float64(c / before)
			for i := range v {
				if math.Abs(float64(v[i])-f*float64(orig[i])) > 1e-5*math.Abs(f*float64(orig[i]))+1e-30 {
					t.Fatalf("trial %d: coordinate %d is %v, want %v", trial, i, v[i], f*float64(orig[i]))
				}
			}
		}
	}
}

func TestMechanismErrors(t *testing.T) {
	for _, p := range [][2]float64{{0, 1}, {1, 0}, {-1, 1}, {math.Inf(1), 1}, {1, math.NaN()}} {
		if _, err := NewGaussian(p[0], p[1]); err == nil {
			t.Errorf("NewGaussian(%v, %v) accepted", p[0], p[1])
		}
		if _, err := NewLaplace(p[0], p[1]); err == nil {
			t.Errorf("NewLaplace(%v, %v) accepted", p[0], p[1])
		}
	}
	g, _ := NewGaussian(1, 1)
	v := []float32{1, float32(math.NaN()), 2}
	if _, err := g.Release(v, NewSeededSource(1, 1)); err == nil || v[0] != 1 {
		t.Errorf("non-finite vector: err %v, vector %v", err, v)
	}
}

// TestReleaseDoesNotAllocate: a node releases every round; the mechanism
// must not add garbage to its steady state.
func TestReleaseDoesNotAllocate(t *testing.T) {
	g, _ := NewGaussian(1, 1)
	l, _ := NewLaplace(1, 1)
	v := make([]float32, 1000)
	src := NewSeededSource(1, 2)
	for _, m := range []Mechanism{g, l} {
		if a := testing.AllocsPerRun(20, func() { _, _ = m.Release(v, src) }); a != 0 {
			t.Errorf("%T.Release: %v allocations", m, a)
		}
	}
}

// TestNodeLevelRoundsDoNotAllocate is the node layer's round: release,
// compose, convert — with the σ that `trellis privacy --target-eps 1
// --steps 100` gives, so 100 rounds end at ε ≤ 1.
func TestNodeLevelRoundsDoNotAllocate(t *testing.T) {
	z, err := Calibrate(1, 1e-5, 100, Unamplified(), nil)
	if err != nil {
		t.Fatal(err)
	}
	g, _ := NewGaussian(1, z)
	acct, _ := NewAccountant(nil)
	src := NewSeededSource(3, 3)
	update := make([]float32, 4096)
	var eps float64
	allocs := testing.AllocsPerRun(99, func() {
		for i := range update {
			update[i] = 0.01
		}
		rel, err := g.Release(update, src)
		if err != nil {
			t.Fatal(err)
		}
		if err := acct.Compose(rel.Event, 1); err != nil {
			t.Fatal(err)
		}
		eps, _, _ = acct.Epsilon(1e-5)
	})
	// AllocsPerRun runs the function once more than asked, to warm up.
	if allocs != 0 || acct.Steps() != 100 || eps > 1 || eps < 0.999 {
		t.Errorf("%v allocations per round; after %d rounds ε = %v (σ = %v)", allocs, acct.Steps(), eps, z)
	}
}
