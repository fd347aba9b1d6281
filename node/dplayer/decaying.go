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

// Decaying is differentially private distributed gradient descent with
// decaying Laplace noise (the survey, §3.2.2 and Table 4, ref. [117]):
// in round k the round's update is clipped to L1 norm C·p^k — [117]'s
// geometrically decaying step size γ_k = γ_0·p^k, as the bound on how far
// one round's local training may move the model — and one Laplace vector
// η(k), i.i.d. Laplace(0, b_k) per coordinate with b_k = c·q^k, is added
// to it: the node keeps the noisy model, and it is what every model vector
// of the round carries (one release). As in [117], where an agent mixes
// its own noisy message with its neighbours', the next round then depends
// on the node's data only through the noisy releases and its next clipped
// update, so the round's L1 sensitivity is Δ_k = 2·C·p^k (two adjacent
// data sets move the model by two different clipped updates) whatever the
// strategy combines: round k is (Δ_k/b_k)-DP and the run after R released
// rounds is pure ε-DP (δ = 0) with the geometric sum DecayingEpsilon.
//
// Only model vectors (strategy.TagModel) are released: anything else
// (updates, trackers, start models) is refused with an error, since it
// would be a second, unaccounted release of the round.
type Decaying struct {
	releasing
	id            int
	model         *nn.Model
	random        seed.Source
	src           privacy.Source
	seeded        bool
	clip, c, q, p float64
	round         int
	start, update []float32
	drawn         bool // this round's noise was drawn (Outbox ran)
	charged       bool // this round's release was charged
	eps           float64
	releases      int
	norm          float64
	clipped       bool
}

// NewDecaying returns node id's decaying-Laplace layer over model (the
// node's own), with L1 clip C > 0, initial noise scale c > 0, noise decay
// q and step (clip) decay p, both in (0, 1]; random is the node's
// seed.Source (purpose seed.Noise).
func NewDecaying(id int, model *nn.Model, random seed.Source, clip, c, q, p float64) (*Decaying, error) {
	if model == nil || random == nil {
		return nil, fmt.Errorf("decaying laplace layer: a model and a seed source are required")
	}
	if err := checkDecaying(clip, c, q, p); err != nil {
		return nil, err
	}
	n := model.NumParams()
	return &Decaying{releasing: releasing{passive{"decaying laplace layer"}}, id: id, model: model, random: random, seeded: random.Seeded(seed.Noise),
		clip: clip, c: c, q: q, p: p,
		start: make([]float32, n), update: make([]float32, n)}, nil
}

func checkDecaying(clip, c, q, p float64) error {
	finitePos := func(v float64) bool { return v > 0 && !math.IsInf(v, 0) }
	switch {
	case !finitePos(clip):
		return fmt.Errorf("decaying laplace layer: clip = %v, need a finite value > 0", clip)
	case !finitePos(c):
		return fmt.Errorf("decaying laplace layer: noise scale c = %v, need a finite value > 0", c)
	case !(q > 0 && q <= 1):
		return fmt.Errorf("decaying laplace layer: noise decay q = %v, allowed range (0, 1]", q)
	case !(p > 0 && p <= 1):
		return fmt.Errorf("decaying laplace layer: step decay p = %v, allowed range (0, 1]", p)
	}
	return nil
}

// DecayingScale is round k's Laplace scale b_k = c·q^k.
func DecayingScale(c, q float64, k int) float64 { return c * math.Pow(q, float64(k)) }

// DecayingClip is round k's L1 bound on the update, C·p^k.
func DecayingClip(clip, p float64, k int) float64 { return clip * math.Pow(p, float64(k)) }

// DecayingEpsilon is the pure ε of rounds 0 … rounds−1, all released:
// Σ_k Δ_k/b_k = (2C/c)·Σ_k (p/q)^k = (2C/c)·(1 − ρ^R)/(1 − ρ), ρ = p/q
// ((2C/c)·R when ρ = 1). With p < q it stays below (2C/c)/(1 − p/q)
// however many rounds run.
func DecayingEpsilon(clip, c, q, p float64, rounds int) float64 {
	if rounds <= 0 {
		return 0
	}
	rho := p / q
	if rho == 1 {
		return 2 * clip / c * float64(rounds)
	}
	return 2 * clip / c * (1 - math.Pow(rho, float64(rounds))) / (1 - rho)
}

// DecayingScaleFor is the c for which DecayingEpsilon is eps after rounds
// rounds (ε is inversely proportional to c).
func DecayingScaleFor(eps, clip, q, p float64, rounds int) (float64, error) {
	if !(eps > 0) || math.IsInf(eps, 0) || rounds < 1 {
		return 0, fmt.Errorf("decaying laplace: target ε = %v over %d rounds, need ε > 0 and rounds ≥ 1", eps, rounds)
	}
	return DecayingEpsilon(clip, 1, q, p, rounds) / eps, nil
}

// Name implements node.Layer.
func (*Decaying) Name() string { return "dp-laplace-decaying" }

// Begin implements node.Layer: it keeps the round's start model and
// reseeds the round's noise.
func (l *Decaying) Begin(r int, _ node.Neighborhood) error {
	copy(l.start, l.model.Params())
	l.round, l.drawn, l.charged = r, false, false
	l.src = noiseStream(l.random, l.id, r)
	return nil
}

// Outbox implements node.Layer. At the round's first exchange phase, after
// training and before the strategy shares: the update is clipped to
// C·p^k and the round's noise η(k) drawn; the kept model becomes start +
// clipped update + η(k).
func (l *Decaying) Outbox(int) ([]*wire.Message, error) {
	if l.drawn {
		return nil, nil
	}
	w := l.model.Params()
	u := l.update
	for i := range w {
		u[i] = w[i] - l.start[i]
	}
	if ok, at := vec.AllFinite(u); !ok {
		return nil, fmt.Errorf("decaying laplace layer: the round's update holds a non-finite value at %d", at)
	}
	l.norm = vec.SumAbs(u)
	l.clipped = privacy.ClipL1(u, DecayingClip(l.clip, l.p, l.round))
	b := DecayingScale(l.c, l.q, l.round)
	for i := range w {
		// The difference of two i.i.d. Exp(1) draws is Laplace(0, 1).
		w[i] = l.start[i] + u[i] + float32(b*(l.src.ExpFloat64()-l.src.ExpFloat64()))
	}
	l.drawn = true
	return nil, nil
}

// Release implements node.Releaser: every model vector must be the kept,
// noisy model (the same to every peer, so the round is one release);
// other vectors are refused.
func (l *Decaying) Release(out []*wire.Message) ([]*wire.Message, error) {
	if !l.drawn {
		return nil, fmt.Errorf("decaying laplace layer: vectors to release before the round's noise was drawn")
	}
	w := l.model.Params()
	for _, m := range out {
		if m.Kind != wire.KindVector {
			continue
		}
		if err := checkKeptModel("decaying laplace layer", "(noisy)", "only the model is released with the round's noise", w, m); err != nil {
			return nil, err
		}
		if !l.charged {
			l.eps += 2 * DecayingClip(l.clip, l.p, l.round) / DecayingScale(l.c, l.q, l.round)
			l.releases++
			l.charged = true
		}
	}
	return out, nil
}

// End implements node.Layer: the node's ε so far (pure, δ = 0) goes into
// Ready.Reports.
func (l *Decaying) End(rd *node.Ready) error {
	rd.Reports = append(rd.Reports, &node.PrivacyReport{
		Mode: "laplace_decaying", Epsilon: l.eps, Delta: 0, Accountant: "pure",
		Clip:     DecayingClip(l.clip, l.p, l.round), // no multiplier: the scale b_k is c·q^k
		Releases: l.releases, Sampling: privacy.Unamplified().String(), Seeded: l.seeded,
		Norm: l.norm, Clipped: l.clipped,
	})
	return nil
}

// Snapshot implements node.Layer: the ε spent and the releases so far.
//
//	version u8 (1), ε float64 bits u64, releases u64 (little endian)
func (l *Decaying) Snapshot() ([]byte, error) { return appendSpent(nil, l.eps, l.releases), nil }

// Restore implements node.Layer.
func (l *Decaying) Restore(b []byte) error {
	if len(b) != spentBytes || b[0] != stateVersion {
		return fmt.Errorf("decaying laplace layer: not a state of format %d", stateVersion)
	}
	l.eps, l.releases = readSpent(b)
	return nil
}

var _ node.Releaser = (*Decaying)(nil)
