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

// trackMsgs is what gradient tracking sends: its state and its tracker, to
// every peer (fresh copies, as the node's send buffers are).
func trackMsgs(start, y []float32) []*wire.Message {
	mk := func(tag string, d []float32) *wire.Message {
		m := &wire.Message{Payload: wire.Payload{Tag: tag, Data: append([]float32(nil), d...)}}
		m.Kind, m.To = wire.KindVector, wire.Broadcast
		return m
	}
	var out []*wire.Message
	if start != nil {
		out = append(out, mk(strategy.TagStart, start))
	}
	if y != nil {
		out = append(out, mk(strategy.TagTracker, y))
	}
	return out
}

// TestDecayingTrackingEpsilonIsTwoGeometricSums: every round charges each
// of its releases 2C·p^k/(c·q^k) — a round that sends only the state
// charges one — and after 6 rounds of both the report's ε is the closed
// form (4C/c)·(1 − ρ⁶)/(1 − ρ), ρ = p/q, δ = 0.
func TestDecayingTrackingEpsilonIsTwoGeometricSums(t *testing.T) {
	m := bigModel(t, 3)
	const clip, c, q, p = 0.5, 2.0, 0.8, 0.6
	l, err := NewDecayingTracking(1, m, seed.Seeded(1), clip, c, q, p)
	if err != nil {
		t.Fatal(err)
	}
	y := make([]float32, m.NumParams())
	var sum float64
	for k := range 7 {
		if err := l.Begin(k, node.Neighborhood{}); err != nil {
			t.Fatal(err)
		}
		term := 2 * clip * math.Pow(p, float64(k)) / (c * math.Pow(q, float64(k)))
		msgs := trackMsgs(m.Params(), y)
		if k == 6 {
			msgs = msgs[:1] // the state alone
		}
		if _, err := l.Release(msgs); err != nil {
			t.Fatal(err)
		}
		sum += term * float64(len(msgs))
		var rd node.Ready
		if err := l.End(&rd); err != nil {
			t.Fatal(err)
		}
		pr := nodetest.Privacy(rd)
		if math.Abs(pr.Epsilon-sum) > 1e-12 || pr.Delta != 0 || pr.Releases != 2*k+len(msgs) {
			t.Errorf("round %d: ε %v δ %v releases %d, want %v, 0, %d", k, pr.Epsilon, pr.Delta, pr.Releases, sum, 2*k+len(msgs))
		}
		if k == 5 {
			rho := p / q
			if want := 4 * clip / c * (1 - math.Pow(rho, 6)) / (1 - rho); math.Abs(pr.Epsilon-want) > 1e-12 || math.Abs(DecayingTrackingEpsilon(clip, c, q, p, 6)-want) > 1e-12 {
				t.Errorf("ε after 6 rounds %v (DecayingTrackingEpsilon %v), want the closed form %v", pr.Epsilon, DecayingTrackingEpsilon(clip, c, q, p, 6), want)
			}
		}
	}
}

// TestDecayingTrackingClipsAndNoises: the released state is its reference
// (the first round's start) plus the move clipped to L1 norm C·p^k plus
// Laplace noise of scale c·q^k: with no move the mean |noise| is c·q^k
// within 4 standard errors; with a move of L1 norm 50 and negligible
// noise the release moved C·p^k towards it; the tracker's reference is 0.
func TestDecayingTrackingClipsAndNoises(t *testing.T) {
	m := bigModel(t, 5000) // 10002 parameters
	n := float64(m.NumParams())
	const clip, c, q, p = 1.0, 0.3, 0.5, 0.5
	l, _ := NewDecayingTracking(0, m, seed.Seeded(3), clip, c, q, p)
	_ = l.Begin(0, node.Neighborhood{})
	start := append([]float32(nil), m.Params()...)
	out, err := l.Release(trackMsgs(start, make([]float32, len(start))))
	if err != nil {
		t.Fatal(err)
	}
	for k, msg := range out {
		var abs float64
		for i, v := range msg.Payload.Data {
			ref := [2]float32{start[i], 0}[k]
			abs += math.Abs(float64(v - ref))
		}
		if got := abs / n; math.Abs(got-c) > 4*c/math.Sqrt(n) {
			t.Errorf("%s: mean |η| %.5f, want c = %v", msg.Payload.Tag, got, c)
		}
	}
	released := append([]float32(nil), out[0].Payload.Data...)
	// Round 1, noise made negligible: a fresh layer restored from l.
	b, _ := l.Snapshot()
	l2, _ := NewDecayingTracking(0, m, seed.Seeded(3), clip, 1e-30, q, p)
	if err := l2.Restore(b); err != nil {
		t.Fatal(err)
	}
	_ = l2.Begin(1, node.Neighborhood{})
	moved := append([]float32(nil), released...)
	for i := range moved {
		moved[i] += float32(50 / n)
	}
	out, err = l2.Release(trackMsgs(moved, nil))
	if err != nil {
		t.Fatal(err)
	}
	var step float64
	for i, v := range out[0].Payload.Data {
		step += float64(v - released[i])
	}
	if want := clip * p; math.Abs(step-want) > 1e-3 {
		t.Errorf("round 1: the release moved %.5f from the last one, want C·p = %v", step, want)
	}
	var rd node.Ready
	_ = l2.End(&rd)
	if pr := nodetest.Privacy(rd); !pr.Clipped || math.Abs(pr.Norm-50) > 1e-2 || pr.Releases != 3 {
		t.Errorf("report %+v, want a clipped move of norm 50 and 3 releases", pr)
	}
}

// TestDecayingTrackingRefuses: a model vector, a second different tracker
// and bad parameters are errors; the same tracker copy to another peer is
// one release.
func TestDecayingTrackingRefuses(t *testing.T) {
	m := bigModel(t, 3)
	l, _ := NewDecayingTracking(0, m, seed.Seeded(1), 1, 1, 0.9, 0.8)
	_ = l.Begin(0, node.Neighborhood{})
	if _, err := l.Release(modelMsgs(m.Params())); err == nil || !strings.Contains(err.Error(), "neither") {
		t.Errorf("a model vector: %v", err)
	}
	_ = l.Begin(1, node.Neighborhood{})
	msgs := trackMsgs(m.Params(), make([]float32, m.NumParams()))
	shared := *msgs[1]
	shared.To = 2
	msgs = append(msgs, &shared) // the same copy to peer 2
	if _, err := l.Release(msgs); err != nil {
		t.Fatalf("one tracker copy to two peers: %v", err)
	}
	var rd node.Ready
	_ = l.End(&rd)
	if pr := nodetest.Privacy(rd); pr.Releases != 2 {
		t.Errorf("releases %d, want 2 (the shared copy is one release)", pr.Releases)
	}
	_ = l.Begin(2, node.Neighborhood{})
	msgs = append(trackMsgs(nil, make([]float32, m.NumParams())), trackMsgs(nil, make([]float32, m.NumParams()))...)
	if _, err := l.Release(msgs); err == nil || !strings.Contains(err.Error(), "second") {
		t.Errorf("two tracker copies: %v", err)
	}
	if _, err := NewDecayingTracking(0, m, seed.Seeded(1), 1, 1, 0, 0.5); err == nil {
		t.Error("q = 0: no error")
	}
}

// TestDecayingTrackingStateDecomposed: with gradient_tracking_sd (ref.
// [122]) the layer releases the state and the tracker's exchanged share α,
// each with its own Laplace draw of scale c in round 0, and leaves the
// round-0 edge draws, which no data touched, as they are: two releases,
// ε = 2 · 2C/c.
func TestDecayingTrackingStateDecomposed(t *testing.T) {
	m := bigModel(t, 5000)
	n := float64(m.NumParams())
	const clip, c, q, p = 1.0, 0.3, 0.5, 0.5
	l, _ := NewDecayingTracking(0, m, seed.Seeded(4), clip, c, q, p)
	_ = l.Begin(0, node.Neighborhood{})
	start := append([]float32(nil), m.Params()...)
	alpha := make([]float32, len(start))
	edge := make([]float32, len(start))
	for i := range edge {
		alpha[i], edge[i] = float32(i%7)*1e-5, float32(i%11)/11
	}
	mk := func(tag string, to uint32, d []float32) *wire.Message {
		msg := &wire.Message{Payload: wire.Payload{Tag: tag, Data: append([]float32(nil), d...)}}
		msg.Kind, msg.To = wire.KindVector, to
		return msg
	}
	out, err := l.Release([]*wire.Message{mk(strategy.TagStart, wire.Broadcast, start), mk(strategy.TagAlpha, wire.Broadcast, alpha), mk(strategy.TagSDEdge, 2, edge)})
	if err != nil {
		t.Fatal(err)
	}
	for k, ref := range [][]float32{start, alpha} {
		var abs float64
		for i, v := range out[k].Payload.Data {
			abs += math.Abs(float64(v - ref[i]))
		}
		// α's reference is 0 and α itself moves it by at most 6e-5 a
		// coordinate (L1 ≈ 0.3, within the clip): what is left is noise.
		if got := abs / n; math.Abs(got-c) > 4*c/math.Sqrt(n)+6e-5 {
			t.Errorf("%s: mean |released − exact| %.5f, want about c = %v", out[k].Payload.Tag, got, c)
		}
	}
	for i, v := range out[2].Payload.Data {
		if v != edge[i] {
			t.Fatalf("the edge draw changed at %d: %v, sent %v", i, v, edge[i])
		}
	}
	var rd node.Ready
	_ = l.End(&rd)
	if pr := nodetest.Privacy(rd); pr.Releases != 2 || math.Abs(pr.Epsilon-2*2*clip/c) > 1e-12 {
		t.Errorf("report %+v, want 2 releases and ε = %v", pr, 2*2*clip/c)
	}
}
