package strategy

import (
	"math"
	"runtime"
	"slices"
	"testing"
)

// rdpflRef is the R-DPFL paper written out literally in float64, with every
// intermediate vector stored: the independent reference the strategy is
// checked against.
type rdpflRef struct {
	lambda, g, gd, a, c float64
	warmup              int
	w                   [][]float64 // w^0, w^1, ...
	dbar                [][]float64 // dbar^1, dbar^2, ... (index t−1)
	tau, devPrev        float64
}

func (r *rdpflRef) round(t int, trained []float64, etaK float64, U [][]float64) (w []float64, dev, tau, beta float64) {
	prev := r.w[t-1]
	n := len(prev)
	u := make([]float64, n)
	for j := range u {
		u[j] = (prev[j] - trained[j]) / etaK
	}
	dbar := make([]float64, n)
	for _, x := range U {
		for j := range dbar {
			dbar[j] += x[j] / float64(len(U))
		}
	}
	dhat := make([]float64, n)
	switch {
	case t == 1:
		copy(dhat, dbar)
	case t <= r.warmup:
		copy(dhat, r.dbar[t-2])
	default:
		var ss, sy float64
		for j := range n {
			s := r.w[t-1][j] - r.w[t-2][j]
			y := r.dbar[t-2][j] - r.dbar[t-3][j]
			ss += s * s
			sy += s * y
		}
		beta = math.Max(-10, math.Min(10, sy/(ss+1e-8)))
		for j := range n {
			dhat[j] = r.dbar[t-2][j] + beta*(r.w[t-1][j]-r.w[t-2][j])
		}
	}
	delta := make([]float64, n)
	for j := range n {
		delta[j] = dbar[j] - dhat[j]
	}
	dev = norm64(delta)
	r.tau = r.a*r.tau + (1-r.a)*r.c*r.devPrev
	dt := make([]float64, n)
	for j := range n {
		dt[j] = dhat[j] + delta[j]*math.Min(1, r.tau/(dev+1e-8))
	}
	gf := math.Min(1, r.gd/(norm64(dt)+1e-8))
	w = make([]float64, n)
	for j := range n {
		w[j] = prev[j] - r.g*etaK*(u[j]+r.lambda*gf*dt[j])
	}
	r.w = append(r.w, w)
	r.dbar = append(r.dbar, dbar)
	r.devPrev = dev
	return w, dev, r.tau, beta
}

func norm64(x []float64) float64 {
	var s float64
	for _, v := range x {
		s += v * v
	}
	return math.Sqrt(s)
}

func f32(x []float64) []float32 {
	out := make([]float32, len(x))
	for i, v := range x {
		out[i] = float32(v)
	}
	return out
}

func closeTo(a, b, tol float64) bool { return math.Abs(a-b) <= tol*(1+math.Abs(b)) }

// TestRDPFLHandValues pins rounds 1 and 2 to values computed by hand: at
// t = 1 the prediction is dbar itself (Δ = 0) and τ¹ = 0.9·1 + 0.1·1.5·0;
// at t = 2 the warm-up predicts dbar¹, Δ = (3, 0, 0) is clipped to τ² = 0.81.
func TestRDPFLHandValues(t *testing.T) {
	s, _ := NewRDPFL("mean")
	s.Lambda = 0.5
	start := []float32{0, 0, 0}
	w := []float32{-0.2, 0, 0.2} // η = 0.1, K = 2: u = (1, 0, −1)
	u := s.direction(start, w, 0.1, 2)
	if !slices.Equal(u, []float32{1, 0, -1}) {
		t.Fatalf("u = %v, want (1, 0, -1)", u)
	}
	in := []Incoming{
		{From: 1, Tag: TagDirection, Vector: []float32{1, 2, 3}},
		{From: 2, Tag: TagDirection, Vector: []float32{3, 2, 1}},
		{From: 3, Tag: TagDirection, Vector: []float32{2, 2, 2}},
	}
	if _, err := s.combine(0, start, w, in); err != nil {
		t.Fatal(err)
	}
	st := s.Last()
	if st.Predicted != "self" || st.DevNorm != 0 || !closeTo(st.Tau, 0.9, 1e-12) {
		t.Fatalf("round 1: %+v, want prediction self, Δ = 0, τ = 0.9", st)
	}
	// w¹ = w~ − ηK·λ·d = (−0.2, 0, 0.2) − 0.2·0.5·(2, 2, 2).
	near(t, "w¹", w, -0.4, -0.2, 0)

	start = slices.Clone(w)
	w = []float32{-0.4, -0.4, 0} // u = (0, 1, 0)
	s.direction(start, w, 0.1, 2)
	in[0].Vector = []float32{10, 2, 3}
	in[1].Vector = []float32{3, 2, 1} // dbar² = (5, 2, 2)
	if _, err := s.combine(1, start, w, in); err != nil {
		t.Fatal(err)
	}
	st = s.Last()
	if st.Predicted != "previous" || !closeTo(st.DevNorm, 3, 1e-6) || !closeTo(st.Tau, 0.81, 1e-12) || !closeTo(st.ClipFactor, 0.27, 1e-6) {
		t.Fatalf("round 2: %+v, want prediction previous, ||Δ|| = 3, τ = 0.81, clip factor 0.27", st)
	}
	// d~ = (2, 2, 2) + 0.27·(3, 0, 0) = (2.81, 2, 2); w² = w~ − 0.1·d~.
	near(t, "w²", w, -0.681, -0.6, -0.2)
	// τ³ = 0.9·0.81 + 0.1·1.5·3 = 1.179 (from Δ², not Δ³).
	s.direction(w, w, 0.1, 2)
	in[0].Vector = []float32{5, 2, 2}
	in[1].Vector = []float32{5, 2, 2}
	in[2].Vector = []float32{5, 2, 2}
	if _, err := s.combine(2, slices.Clone(w), w, in); err != nil {
		t.Fatal(err)
	}
	if st := s.Last(); !closeTo(st.Tau, 1.179, 1e-12) {
		t.Fatalf("τ³ = %v, want 1.179", st.Tau)
	}
}

// rdpflScript is 8 rounds of trained models and neighbor directions on
// 3-dimensional vectors, chosen so that the warm-up, the Barzilai–Borwein
// prediction with and without its clamp, the adaptive clip and the G_d
// clip all act in some round.
func rdpflScript() (trained [][]float64, dirs [][][]float64) {
	trained = [][]float64{
		{-0.1, 0.05, 0.2}, {-0.3, 0.1, 0.25}, {-0.35, 0.2, 0.1}, {-0.5, 0.3, 0.1},
		{-0.6, 0.3, 0.2}, {-0.6, 0.3, 0.2}, {-0.9, 0.5, 0.4}, {-1.0, 0.7, 0.3},
	}
	dirs = [][][]float64{
		{{1, 0, -1}, {2, 1, 0}, {0, 1, 1}},
		{{1, 1, -1}, {2, 0, 0}, {1, 1, 1}},
		{{3, 0, -2}, {2, 1, 0}, {1, 2, 1}},
		{{1, 1, 1}, {1, 1, 1}, {1, 1, 1}},
		{{0.5, 2, -1}, {2, 1, 0}, {1, 1, 4}},
		{{40, -30, 9}, {2, 1, 0}, {1, 1, 1}},
		{{1, 0, -1}, {2, 1, 0}, {0, 1, 1}},
		{{-8, 9, 30}, {12, -1, 2}, {3, 2, 1}},
	}
	return trained, dirs
}

// TestRDPFLMatchesSpecOverEightRounds checks the strategy against the
// literal float64 reference for 8 rounds: warm-up W = 5 (rounds 2–5 use
// dbar^{t−1}), BB from round 6, the threshold recursion on Δ^{t−1}, both
// clips, and the update; g ≠ 1 in a second pass.
func TestRDPFLMatchesSpecOverEightRounds(t *testing.T) {
	for _, tc := range []struct {
		g, gd float64
	}{{1, 10}, {0.7, 3}} {
		s, _ := NewRDPFL("mean")
		s.Lambda, s.G, s.Gd = 0.4, tc.g, tc.gd
		ref := &rdpflRef{lambda: 0.4, g: tc.g, gd: tc.gd, a: 0.9, c: 1.5, warmup: 5, tau: 1, w: [][]float64{{0, 0, 0}}}
		trained, dirs := rdpflScript()
		const eta, steps = 0.05, 3
		w := []float32{0, 0, 0}
		seen := map[string]bool{}
		for r := range 8 {
			start := slices.Clone(w)
			// the node trained from w^{t−1}: shift the scripted step onto it
			tr := make([]float64, 3)
			for j := range tr {
				tr[j] = ref.w[r][j] + trained[r][j]
			}
			w = f32(tr)
			tr64 := make([]float64, 3)
			for j := range tr64 {
				tr64[j] = float64(w[j])
			}
			s.direction(start, w, eta, steps)
			in := make([]Incoming, 3)
			for k, d := range dirs[r] {
				in[k] = Incoming{From: k + 1, Tag: TagDirection, Vector: f32(d)}
			}
			if _, err := s.combine(r, start, w, in); err != nil {
				t.Fatal(err)
			}
			// the reference starts from the strategy's float32 state so
			// rounding does not accumulate differently
			ref.w[r] = []float64{float64(start[0]), float64(start[1]), float64(start[2])}
			want, dev, tau, beta := ref.round(r+1, tr64, eta*steps, dirsF64(in))
			st := s.Last()
			for j := range 3 {
				if !closeTo(float64(w[j]), want[j], 2e-5) {
					t.Fatalf("g=%v round %d: w = %v, want %v (%+v)", tc.g, r+1, w, want, st)
				}
			}
			if !closeTo(st.DevNorm, dev, 1e-4) || !closeTo(st.Tau, tau, 1e-6) || !closeTo(st.Beta, beta, 1e-4) {
				t.Fatalf("g=%v round %d: got %+v, want ||Δ|| %v τ %v β %v", tc.g, r+1, st, dev, tau, beta)
			}
			wantMode := map[bool]string{true: "previous", false: "bb"}[r+1 <= 5]
			if r == 0 {
				wantMode = "self"
			}
			if st.Predicted != wantMode {
				t.Fatalf("round %d: prediction %q, want %q", r+1, st.Predicted, wantMode)
			}
			seen["clip"] = seen["clip"] || st.ClipFactor < 1
			seen["gd"] = seen["gd"] || st.GdFactor < 1
			seen["clamp"] = seen["clamp"] || math.Abs(st.Beta) == 10
			seen["bb"] = seen["bb"] || (st.Predicted == "bb" && math.Abs(st.Beta) < 10 && st.Beta != 0)
		}
		for _, k := range []string{"clip", "gd", "clamp", "bb"} {
			if !seen[k] {
				t.Errorf("g=%v: the script never exercised %s (%v)", tc.g, k, seen)
			}
		}
	}
}

func dirsF64(in []Incoming) [][]float64 {
	out := make([][]float64, len(in))
	for i, m := range in {
		out[i] = []float64{float64(m.Vector[0]), float64(m.Vector[1]), float64(m.Vector[2])}
	}
	return out
}

// TestRDPFLLambdaZeroIsLocalTraining: with λ = 0 (and g = 1) the model
// after Combine is the locally trained one, bit for bit, whatever arrives.
func TestRDPFLLambdaZeroIsLocalTraining(t *testing.T) {
	s, _ := NewRDPFL("median")
	s.Lambda = 0
	trained, dirs := rdpflScript()
	w := []float32{0, 0, 0}
	for r := range 8 {
		start := slices.Clone(w)
		w = f32(trained[r])
		w[1] = float32(math.Copysign(0, -1)) // a negative zero must survive too
		want := slices.Clone(w)
		s.direction(start, w, 0.01, 7)
		in := make([]Incoming, 3)
		for k, d := range dirs[r] {
			in[k] = Incoming{From: k + 1, Tag: TagDirection, Vector: f32(d)}
		}
		if _, err := s.combine(r, start, w, in); err != nil {
			t.Fatal(err)
		}
		for j := range w {
			if math.Float32bits(w[j]) != math.Float32bits(want[j]) {
				t.Fatalf("round %d: w = %v, local training gave %v", r+1, w, want)
			}
		}
	}
}

// TestRDPFLAblationsAndEmptyRounds: without prediction Δ = dbar and the
// adaptive clip acts on dbar; without clipping d~ = dbar; an empty round
// applies d = 0 and leaves the aggregate history alone.
func TestRDPFLAblationsAndEmptyRounds(t *testing.T) {
	in := []Incoming{{From: 1, Tag: TagDirection, Vector: []float32{3, 4, 0}}}
	s, _ := NewRDPFL("mean")
	s.NoPrediction, s.Lambda = true, 1
	start := []float32{0, 0, 0}
	w := []float32{0, 0, 0}
	s.direction(start, w, 1, 1)
	if _, err := s.combine(0, start, w, in); err != nil {
		t.Fatal(err)
	}
	// Δ = dbar = (3, 4, 0), ||Δ|| = 5, τ¹ = 0.9: d = 0.18·(3, 4, 0).
	if st := s.Last(); st.Predicted != "none" || !closeTo(st.DevNorm, 5, 1e-12) || !closeTo(st.ClipFactor, 0.18, 1e-9) {
		t.Fatalf("w/o prediction: %+v", st)
	}
	near(t, "w", w, -0.54, -0.72, 0)

	s, _ = NewRDPFL("mean")
	s.NoClipping, s.Lambda, s.Gd = true, 1, 2.5
	w = []float32{0, 0, 0}
	s.direction(start, w, 1, 1)
	if _, err := s.combine(0, start, w, in); err != nil {
		t.Fatal(err)
	}
	near(t, "w w/o clipping (G_d = 2.5 still applies)", w, -1.5, -2, 0)

	// empty round: w stays the trained model, the history is untouched
	before := s.nDbar
	w = []float32{1, 2, 3}
	s.direction(start, w, 1, 1)
	if _, err := s.combine(1, start, w, nil); err != nil {
		t.Fatal(err)
	}
	if !s.Last().Empty || s.nDbar != before || !slices.Equal(w, []float32{1, 2, 3}) {
		t.Fatalf("empty round changed the model or history: w = %v, %+v", w, s.Last())
	}
	// G_d relative to ||u||: u = (−1, −2, −3), ||u|| = √14.
	s, _ = NewRDPFL("mean")
	s.NoClipping, s.Lambda, s.GdRelative = true, 1, 0.5
	w = []float32{1, 2, 3}
	s.direction(start, w, 1, 1)
	if _, err := s.combine(0, start, w, in); err != nil {
		t.Fatal(err)
	}
	if st := s.Last(); !closeTo(st.DNorm, 0.5*math.Sqrt(14), 1e-6) {
		t.Fatalf("relative G_d: ||d|| = %v, want %v", st.DNorm, 0.5*math.Sqrt(14))
	}
}

// TestRDPFLWeightsAreSharesInDbar: the weights are each sender's share in
// dbar (for the median, which inputs were used).
func TestRDPFLWeightsAreSharesInDbar(t *testing.T) {
	s, _ := NewRDPFL("trimmed_mean")
	one := 1
	s.F = &one
	in := []Incoming{
		{From: 2, Tag: TagDirection, Vector: []float32{1, 1, 1}},
		{From: 4, Tag: TagDirection, Vector: []float32{2, 2, 2}},
		{From: 7, Tag: TagDirection, Vector: []float32{1e6, 1e6, 1e6}},
	}
	w := []float32{0, 0, 0}
	s.direction(w, w, 1, 1)
	got, err := s.combine(0, []float32{0, 0, 0}, w, in)
	if err != nil {
		t.Fatal(err)
	}
	if got[7] != 0 || got[2] != 0 || got[4] != 1 {
		t.Fatalf("weights %v: the trimmed mean with f = 1 of three uses only the middle input", got)
	}
}

// TestRDPFLStateIsTheSpecs: for a 1M-parameter model the strategy keeps
// w^{t−2}, dbar^{t−1}, dbar^{t−2} and the sent direction u — four vectors —
// and a round allocates no further model-sized memory once warm.
func TestRDPFLStateIsTheSpecs(t *testing.T) {
	const n = 1 << 20
	s, _ := NewRDPFL("mean")
	start := make([]float32, n)
	w := make([]float32, n)
	in := make([]Incoming, 3)
	for k := range in {
		v := make([]float32, n)
		for j := range v {
			v[j] = float32(k + j%7)
		}
		in[k] = Incoming{From: k + 1, Tag: TagDirection, Vector: v}
	}
	round := func(r int) {
		for j := range w {
			w[j] = start[j] - 0.01*float32(j%5)
		}
		s.direction(start, w, 0.01, 1)
		if _, err := s.combine(r, start, w, in); err != nil {
			t.Fatal(err)
		}
		copy(start, w)
	}
	for r := range 8 {
		round(r)
	}
	if got, want := s.StateBytes(), 4*4*n; got != want {
		t.Fatalf("state %d bytes, want %d (four vectors of %d float32)", got, want, n)
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for r := 8; r < 12; r++ {
		round(r)
	}
	runtime.ReadMemStats(&after)
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 4*n/8 {
		t.Fatalf("4 warm rounds allocated %d bytes; want none model-sized (%d bytes a vector)", grew, 4*n)
	}
}

// BenchmarkRDPFLCombine times one Combine over 9 neighbor directions of
// 1M parameters on the median, full method against prediction and
// clipping switched off: their difference is what the two cost
// (bench/rdpfl_overhead.sh puts it next to a whole round).
func BenchmarkRDPFLCombine(b *testing.B) {
	const n, k = 1 << 20, 9
	in := make([]Incoming, k)
	for i := range in {
		v := make([]float32, n)
		for j := range v {
			v[j] = float32((i*7+j)%13) - 6
		}
		in[i] = Incoming{From: i + 1, Tag: TagDirection, Vector: v}
	}
	for _, full := range []bool{false, true} {
		name := map[bool]string{false: "plain", true: "full"}[full]
		b.Run(name, func(b *testing.B) {
			s, _ := NewRDPFL("median")
			s.NoPrediction, s.NoClipping = !full, !full
			start, w := make([]float32, n), make([]float32, n)
			for r := range 7 { // past the warm-up: BB prediction
				s.direction(start, w, 0.01, 10)
				if _, err := s.combine(r, start, w, in); err != nil {
					b.Fatal(err)
				}
			}
			b.ResetTimer()
			for i := range b.N {
				s.direction(start, w, 0.01, 10)
				if _, err := s.combine(7+i, start, w, in); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
