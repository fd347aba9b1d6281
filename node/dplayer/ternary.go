package dplayer

import (
	"fmt"
	"math"

	"github.com/trellis-fl/trellis/internal/seed"
	"github.com/trellis-fl/trellis/nn"
	"github.com/trellis-fl/trellis/node"
	"github.com/trellis-fl/trellis/privacy"
	"github.com/trellis-fl/trellis/vec"
	"github.com/trellis-fl/trellis/wire"
)

// Ternary is differential privacy by stochastic ternary quantization (the
// survey, §3.2.2 and Table 4, ref. [132]): the round's update u is clipped
// to L1 norm C and every coordinate is replaced by a random value of
// {−B, 0, +B} (B = level ≥ C): sign(u_i)·B with probability |u_i|/B, 0
// otherwise, so that E[Q(u_i)] = u_i ([132]'s quantizer, unbiased). The
// node keeps start + Q(u) and sends it (one release a round, as with
// Decaying); the quantizer's randomness is the only noise.
//
// The guarantee is [132]'s: (0, δ)-DP per release, not pure ε-DP. An
// input 0 never yields ±B, another input does, so no ε bounds the ratio of
// the output probabilities. What is bounded is the total variation between
// the output laws of two adjacent updates: both put probability ≥ 1 − C/B
// on the all-zero vector (Π(1 − |u_i|/B) ≥ 1 − ‖u‖₁/B), so any event's
// probability moves by at most δ = C/B, and the update C·e₁ against −C·e₁
// reaches it. R releases compose (basic composition) to (0, R·C/B).
type Ternary struct {
	releasing
	id            int
	model         *nn.Model
	random        seed.Source
	src           *privacy.Stream
	seeded        bool
	clip, level   float64
	round         int
	start, update []float32
	drawn         bool
	charged       bool
	delta         float64
	releases      int
	norm          float64
	clipped       bool
}

// NewTernary returns node id's ternary-quantization layer over model with
// L1 clip C > 0 and level B ≥ C; random is the node's seed.Source
// (purpose seed.Noise).
func NewTernary(id int, model *nn.Model, random seed.Source, clip, level float64) (*Ternary, error) {
	if model == nil || random == nil {
		return nil, fmt.Errorf("ternary layer: a model and a seed source are required")
	}
	if !(clip > 0) || math.IsInf(clip, 0) || !(level >= clip) || math.IsInf(level, 0) {
		return nil, fmt.Errorf("ternary layer: clip %v and level %v, need 0 < clip ≤ level, both finite", clip, level)
	}
	n := model.NumParams()
	return &Ternary{releasing: releasing{passive{"ternary layer"}}, id: id, model: model, random: random, seeded: random.Seeded(seed.Noise),
		clip: clip, level: level, start: make([]float32, n), update: make([]float32, n)}, nil
}

// TernaryProbs is the quantizer's law for input x (|x| ≤ level): the
// probabilities of −level, 0 and +level.
func TernaryProbs(x, level float64) (minus, zero, plus float64) {
	p := math.Abs(x) / level
	if x > 0 {
		return 0, 1 - p, p
	}
	return p, 1 - p, 0
}

// TernaryQuantize replaces every u_i (|u_i| ≤ level) by sign(u_i)·level
// with probability |u_i|/level, by 0 otherwise.
func TernaryQuantize(u []float32, level float64, src *privacy.Stream) {
	for i, x := range u {
		// A uniform draw in [0, 1) from the top 53 bits.
		if float64(src.Uint64()>>11)/(1<<53) < math.Abs(float64(x))/level {
			u[i] = float32(math.Copysign(level, float64(x)))
		} else {
			u[i] = 0
		}
	}
}

// TernaryDelta is the δ of rounds releases at δ = C/B each (ε = 0), capped
// at 1.
func TernaryDelta(clip, level float64, rounds int) float64 {
	return min(1, float64(max(rounds, 0))*clip/level)
}

// TernaryLevelFor is the level B at which rounds releases spend δ.
func TernaryLevelFor(delta, clip float64, rounds int) (float64, error) {
	if !(delta > 0 && delta < 1) || rounds < 1 {
		return 0, fmt.Errorf("ternary: target δ = %v over %d rounds, need δ in (0, 1) and rounds ≥ 1", delta, rounds)
	}
	return float64(rounds) * clip / delta, nil
}

// Name implements node.Layer.
func (*Ternary) Name() string { return "dp-ternary" }

// Begin implements node.Layer: it keeps the round's start model and
// reseeds the round's randomness.
func (l *Ternary) Begin(r int, _ node.Neighborhood) error {
	copy(l.start, l.model.Params())
	l.round, l.drawn, l.charged = r, false, false
	l.src = noiseStream(l.random, l.id, r)
	return nil
}

// Outbox implements node.Layer: after training, before the strategy
// shares, the kept model becomes start + Q(clip(update)).
func (l *Ternary) Outbox(int) ([]*wire.Message, error) {
	if l.drawn {
		return nil, nil
	}
	w, u := l.model.Params(), l.update
	for i := range w {
		u[i] = w[i] - l.start[i]
	}
	if ok, at := vec.AllFinite(u); !ok {
		return nil, fmt.Errorf("ternary layer: the round's update holds a non-finite value at %d", at)
	}
	l.norm = vec.SumAbs(u)
	l.clipped = privacy.ClipL1(u, l.clip)
	TernaryQuantize(u, l.level, l.src)
	for i := range w {
		w[i] = l.start[i] + u[i]
	}
	l.drawn = true
	return nil, nil
}

// Release implements node.Releaser: every model vector must be the kept,
// quantized model; other vectors are refused (a second, unaccounted
// release).
func (l *Ternary) Release(out []*wire.Message) ([]*wire.Message, error) {
	if !l.drawn {
		return nil, fmt.Errorf("ternary layer: vectors to release before the round's update was quantized")
	}
	w := l.model.Params()
	for _, m := range out {
		if m.Kind != wire.KindVector {
			continue
		}
		if err := checkKeptModel("ternary layer", "quantized", "only the quantized model is released", w, m); err != nil {
			return nil, err
		}
		if !l.charged {
			l.delta = min(1, l.delta+l.clip/l.level)
			l.releases++
			l.charged = true
		}
	}
	return out, nil
}

// End implements node.Layer: the node's (0, δ) so far goes into
// Ready.Reports.
func (l *Ternary) End(rd *node.Ready) error {
	rd.Reports = append(rd.Reports, &node.PrivacyReport{
		Mode: "ternary", Epsilon: 0, Delta: l.delta, Accountant: "basic",
		Clip: l.clip, Releases: l.releases, Sampling: privacy.Unamplified().String(), Seeded: l.seeded,
		Norm: l.norm, Clipped: l.clipped,
	})
	return nil
}

// Snapshot implements node.Layer: the δ spent and the releases so far.
//
//	version u8 (1), δ float64 bits u64, releases u64 (little endian)
func (l *Ternary) Snapshot() ([]byte, error) { return appendSpent(nil, l.delta, l.releases), nil }

// Restore implements node.Layer.
func (l *Ternary) Restore(b []byte) error {
	if len(b) != spentBytes || b[0] != stateVersion {
		return fmt.Errorf("ternary layer: not a state of format %d", stateVersion)
	}
	l.delta, l.releases = readSpent(b)
	return nil
}

var _ node.Releaser = (*Ternary)(nil)
