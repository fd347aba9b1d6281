package privacy

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestGaussTables32: the float32 ziggurat's strips (width x_i = w_i·2²³,
// heights f(x_i)..f(x_{i−1})) all have area v to float32 precision, the top
// strip closes at the density's peak, the acceptance bound is x_{i−1}/x_i
// in units of 2⁻²³, and the top strip is all wedge.
func TestGaussTables32(t *testing.T) {
	const scale = 1 << magBits
	f := func(x float64) float64 { return math.Exp(-0.5 * x * x) }
	if zig32.k[1] != 0 {
		t.Fatal("top strip has a rectangle")
	}
	if top := gaussX[1] * (1 - f(gaussX[1])); math.Abs(top-gaussV) > 1e-12 {
		t.Errorf("top strip area %v, want v = %v (r does not close the ziggurat)", top, gaussV)
	}
	for i := 1; i < 256; i++ {
		wi := float64(zig32.w[i]) * scale
		if area := wi * (f(gaussX[i-1]) - f(gaussX[i])); math.Abs(area/gaussV-1) > 2e-7 {
			t.Errorf("strip %d: area %v, want %v", i, area, gaussV)
		}
		if k := float64(zig32.k[i]); math.Abs(k-gaussX[i-1]/gaussX[i]*scale) > 1 || zig32.k[i] >= scale {
			t.Errorf("strip %d: k = %v, want %v", i, k, gaussX[i-1]/gaussX[i]*scale)
		}
	}
	// Base strip: rectangle r·f(r) plus the tail, width q with q·f(r) = v.
	q := float64(zig32.w[0]) * scale
	if math.Abs(q*f(gaussR)/gaussV-1) > 2e-7 {
		t.Errorf("base strip width %v", q)
	}
	if k := float64(zig32.k[0]); math.Abs(k-gaussR/q*scale) > 1 {
		t.Errorf("base strip k = %v", k)
	}
	// The wedges' squeeze: chord and tangents bound the density on a
	// fine grid of every strip with a known curvature.
	for i := 1; i < 256; i++ {
		w := &wedges[i]
		if w.convex+w.concave == 0 {
			continue
		}
		for j := 0; j <= 100; j++ {
			x := w.a + (w.b-w.a)*float64(j)/100
			chord := w.fa + w.chord*(x-w.a)
			ta, tb := w.fa*(1-w.a*(x-w.a)), w.fb*(1-w.b*(x-w.b))
			lo, hi := max(ta, tb), chord
			if w.concave == 1 {
				lo, hi = chord, min(ta, tb)
			}
			if fx := f(x); fx < lo-1e-15 || fx > hi+1e-15 {
				t.Fatalf("strip %d at %v: f = %v outside the squeeze [%v, %v]", i, x, fx, lo, hi)
			}
		}
	}
}

// edgeWords are words at the ziggurat's boundaries: every strip with m at
// 0, k_i − 1, k_i, 2²³ − 1, both signs.
func edgeWords() []uint32 {
	var w []uint32
	for i := range uint32(256) {
		for _, m := range []uint32{0, max(zig32.k[i], 1) - 1, zig32.k[i], magMask} {
			for _, s := range []uint32{0, 1 << 31} {
				w = append(w, s|m<<8|i)
			}
		}
	}
	return w
}

// TestGaussKernelsMatchPortable: each assembly kernel computes what the
// portable Go kernels compute, bit for bit: the xoshiro words and lane
// states, and the ziggurat's outputs and rejected elements on random words,
// on the edge words, and on dst values that include ±0, subnormals and
// large values, at several scales.
func TestGaussKernelsMatchPortable(t *testing.T) {
	if len(gaussKernels) == 1 {
		t.Skip("no assembly kernel on this machine")
	}
	r := rand.New(rand.NewPCG(5, 6))
	for _, k := range gaussKernels[1:] {
		t.Run(k.name, func(t *testing.T) {
			for _, n := range []int{16, 32, 48, 1024, gaussChunk} {
				var a, b lanes
				a.seed(uint64(n))
				b = a
				wa, wb := make([]uint32, n), make([]uint32, n)
				for range 3 { // the state carries over between calls
					gaussFillGo(wa, &a)
					k.fill(wb, &b)
					if !slices.Equal(wa, wb) || a != b {
						t.Fatalf("fill n = %d: words or state differ", n)
					}
				}
			}
			words := edgeWords()
			for len(words)%16 != 0 || len(words) < 4096 {
				words = append(words, r.Uint32())
			}
			n := len(words)
			special := []float32{0, float32(math.Copysign(0, -1)), 1e-45, -1e-40, 3e38, -2.5, 1}
			for _, c := range []struct{ scale, sd float32 }{{1, 1}, {1.0 / 32, 0.034375}, {0.7, -3}, {1, 0}} {
				dst := make([]float32, n)
				for i := range dst {
					if i%5 == 0 {
						dst[i] = special[i/5%len(special)]
					} else {
						dst[i] = float32(r.NormFloat64())
					}
				}
				da, db := slices.Clone(dst), slices.Clone(dst)
				ia, ib := make([]uint32, n+16), make([]uint32, n+16)
				na := gaussZigGo(da, words, c.scale, c.sd, ia)
				nb := k.zig(db, words, c.scale, c.sd, ib)
				if na != nb || !slices.Equal(ia[:na], ib[:nb]) {
					t.Fatalf("scale %v sd %v: rejected elements differ (%d and %d of them)", c.scale, c.sd, na, nb)
				}
				for i := range da {
					if math.Float32bits(da[i]) != math.Float32bits(db[i]) {
						t.Fatalf("scale %v sd %v: element %d (word %#x, dst %v): portable %v, %s %v",
							c.scale, c.sd, i, words[i], dst[i], da[i], k.name, db[i])
					}
				}
			}
		})
	}
}

// TestScaleAddNormalSameOnEveryKernel: a seeded Stream gives the same
// noise, bit for bit, whichever kernel draws it, over lengths that are and
// are not multiples of 16 and of the chunk, and over sequences of calls.
func TestScaleAddNormalSameOnEveryKernel(t *testing.T) {
	lengths := []int{1, 15, 16, 17, 100, gaussChunk - 1, gaussChunk, gaussChunk + 1, 3*gaussChunk + 5, 100_003}
	run := func() []float32 {
		s := NewSeededSource(7, 8)
		var out []float32
		for j, n := range lengths {
			v := make([]float32, n)
			for i := range v {
				v[i] = float32(i%7) - 3
			}
			if j%2 == 0 {
				s.AddNormal(v, 0.5)
			} else {
				s.ScaleAddNormal(v, 1.0/32, 1.1/32)
			}
			out = append(out, v...)
		}
		return append(out, float32(s.NormFloat64())) // the scalar stream after
	}
	defer UseNoiseKernel(gaussUse.Load().name)
	var ref []float32
	for _, name := range NoiseKernels() {
		if _, err := UseNoiseKernel(name); err != nil {
			t.Fatal(err)
		}
		got := run()
		if ref == nil {
			ref = got
			continue
		}
		for i := range ref {
			if math.Float32bits(ref[i]) != math.Float32bits(got[i]) {
				t.Fatalf("kernel %s: element %d is %v, portable %v", name, i, got[i], ref[i])
			}
		}
	}
	if _, err := UseNoiseKernel("sse9"); err == nil {
		t.Error("an unknown kernel was accepted")
	}
}

// TestScaleAddNormalArithmetic: ScaleAddNormal is dst·scale plus
// sd times the noise AddNormal adds, and AddNormal leaves the scalar
// ScaleAddNormal and AddNormal on the same seed draw the same normals.
func TestScaleAddNormalArithmetic(t *testing.T) {
	const n = 5000
	a, b := NewSeededSource(1, 2), NewSeededSource(1, 2)
	z := make([]float32, n)
	a.AddNormal(z, 1)
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(i) * 0.01
	}
	w := slices.Clone(v)
	b.ScaleAddNormal(w, 0.5, 2)
	for i := range v {
		if want := float32(v[i]*0.5) + float32(2*z[i]); w[i] != want {
			t.Fatalf("element %d: %v, want %v", i, w[i], want)
		}
	}
}

// lawLevel is how often gaussLaw may reject a correct sampler.
type lawLevel struct {
	sigmas float64 // moment and tail-count bounds, in standard deviations
	ks     float64 // KS critical value times √n
	ad     float64 // Anderson–Darling critical value (case 0)
}

var (
	// fixedSeed: 1 % levels. The draws are fixed by the seed, so the
	// test is deterministic: it passes or fails the same on every run.
	fixedSeed = lawLevel{sigmas: 5, ks: 1.949, ad: 3.857}
	// unreproducible: the crypto source draws afresh on every run, so a 1 %
	// level would fail one CI run in a hundred on a correct sampler (CI
	// did: A² = 3.872). Each bound here is at about 10⁻⁶: KS
	// √(ln(2/α)/2) = 2.69 at α = 10⁻⁶; A²'s upper tail is ≈ √3·erfc(√z)
	// (its largest weight is χ²₁/2, the rest telescope to √3), 10⁻⁶ at
	// z = 12.5; moments and counts at 6σ (2·10⁻⁹ for a normal). A broken
	// sampler still fails: the seeded run has the 1 % power, and the two
	// share the transform.
	unreproducible = lawLevel{sigmas: 6, ks: 2.69, ad: 12.5}
)

// gaussLaw checks n draws of a standard normal: moments, Kolmogorov–Smirnov
// and Anderson–Darling against Φ, and the mass beyond 3σ and beyond the
// base strip's edge r (the tail algorithm), at the given level.
func gaussLaw(t *testing.T, name string, xs []float64, lv lawLevel) {
	t.Helper()
	n := len(xs)
	fn := float64(n)
	mean, v := moments(xs)
	var m3, m4 float64
	for _, x := range xs {
		m3 += x * x * x
		m4 += x * x * x * x
	}
	sd := lv.sigmas
	if math.Abs(mean) > sd/math.Sqrt(fn) || math.Abs(v-1) > sd*math.Sqrt(2/fn) ||
		math.Abs(m3/fn) > sd*math.Sqrt(15/fn) || math.Abs(m4/fn-3) > sd*math.Sqrt(96/fn) {
		t.Errorf("%s: mean %v, variance %v, skewness %v, kurtosis %v", name, mean, v, m3/fn, m4/fn)
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	var d, a2 float64
	for i, x := range s {
		f := normalCDF(x)
		d = max(d, math.Abs(f-float64(i)/fn), math.Abs(float64(i+1)/fn-f))
		// A² = −n − (1/n) Σ (2i−1)[ln F(x_(i)) + ln(1 − F(x_(n+1−i)))],
		// both logs from erfc so that the tails keep their precision.
		lo := math.Log(0.5 * math.Erfc(-x/math.Sqrt2))
		hi := math.Log(0.5 * math.Erfc(s[n-1-i]/math.Sqrt2))
		a2 += float64(2*i+1) * (lo + hi)
	}
	a2 = -fn - a2/fn
	if crit := lv.ks / math.Sqrt(fn); d > crit {
		t.Errorf("%s: KS %v > %v", name, d, crit)
	}
	// Anderson–Darling, parameters known (case 0): 3.857 at level 1 %
	// (Stephens 1974).
	if a2 > lv.ad {
		t.Errorf("%s: Anderson–Darling A² = %v > %v", name, a2, lv.ad)
	}
	for _, c := range []float64{3, gaussR} {
		var k float64
		for _, x := range xs {
			if math.Abs(x) > c {
				k++
			}
		}
		p := math.Erfc(c / math.Sqrt2)
		if math.Abs(k-p*fn) > lv.sigmas*math.Sqrt(p*fn) {
			t.Errorf("%s: %v draws beyond %v, want %.0f", name, k, c, p*fn)
		}
	}
	t.Logf("%s: n %d, mean %.2e, variance %.5f, KS %.2e, A² %.3f", name, n, mean, v, d, a2)
}

// TestBulkNormalLaw: AddNormal's draws, seeded and crypto, against N(0, 1)
// (the kernels draw the same noise, so the law holds for every kernel).
func TestBulkNormalLaw(t *testing.T) {
	n := 4_000_000
	if testing.Short() {
		n = 500_000
	}
	for _, c := range []struct {
		name string
		s    *Stream
		lv   lawLevel
	}{{"seeded", NewSeededSource(41, 42), fixedSeed}, {"crypto", NewCryptoSource(), unreproducible}} {
		v := make([]float32, n)
		// Two calls of odd lengths: chunk and block boundaries inside.
		c.s.AddNormal(v[:n/3+1], 1)
		c.s.AddNormal(v[n/3+1:], 1)
		xs := make([]float64, n)
		for i, x := range v {
			xs[i] = float64(x)
		}
		gaussLaw(t, c.name, xs, c.lv)
	}
}

// TestBulkNormalTailsAndBins: 10⁸ seeded draws (10⁷ under -short) binned
// over [−5, 5] in steps of 0.01 plus the two tails, against Φ by χ² — a
// strip with a wrong width or wedge test would shift the mass of its bins
// — and the count beyond 5σ (5.7·10⁻⁷ of the draws) against its Poisson
// law.
func TestBulkNormalTailsAndBins(t *testing.T) {
	total := 100_000_000
	if testing.Short() {
		total = 10_000_000
	}
	const bins = 1000
	var count [bins + 2]float64
	s := NewSeededSource(51, 52)
	v := make([]float32, 1<<20)
	for done := 0; done < total; done += len(v) {
		clear(v)
		s.AddNormal(v, 1)
		for _, x := range v {
			switch b := math.Floor((float64(x) + 5) * 100); {
			case b < 0:
				count[0]++
			case b >= bins:
				count[bins+1]++
			default:
				count[int(b)+1]++
			}
		}
	}
	n := float64(total/len(v)*len(v) + min(total%len(v), 1)*len(v))
	var chi2 float64
	for b := range count {
		lo, hi := math.Inf(-1), math.Inf(1)
		if b > 0 {
			lo = -5 + float64(b-1)*0.01
		}
		if b <= bins {
			hi = -5 + float64(b)*0.01
		}
		e := n * (normalCDF(hi) - normalCDF(lo))
		chi2 += (count[b] - e) * (count[b] - e) / e
	}
	// Wilson–Hilferty: the χ² quantile at 1 − 10⁻⁴ for k degrees of freedom.
	k := float64(len(count) - 1)
	crit := k * math.Pow(1-2/(9*k)+3.719*math.Sqrt(2/(9*k)), 3)
	if chi2 > crit {
		t.Errorf("χ² over %d bins = %.1f > %.1f", len(count), chi2, crit)
	}
	tail := count[0] + count[bins+1]
	p := math.Erfc(5 / math.Sqrt2)
	if e := p * n; math.Abs(tail-e) > 4.5*math.Sqrt(e) {
		t.Errorf("%v draws beyond 5σ, want %.1f ± %.1f", tail, e, math.Sqrt(e))
	}
	t.Logf("n %.0f: χ² %.1f (%v dof, limit %.1f), beyond 5σ %v (expected %.1f)", n, chi2, k, crit, tail, p*n)
}

// TestSlowPathLaw: the draws that leave the fast path (wedges and the
// tail, ≈ 1.5 %) have the law of a normal conditioned on them: their
// frequency, their share beyond r, and the strip they end in.
func TestSlowPathLaw(t *testing.T) {
	s := NewSeededSource(61, 62)
	var rejected, tail int
	const n = 2_000_000
	words := make([]uint32, n)
	gaussFillGo(words, &s.bulk.lanes)
	for _, u := range words {
		if _, ok := zigFast(u); ok {
			continue
		}
		rejected++
		if x := s.slow32(u); math.Abs(float64(x)) > gaussR {
			tail++
		}
	}
	// Strip i is drawn with probability 1/256 and its word accepted when
	// m < k_i, a fraction k_i/2²³ of its magnitudes.
	var acc float64
	for _, k := range zig32.k {
		acc += float64(k) / (1 << magBits) / 256
	}
	p := 1 - acc
	if e := p * n; math.Abs(float64(rejected)-e) > 5*math.Sqrt(e) {
		t.Errorf("%d rejected, want %.0f (p = %.4f)", rejected, e, p)
	}
	// Every tail draw is a rejection: its count is n·P(|X| > r) in all.
	pt := math.Erfc(gaussR / math.Sqrt2)
	if e := pt * n; math.Abs(float64(tail)-e) > 5*math.Sqrt(e) {
		t.Errorf("%d tail draws, want %.0f", tail, e)
	}
	t.Logf("rejected %.3f %%, tail %d", 100*float64(rejected)/n, tail)
}

func TestAddNormalAllocatesNothing(t *testing.T) {
	s := NewSeededSource(1, 2)
	v := make([]float32, 10_001)
	if a := testing.AllocsPerRun(10, func() { s.ScaleAddNormal(v, 0.5, 1) }); a != 0 {
		t.Errorf("%v allocations per call", a)
	}
	c := NewCryptoSource()
	c.AddNormal(v, 1)
	if a := testing.AllocsPerRun(10, func() { c.AddNormal(v, 1) }); a != 0 {
		t.Errorf("crypto: %v allocations per call", a)
	}
}

// BenchmarkBulkNormal: ns per normal of each kernel, seeded and crypto, on
// DP-SGD's vector (the MLP 784-256-128-10's 235,146 parameters).
func BenchmarkBulkNormal(b *testing.B) {
	v := make([]float32, 235_146)
	defer UseNoiseKernel(gaussUse.Load().name)
	for _, name := range NoiseKernels() {
		for _, src := range []string{"seeded", "crypto"} {
			b.Run(fmt.Sprintf("%s/%s", name, src), func(b *testing.B) {
				if _, err := UseNoiseKernel(name); err != nil {
					b.Fatal(err)
				}
				s := NewSeededSource(1, 2)
				if src == "crypto" {
					s = NewCryptoSource()
				}
				for range b.N {
					s.ScaleAddNormal(v, 0.999, 1e-3)
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(v)), "ns/normal")
			})
		}
	}
}
