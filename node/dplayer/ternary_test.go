package dplayer

import (
	"math"
	"strings"
	"testing"

	"github.com/trellis-fl/trellis/internal/seed"
	"github.com/trellis-fl/trellis/node"
	"github.com/trellis-fl/trellis/node/internal/nodetest"
	"github.com/trellis-fl/trellis/privacy"
	"github.com/trellis-fl/trellis/strategy"
)

// TestTernaryIsUnbiased: n = 200000 copies of x quantized at level B have
// mean x within 4 standard errors, √((|x|·B − x²)/n) (at most 0.5 % of B
// here), for x across [−B, B]; every output is −B, 0 or +B with the sign
// of x.
func TestTernaryIsUnbiased(t *testing.T) {
	const n, level = 200000, 2.0
	src := privacy.NewSeededSource(7, 11)
	u := make([]float32, n)
	for _, x := range []float64{-2, -1.3, -0.25, 0, 0.01, 0.7, 1.999} {
		for i := range u {
			u[i] = float32(x)
		}
		TernaryQuantize(u, level, src)
		var sum float64
		for _, v := range u {
			if v != 0 && float64(v) != math.Copysign(level, x) {
				t.Fatalf("x = %v: output %v, want 0 or sign(x)·B", x, v)
			}
			sum += float64(v)
		}
		x32 := float64(float32(x))
		se := math.Sqrt((math.Abs(x32)*level - x32*x32) / n)
		if mean := sum / n; math.Abs(mean-x32) > 4*se+1e-12 {
			t.Errorf("x = %v: mean %.5f, want x within %.5f", x, mean, 4*se)
		}
	}
}

// law is the quantizer's joint law of a vector, outcome o (a base-3
// number: digit 0, 1, 2 for −B, 0, +B) by exact products of TernaryProbs.
func law(x []float64, level float64) []float64 {
	out := make([]float64, int(math.Pow(3, float64(len(x)))))
	for o := range out {
		p, r := 1.0, o
		for _, xi := range x {
			m, z, pl := TernaryProbs(xi, level)
			p *= [3]float64{m, z, pl}[r%3]
			r /= 3
		}
		out[o] = p
	}
	return out
}

// TestTernaryDeltaIsTheTotalVariation checks the privacy claim over the
// quantizer's 3³ outcomes exactly: for adjacent updates u, u' in the L1
// ball of radius C (clipped, d = 3), the largest gap of any event's
// probability — the total variation Σ_o max(0, P(o|u) − P(o|u')) — never
// exceeds δ = C/B and equals it at u = C·e₁, u' = −C·e₁ (and at C·e₁
// against C·e₂); the ratio P(o|u)/P(o|u') there is unbounded (an outcome
// of probability 0 under u'), so no pure ε holds, as [132] states.
func TestTernaryDeltaIsTheTotalVariation(t *testing.T) {
	const clip, level = 0.75, 3.0
	delta := clip / level
	tv := func(a, b []float64) (float64, bool) {
		pa, pb := law(a, level), law(b, level)
		var s float64
		inf := false
		for o := range pa {
			s += max(0, pa[o]-pb[o])
			inf = inf || (pa[o] > 0 && pb[o] == 0)
		}
		return s, inf
	}
	pts := [][]float64{{clip, 0, 0}, {-clip, 0, 0}, {0, clip, 0}, {0, 0, -clip},
		{clip / 2, -clip / 4, clip / 4}, {-clip / 3, -clip / 3, clip / 3}, {0.1, 0.2, -0.05}, {0, 0, 0}}
	src := privacy.NewSeededSource(3, 5)
	for range 40 { // random points on the sphere ‖u‖₁ = C
		p := []float64{src.NormFloat64(), src.NormFloat64(), src.NormFloat64()}
		s := math.Abs(p[0]) + math.Abs(p[1]) + math.Abs(p[2])
		for i := range p {
			p[i] *= clip / s
		}
		pts = append(pts, p)
	}
	worst := 0.0
	for _, a := range pts {
		for _, b := range pts {
			d, _ := tv(a, b)
			worst = max(worst, d)
			if d > delta+1e-15 {
				t.Fatalf("TV(%v, %v) = %v > δ = C/B = %v", a, b, d, delta)
			}
		}
	}
	for _, pair := range [][2][]float64{{{clip, 0, 0}, {-clip, 0, 0}}, {{clip, 0, 0}, {0, clip, 0}}} {
		d, inf := tv(pair[0], pair[1])
		if math.Abs(d-delta) > 1e-15 || !inf {
			t.Errorf("TV(%v, %v) = %v (unbounded ratio %v), want δ = %v and an unbounded ratio", pair[0], pair[1], d, inf, delta)
		}
	}
	if math.Abs(worst-delta) > 1e-15 {
		t.Errorf("largest TV %v, want δ = %v", worst, delta)
	}
	for _, x := range []float64{-clip, -0.2, 0, 0.3, clip} {
		m, z, p := TernaryProbs(x, level)
		if math.Abs(m+z+p-1) > 1e-15 || math.Abs(level*(p-m)-x) > 1e-15 {
			t.Errorf("x = %v: law (%v, %v, %v) does not sum to 1 or has mean %v", x, m, z, p, level*(p-m))
		}
	}
}

// TestTernaryLayer drives the layer alone: an update of L1 norm 10 is
// clipped to C and quantized, the kept model is what goes out, δ grows by
// C/B per released round (none for a round that sends nothing), a vector
// other than the model is refused, and Snapshot/Restore carry δ on.
func TestTernaryLayer(t *testing.T) {
	m := bigModel(t, 500) // 1002 parameters
	const clip, level = 2.0, 8.0
	l, err := NewTernary(0, m, seed.Seeded(3), clip, level)
	if err != nil {
		t.Fatal(err)
	}
	var want float64
	for k := range 4 {
		if err := l.Begin(k, node.Neighborhood{}); err != nil {
			t.Fatal(err)
		}
		w := m.Params()
		start := append([]float32(nil), w...)
		for i := range w {
			w[i] += float32(10 / float64(len(w)))
		}
		if _, err := l.Outbox(0); err != nil {
			t.Fatal(err)
		}
		for i := range w {
			if d := w[i] - start[i]; d != 0 && d != level {
				t.Fatalf("round %d: the kept update is %v at %d, want 0 or +B", k, d, i)
			}
		}
		if k != 2 {
			out, err := l.Release(modelMsgs(w))
			if err != nil || out[0].Payload.Data[5] != w[5] {
				t.Fatalf("round %d: %v", k, err)
			}
			want += clip / level
		}
		var rd node.Ready
		if err := l.End(&rd); err != nil {
			t.Fatal(err)
		}
		pr := nodetest.Privacy(rd)
		if math.Abs(pr.Delta-want) > 1e-15 || pr.Epsilon != 0 || pr.Mode != "ternary" || !pr.Clipped || math.Abs(pr.Norm-10) > 1e-3 {
			t.Errorf("round %d: report %+v, want (0, %v) after clipping norm 10", k, pr, want)
		}
	}
	if got := TernaryDelta(clip, level, 3); got != want {
		t.Errorf("TernaryDelta %v, want %v", got, want)
	}
	if b, err := TernaryLevelFor(0.5, clip, 3); err != nil || b != 12 {
		t.Errorf("TernaryLevelFor: %v (%v), want 3·2/0.5 = 12", b, err)
	}
	msgs := modelMsgs(m.Params())
	msgs[1].Payload.Tag = strategy.TagTracker
	if _, err := l.Release(msgs); err == nil || !strings.Contains(err.Error(), "not the model") {
		t.Errorf("a tracker vector: %v", err)
	}
	b, _ := l.Snapshot()
	l2, _ := NewTernary(0, m, seed.Seeded(3), clip, level)
	if err := l2.Restore(b); err != nil || l2.delta != want || l2.releases != 3 {
		t.Errorf("restored δ %v releases %d (%v)", l2.delta, l2.releases, err)
	}
	if _, err := NewTernary(0, m, seed.Seeded(3), 2, 1); err == nil {
		t.Error("level below the clip: no error")
	}
}
