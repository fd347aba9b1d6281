package dplayer

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/trellis-fl/trellis/internal/seed"
	"github.com/trellis-fl/trellis/nn"
	"github.com/trellis-fl/trellis/node"
	"github.com/trellis-fl/trellis/privacy"
	"github.com/trellis-fl/trellis/strategy"
	"github.com/trellis-fl/trellis/vec"
	"github.com/trellis-fl/trellis/wire"
)

// DecayingTracking is differentially private gradient tracking with state
// and direction perturbation (the survey, §3.2.2 and Table 4, ref. [121]):
// both vectors gradient tracking exchanges — the state (the round's start
// model, strategy.TagStart) and the direction (the tracker y,
// strategy.TagTracker) — go out with Laplace noise of the decaying scale
// b_k = c·q^k, one i.i.d. draw per vector and round, the same to every
// peer. The node itself goes on with its exact state and tracker, as in
// [121], where the noise is on what is transmitted.
//
// With gradient_tracking_sd the direction released is the tracker's
// exchanged share α (strategy.TagAlpha): the survey's ref. [122], state
// decomposition with Laplace noise on the exchanged share (the share
// carrying the gradient, β, never leaves the node). Its round-0 edge
// draws (strategy.TagSDEdge) are independent of the data and go out as
// they are.
//
// [121] bounds the sensitivity by its assumptions on the costs; here
// nothing bounds how far a node's exact state drifts from what it
// released, so what is released is clipped: vector v of round k goes out
// as r + clip(v − r) + η, with r the node's previous release of that vector
// (public; the round's start model for the state of the layer's first
// round — the initial model, which no data has touched — and 0 for the
// tracker) and clip to L1 norm C·p^k. Given everything released before,
// each release is a Laplace mechanism of L1 sensitivity 2·C·p^k, so round
// k costs ε_k = 2 · 2C·p^k/(c·q^k) (two releases), and R rounds pure
// ε = 2·DecayingEpsilon (δ = 0). With a large C and a small c the clip never
// binds and the run is plain gradient tracking.
type DecayingTracking struct {
	releasing
	id            int
	model         *nn.Model
	random        seed.Source
	src           *privacy.Stream
	seeded        bool
	clip, c, q, p float64
	round         int
	// ref holds the previous release of the state (0) and tracker (1),
	// have whether there is one; sent the round's released copy (its
	// first element's address), nil before the vector's release.
	ref   [2][]float32
	have  [2]bool
	sent  [2]*float32
	exact []float32 // the exact vector of the release being made
	eps   float64
	rels  int
	// norm is the larger L1 norm of the round's two moves away from their
	// references, clipped whether either was clipped.
	norm    float64
	clipped bool
}

// NewDecayingTracking returns node id's layer over model with the
// parameters of NewDecaying.
func NewDecayingTracking(id int, model *nn.Model, random seed.Source, clip, c, q, p float64) (*DecayingTracking, error) {
	if model == nil || random == nil {
		return nil, fmt.Errorf("decaying laplace tracking layer: a model and a seed source are required")
	}
	if err := checkDecaying(clip, c, q, p); err != nil {
		return nil, err
	}
	n := model.NumParams()
	return &DecayingTracking{releasing: releasing{passive{"decaying laplace tracking layer"}}, id: id, model: model, random: random, seeded: random.Seeded(seed.Noise),
		clip: clip, c: c, q: q, p: p,
		ref: [2][]float32{make([]float32, n), make([]float32, n)}, exact: make([]float32, n)}, nil
}

// DecayingTrackingEpsilon is the pure ε of rounds rounds with both vectors
// released every round: twice DecayingEpsilon.
func DecayingTrackingEpsilon(clip, c, q, p float64, rounds int) float64 {
	return 2 * DecayingEpsilon(clip, c, q, p, rounds)
}

// Name implements node.Layer.
func (*DecayingTracking) Name() string { return "dp-laplace-tracking" }

// Outbox implements node.Layer: nothing (the noise goes on the copies
// sent).
func (*DecayingTracking) Outbox(int) ([]*wire.Message, error) { return nil, nil }

// Begin implements node.Layer: it reseeds the round's noise and, in the
// layer's first round, takes the start model as the state's reference.
func (l *DecayingTracking) Begin(r int, _ node.Neighborhood) error {
	if !l.have[0] {
		copy(l.ref[0], l.model.Params())
		l.have[0] = true
	}
	l.round, l.sent = r, [2]*float32{}
	l.norm, l.clipped = 0, false
	l.src = noiseStream(l.random, l.id, r)
	return nil
}

// Release implements node.Releaser: the state and tracker vectors are
// clipped around their previous release and noised in place (once per
// round: a copy shared by several peers is noised once, another copy must
// hold the same exact vector and gets the same release); any other vector
// is refused.
func (l *DecayingTracking) Release(out []*wire.Message) ([]*wire.Message, error) {
	for _, m := range out {
		if m.Kind != wire.KindVector {
			continue
		}
		var k int
		switch m.Payload.Tag {
		case strategy.TagStart:
			k = 0
		case strategy.TagTracker, strategy.TagAlpha:
			k = 1
		case strategy.TagSDEdge:
			// gradient_tracking_sd's round-0 draw for a private edge
			// weight: uniform numbers from the node's stream, independent
			// of its data, so releasing them costs nothing.
			continue
		default:
			return nil, fmt.Errorf("decaying laplace tracking layer: a %q vector is neither gradient tracking's state nor its tracker (or exchanged tracker share); only those two are released with the round's noise", m.Payload.Tag)
		}
		d := m.Payload.Data
		if len(d) != len(l.exact) {
			return nil, fmt.Errorf("decaying laplace tracking layer: a %q vector of %d values, the model has %d", m.Payload.Tag, len(d), len(l.exact))
		}
		if len(d) == 0 || l.sent[k] == &d[0] {
			continue // the round's release, shared by another peer
		}
		if l.sent[k] != nil {
			return nil, fmt.Errorf("decaying laplace tracking layer: a second %q vector in round %d; one release of each is accounted", m.Payload.Tag, l.round)
		}
		if err := l.release(k, d); err != nil {
			return nil, err
		}
		l.sent[k] = &d[0]
	}
	return out, nil
}

// release turns d, the exact vector k, into r + clip(d − r) + η in place,
// makes it the new reference and charges it.
func (l *DecayingTracking) release(k int, d []float32) error {
	if ok, at := vec.AllFinite(d); !ok {
		return fmt.Errorf("decaying laplace tracking layer: a non-finite value at %d", at)
	}
	r, u := l.ref[k], l.exact
	for i := range d {
		u[i] = d[i] - r[i]
	}
	norm := vec.SumAbs(u)
	clipped := privacy.ClipL1(u, DecayingClip(l.clip, l.p, l.round))
	b := DecayingScale(l.c, l.q, l.round)
	for i := range d {
		// The difference of two i.i.d. Exp(1) draws is Laplace(0, 1).
		d[i] = r[i] + u[i] + float32(b*(l.src.ExpFloat64()-l.src.ExpFloat64()))
	}
	copy(r, d)
	l.have[k] = true
	l.eps += 2 * DecayingClip(l.clip, l.p, l.round) / b
	l.rels++
	l.norm, l.clipped = max(l.norm, norm), l.clipped || clipped
	return nil
}

// End implements node.Layer: the node's ε so far (pure, δ = 0).
func (l *DecayingTracking) End(rd *node.Ready) error {
	rd.Reports = append(rd.Reports, &node.PrivacyReport{
		Mode: "laplace_decaying", Epsilon: l.eps, Delta: 0, Accountant: "pure",
		Clip: DecayingClip(l.clip, l.p, l.round), Releases: l.rels,
		Sampling: privacy.Unamplified().String(), Seeded: l.seeded,
		Norm: l.norm, Clipped: l.clipped,
	})
	return nil
}

// Snapshot implements node.Layer: ε, the releases, and the two references
// (a restarted node clips around what it last released).
//
//	version u8 (1), ε u64, releases u64, have u8 ×2, n u64, ref[0] and ref[1] as n float32 bits each (little endian)
func (l *DecayingTracking) Snapshot() ([]byte, error) {
	b := appendSpent(nil, l.eps, l.rels)
	for _, h := range l.have {
		var v byte
		if h {
			v = 1
		}
		b = append(b, v)
	}
	b = binary.LittleEndian.AppendUint64(b, uint64(len(l.exact)))
	for _, r := range l.ref {
		for _, v := range r {
			b = binary.LittleEndian.AppendUint32(b, math.Float32bits(v))
		}
	}
	return b, nil
}

// Restore implements node.Layer.
func (l *DecayingTracking) Restore(b []byte) error {
	n := len(l.exact)
	if len(b) != 27+8*n || b[0] != stateVersion || binary.LittleEndian.Uint64(b[19:]) != uint64(n) {
		return fmt.Errorf("decaying laplace tracking layer: not a state of format %d for %d parameters", stateVersion, n)
	}
	l.eps, l.rels = readSpent(b)
	l.have = [2]bool{b[17] == 1, b[18] == 1}
	for k := range l.ref {
		for i := range l.ref[k] {
			l.ref[k][i] = math.Float32frombits(binary.LittleEndian.Uint32(b[27+4*(k*n+i):]))
		}
	}
	return nil
}

var _ node.Releaser = (*DecayingTracking)(nil)
