package dplayer

import (
	"math"
	"strings"
	"testing"

	"github.com/trellis-fl/trellis/internal/seed"
	"github.com/trellis-fl/trellis/node"
	"github.com/trellis-fl/trellis/node/internal/nodetest"
	"github.com/trellis-fl/trellis/strategy"
	"github.com/trellis-fl/trellis/wire"
)

// modelMsgs is the model sent to two peers as one shared copy and one
// copy of its own, as strategies do.
func modelMsgs(w []float32) []*wire.Message {
	shared := append([]float32(nil), w...)
	own := append([]float32(nil), w...)
	mk := func(to int, d []float32) *wire.Message {
		m := &wire.Message{Payload: wire.Payload{Tag: strategy.TagModel, Data: d}}
		m.Kind, m.To = wire.KindVector, uint32(to)
		return m
	}
	return []*wire.Message{mk(1, shared), mk(2, shared), mk(3, own)}
}

// TestDecayingNoiseScaleAndDecay drives the layer alone with no training
// over 5 rounds: the kept model is the round's start plus Laplace noise
// whose mean absolute value (b for Laplace(0, b)) is c·q^k within 4
// standard errors, and what goes out to every peer is that noisy model.
func TestDecayingNoiseScaleAndDecay(t *testing.T) {
	m := bigModel(t, 5000) // 10002 parameters
	const clip, c, q, p = 1.0, 0.7, 0.6, 0.5
	l, err := NewDecaying(0, m, seed.Seeded(3), clip, c, q, p)
	if err != nil {
		t.Fatal(err)
	}
	n := float64(m.NumParams())
	for k := range 5 {
		if err := l.Begin(k, node.Neighborhood{}); err != nil {
			t.Fatal(err)
		}
		start := append([]float32(nil), m.Params()...)
		if _, err := l.Outbox(0); err != nil {
			t.Fatal(err)
		}
		out, err := l.Release(modelMsgs(m.Params()))
		if err != nil {
			t.Fatal(err)
		}
		w := m.Params()
		var abs, sum float64
		for i := range w {
			if out[0].Payload.Data[i] != w[i] {
				t.Fatalf("round %d: what goes out is not the kept model at %d", k, i)
			}
			e := float64(w[i]) - float64(start[i])
			abs += math.Abs(e)
			sum += e
			if out[2].Payload.Data[i] != out[0].Payload.Data[i] {
				t.Fatalf("round %d: peers got different noise at %d", k, i)
			}
		}
		b := c * math.Pow(q, float64(k))
		// |Laplace(0, b)| is Exp(mean b, sd b): standard error b/√n ≈ 1 %.
		if got := abs / n; math.Abs(got-b) > 4*b/math.Sqrt(n) {
			t.Errorf("round %d: mean |η| %.5f, want c·q^k = %.5f", k, got, b)
		}
		if mean := sum / n; math.Abs(mean) > 4*math.Sqrt2*b/math.Sqrt(n) {
			t.Errorf("round %d: noise mean %.5f, want 0", k, mean)
		}
	}
}

// TestDecayingClipsTheUpdate: an update of L1 norm 100 in round 3 is
// clipped to C·p³ (the noise made negligible: c = 10⁻³⁰).
func TestDecayingClipsTheUpdate(t *testing.T) {
	m := bigModel(t, 50)
	const clip, p = 2.0, 0.5
	l, err := NewDecaying(0, m, seed.Seeded(3), clip, 1e-30, 0.9, p)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Begin(3, node.Neighborhood{}); err != nil {
		t.Fatal(err)
	}
	w := m.Params()
	start := append([]float32(nil), w...)
	for i := range w {
		w[i] += float32(100 / float64(len(w)))
	}
	if _, err := l.Outbox(0); err != nil {
		t.Fatal(err)
	}
	var norm float64
	for i := range w {
		norm += math.Abs(float64(w[i] - start[i]))
	}
	var rd node.Ready
	if err := l.End(&rd); err != nil {
		t.Fatal(err)
	}
	pr := nodetest.Privacy(rd)
	if want := clip * p * p * p; math.Abs(norm-want) > 1e-4 || !pr.Clipped || math.Abs(pr.Norm-100) > 1e-3 || pr.Clip != want {
		t.Errorf("kept update L1 %.6f (report %+v), want %v", norm, pr, want)
	}
}

// TestDecayingEpsilonIsTheGeometricSum: after each round the report's ε is
// Σ_{j≤k} 2C·p^j/(c·q^j) summed term by term, δ = 0; the closed form
// agrees (also for p = q, where it is linear), and DecayingScaleFor
// inverts it. A round without a release charges nothing.
func TestDecayingEpsilonIsTheGeometricSum(t *testing.T) {
	m := bigModel(t, 3)
	const clip, c, q, p = 0.5, 2.0, 0.8, 0.6
	l, err := NewDecaying(1, m, seed.Seeded(1), clip, c, q, p)
	if err != nil {
		t.Fatal(err)
	}
	var sum float64
	for k := range 6 {
		if err := l.Begin(k, node.Neighborhood{}); err != nil {
			t.Fatal(err)
		}
		if _, err := l.Outbox(0); err != nil {
			t.Fatal(err)
		}
		if k != 4 { // round 4 sends nothing
			if _, err := l.Release(modelMsgs(m.Params())); err != nil {
				t.Fatal(err)
			}
			sum += 2 * clip * math.Pow(p, float64(k)) / (c * math.Pow(q, float64(k)))
		}
		var rd node.Ready
		if err := l.End(&rd); err != nil {
			t.Fatal(err)
		}
		pr := nodetest.Privacy(rd)
		if math.Abs(pr.Epsilon-sum) > 1e-12 || pr.Delta != 0 || pr.Mode != "laplace_decaying" {
			t.Errorf("round %d: ε %v δ %v, want %v and 0", k, pr.Epsilon, pr.Delta, sum)
		}
	}
	// Closed form: 2C/c = 0.5, ρ = 0.75: 0.5·(1 − 0.75⁶)/0.25.
	if got, want := DecayingEpsilon(clip, c, q, p, 6), 2*(1-math.Pow(0.75, 6)); math.Abs(got-want) > 1e-12 {
		t.Errorf("DecayingEpsilon %v, want %v", got, want)
	}
	if got := DecayingEpsilon(1, 4, 0.9, 0.9, 7); got != 3.5 {
		t.Errorf("p = q: ε %v, want 2·1/4·7 = 3.5", got)
	}
	cc, err := DecayingScaleFor(1.5, clip, q, p, 6)
	if err != nil || math.Abs(DecayingEpsilon(clip, cc, q, p, 6)-1.5) > 1e-12 {
		t.Errorf("DecayingScaleFor: c = %v (%v)", cc, err)
	}
	// Snapshot and Restore carry ε on.
	b, _ := l.Snapshot()
	l2, _ := NewDecaying(1, m, seed.Seeded(1), clip, c, q, p)
	if err := l2.Restore(b); err != nil || l2.eps != l.eps || l2.releases != 5 {
		t.Errorf("restored ε %v releases %d (%v), want %v and 5", l2.eps, l2.releases, err, l.eps)
	}
}

// TestDecayingRefuses: a non-model vector, a model that is not the node's,
// and bad parameters are errors.
func TestDecayingRefuses(t *testing.T) {
	m := bigModel(t, 3)
	l, _ := NewDecaying(0, m, seed.Seeded(1), 1, 1, 0.9, 0.8)
	_ = l.Begin(0, node.Neighborhood{})
	_, _ = l.Outbox(0)
	msgs := modelMsgs(m.Params())
	msgs[2].Payload.Tag = strategy.TagUpdate
	if _, err := l.Release(msgs); err == nil || !strings.Contains(err.Error(), "not the model") {
		t.Errorf("update vector: %v", err)
	}
	msgs = modelMsgs(m.Params())
	msgs[2].Payload.Data[0] += 1
	if _, err := l.Release(msgs); err == nil || !strings.Contains(err.Error(), "differs") {
		t.Errorf("another model: %v", err)
	}
	for _, v := range [][4]float64{{0, 1, 0.9, 0.8}, {1, 0, 0.9, 0.8}, {1, 1, 1.5, 0.8}, {1, 1, 0.9, 0}, {1, math.Inf(1), 0.9, 0.8}} {
		if _, err := NewDecaying(0, m, seed.Seeded(1), v[0], v[1], v[2], v[3]); err == nil {
			t.Errorf("%v: no error", v)
		}
	}
}
