package privacy

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestZigguratTables: the strips of Marsaglia and Tsang's construction all
// have area v, and the top strip ends at x = 0 (x_1 ≈ 0.2723 below it).
func TestZigguratTables(t *testing.T) {
	if r := zigR; zig.fn[127] != math.Exp(-0.5*r*r) || zig.kn[1] != 0 {
		t.Fatal("table ends")
	}
	// Strip i ≥ 1 spans heights f(x_{i+1})..f(x_i) over width x_{i+1}
	// (x_i = wn[i]·2³¹); its rectangle area is x_{i+1}·(f(x_i) − f(x_{i+1})).
	for i := 1; i < 127; i++ {
		xi1 := zig.wn[i+1] * (1 << 31)
		area := xi1 * (zig.fn[i] - zig.fn[i+1])
		if math.Abs(area-zigV) > 1e-9 {
			t.Fatalf("strip %d: area %v, want %v", i, area, zigV)
		}
	}
	if x1 := zig.wn[1] * (1 << 31); math.Abs(x1-0.2723) > 1e-3 {
		t.Errorf("x_1 = %v", x1)
	}
}

// TestStreamNormalLaw draws 10⁶ normals from a fixed seed, by NormFloat64
// and by AddNormal, and checks them against Φ with the KS test, the mass
// beyond the base strip r (the tail algorithm) and the moments.
func TestStreamNormalLaw(t *testing.T) {
	n := 1_000_000
	if testing.Short() {
		n = 200_000
	}
	s := NewSeededSource(21, 22)
	one := make([]float64, n)
	for i := range one {
		one[i] = s.NormFloat64()
	}
	bulk32 := make([]float32, n)
	s.AddNormal(bulk32, 1)
	bulk := make([]float64, n)
	for i, v := range bulk32 {
		bulk[i] = float64(v)
	}
	for name, xs := range map[string][]float64{"NormFloat64": one, "AddNormal": bulk} {
		if D := ksStatistic(xs, normalCDF); D > ksCritical001(n) {
			t.Errorf("%s: KS %v > %v", name, D, ksCritical001(n))
		}
		var tail, m3, m4 float64
		for _, x := range xs {
			if math.Abs(x) > zigR {
				tail++
			}
			m3 += x * x * x
			m4 += x * x * x * x
		}
		// P(|X| > r) = erfc(r/√2) ≈ 5.76e-4.
		p := math.Erfc(zigR / math.Sqrt2)
		if math.Abs(tail-p*float64(n)) > 5*math.Sqrt(p*float64(n)) {
			t.Errorf("%s: %v draws beyond r, want %.0f", name, tail, p*float64(n))
		}
		mean, v := moments(xs)
		fn := float64(n)
		if math.Abs(mean) > 5/math.Sqrt(fn) || math.Abs(v-1) > 5*math.Sqrt(2/fn) ||
			math.Abs(m3/fn) > 5*math.Sqrt(15/fn) || math.Abs(m4/fn-3) > 5*math.Sqrt(96/fn) {
			t.Errorf("%s: mean %v, variance %v, skew %v, kurtosis %v", name, mean, v, m3/fn, m4/fn)
		}
	}
}

// TestStreamExpLaw: the exponential draws (Laplace noise, Poisson gaps).
func TestStreamExpLaw(t *testing.T) {
	const n = 200_000
	s := NewSeededSource(31, 32)
	xs := make([]float64, n)
	for i := range xs {
		xs[i] = s.ExpFloat64()
	}
	if D := ksStatistic(xs, func(x float64) float64 { return -math.Expm1(-x) }); D > ksCritical001(n) {
		t.Errorf("KS to Exp(1): %v", D)
	}
}

// TestStreamDrivesRand: a Stream is a rand.Source too, and says whether
// it is private.
func TestStreamDrivesRand(t *testing.T) {
	if NewSeededSource(1, 1).Private() || !NewCryptoSource().Private() {
		t.Error("Private() wrong")
	}
	r := rand.New(NewSeededSource(1, 1))
	if v := r.Float64(); v < 0 || v >= 1 {
		t.Error(v)
	}
}

func BenchmarkAddNormal(b *testing.B) {
	v := make([]float32, 1<<16)
	for _, c := range []struct {
		name string
		s    *Stream
	}{{"seeded", NewSeededSource(1, 2)}, {"crypto", NewCryptoSource()}} {
		b.Run(c.name, func(b *testing.B) {
			for range b.N {
				c.s.AddNormal(v, 1)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(v)), "ns/normal")
		})
	}
	b.Run("math-rand-NormFloat64", func(b *testing.B) {
		r := rand.New(rand.NewPCG(1, 2))
		for range b.N {
			for i := range v {
				v[i] += float32(r.NormFloat64())
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(v)), "ns/normal")
	})
}

func TestAbs32(t *testing.T) {
	for _, j := range []int32{0, 1, -1, 5, -7, math.MaxInt32, math.MinInt32} {
		want := uint32(j)
		if j < 0 {
			want = uint32(-int64(j))
		}
		if abs32(j) != want {
			t.Errorf("abs32(%d) = %d", j, abs32(j))
		}
	}
}
