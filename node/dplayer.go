package node

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/trellis-fl/trellis/internal/seed"
	"github.com/trellis-fl/trellis/nn"
	"github.com/trellis-fl/trellis/privacy"
	"github.com/trellis-fl/trellis/strategy"
	"github.com/trellis-fl/trellis/wire"
)

// PrivacyReport is a DP layer's account at the end of a round.
type PrivacyReport struct {
	// Mode is "node" (node-level DP, DPLayer) or "sample" (DP-SGD,
	// SampleDPLayer).
	Mode string
	// Epsilon is the node's ε so far at Delta (privacy.Accountant over
	// every event charged since the first round).
	Epsilon, Delta float64
	// Multiplier is the noise multiplier z (noise standard deviation z·Clip
	// on the clipped update, or on the clipped per-sample gradient sum).
	Multiplier, Clip float64
	// Releases counts the events charged so far: the node's noisy releases
	// (node level) or DP-SGD steps (sample level).
	Releases int
	// Sampling is how the charged steps were sampled (privacy.Sampling).
	Sampling string
	// Seeded says the noise came from the experiment seed (simulation): a
	// seeded run is not private, whatever ε says.
	Seeded bool
	// Norm is the L2 norm of the round's update before clipping and
	// Clipped whether it was clipped (node level; zero otherwise).
	Norm    float64
	Clipped bool
}

// noiseStream is the privacy.Stream of a node's round: seeded from the
// experiment seed, per node and round (so a resumed run draws the same
// noise), or from crypto/rand when the Source does not seed seed.Noise.
func noiseStream(random seed.Source, id, r int) *privacy.Stream {
	if !random.Seeded(seed.Noise) {
		return privacy.NewCryptoSource()
	}
	rng := random.Stream(seed.Noise, uint64(id), uint64(r))
	return privacy.NewSeededSource(rng.Uint64(), rng.Uint64())
}

// DPLayer is node-level differential privacy (spec/privacy.md, "Levels"):
// the round's update — the change of the model since the round began — is
// clipped to L2 norm Clip and noised with N(0, (z·Clip)² I) once per
// round, and the model itself becomes start + noisy update before the
// strategy shares anything. Every vector the node then sends (the model,
// the update, R-DPFL's direction, to one neighbour or to all) is
// post-processing of that one noisy release, so the round is charged one
// Gaussian release however many vectors, tags and recipients it has; and
// the model the node keeps, combines from and is evaluated with is the
// released one, so later rounds do not leak the un-noised update either.
//
// Release refuses, with an error, a vector that is not derived from the
// noisy model alone: a model different from the node's, a tracker (gradient
// tracking accumulates un-noised gradients), a model trained in Share
// (Ditto's TrainCopy). What ε cannot cover and the layer cannot see:
// a strategy whose Combine consults the node's data (BatchLoss, Validate:
// UBAR's loss screen) makes the next start depend on the data beyond the
// releases.
type DPLayer struct {
	id     int
	model  *nn.Model
	random seed.Source
	dp     *privacy.NodeDP
	// src is the round's noise stream (NodeDP holds the pointer; Begin
	// reseeds it in place).
	src      *privacy.Stream
	seeded   bool
	start    []float32
	update   []float32
	released bool // this round's noise was drawn
	last     privacy.Released
	lr       float64
	steps    int
}

// NewDPLayer returns node id's node-level DP layer over model (the node's
// own, whose parameters it noises in place), with clip C > 0, noise
// multiplier z > 0 and δ in (0, 1); random is the node's seed.Source
// (purpose seed.Noise).
func NewDPLayer(id int, model *nn.Model, random seed.Source, clip, multiplier, delta float64) (*DPLayer, error) {
	if model == nil || random == nil {
		return nil, fmt.Errorf("dp layer: a model and a seed source are required")
	}
	src := noiseStream(random, id, 0)
	dp, err := privacy.NewNodeDP(clip, multiplier, delta, src)
	if err != nil {
		return nil, err
	}
	n := model.NumParams()
	return &DPLayer{id: id, model: model, random: random, dp: dp, src: src,
		seeded: random.Seeded(seed.Noise), start: make([]float32, n), update: make([]float32, n)}, nil
}

// Name implements Layer.
func (*DPLayer) Name() string { return "dp" }

// Phases implements Layer.
func (*DPLayer) Phases() int { return 1 }

// Owns implements Layer: no message kinds of its own.
func (*DPLayer) Owns(wire.Kind) bool { return false }

// Expects implements Layer: nothing of its own.
func (*DPLayer) Expects(int) []Expect { return nil }

// ReleasesVectors implements Releaser: noised, they go out.
func (*DPLayer) ReleasesVectors() bool { return true }

// Observe implements Layer.
func (*DPLayer) Observe(*wire.Message, error) error { return nil }

// Handle implements Layer (never called: the layer owns no kind).
func (*DPLayer) Handle(m *wire.Message) error {
	return fmt.Errorf("dp layer: owns no %s messages", m.Kind)
}

// ReleasePhase implements Releaser.
func (*DPLayer) ReleasePhase() int { return 0 }

// Begin implements Layer: it keeps the round's start model and reseeds the
// round's noise.
func (l *DPLayer) Begin(r int, _ Neighborhood) error {
	copy(l.start, l.model.Params())
	if l.seeded {
		*l.src = *noiseStream(l.random, l.id, r)
	}
	l.released, l.last = false, privacy.Released{}
	return nil
}

// Outbox implements Layer. At the round's first exchange phase — after
// training, before the strategy's Share at any release phase — the model
// becomes start + noisy(clipped(update)) and the release is charged.
func (l *DPLayer) Outbox(int) ([]*wire.Message, error) {
	if l.released {
		return nil, nil
	}
	w := l.model.Params()
	for i := range w {
		l.update[i] = w[i] - l.start[i]
	}
	rel, err := l.dp.Release(l.update)
	if err != nil {
		return nil, err
	}
	for i := range w {
		w[i] = l.start[i] + l.update[i]
	}
	l.released, l.last = true, rel
	return nil, nil
}

// See implements Layer: it notes the step size and step count the
// strategy is shown (for the check of direction vectors).
func (l *DPLayer) See(v *strategy.View) {
	l.lr, l.steps = v.LR, v.Steps
}

// Release implements Releaser: every outgoing vector must be derived from
// the noisy model alone (see DPLayer); the vectors go out unchanged.
func (l *DPLayer) Release(out []*wire.Message) ([]*wire.Message, error) {
	if !l.released {
		return nil, fmt.Errorf("dp layer: vectors to release before the round's noise was drawn")
	}
	w := l.model.Params()
	var prev []float32
	for _, m := range out {
		if m.Kind != wire.KindVector {
			continue
		}
		d := m.Payload.Data
		if len(d) > 0 && len(prev) == len(d) && &prev[0] == &d[0] {
			continue // the same copy to another peer: checked already
		}
		if err := l.derived(m.Payload.Tag, d, w); err != nil {
			return nil, err
		}
		prev = d
	}
	return out, nil
}

// derived checks that a vector of the given tag is a function of the noisy
// model, the round's start and public values only.
func (l *DPLayer) derived(tag string, d, w []float32) error {
	if len(d) != len(w) {
		return fmt.Errorf("dp layer: a %q vector of %d values, the model has %d", tag, len(d), len(w))
	}
	switch tag {
	case strategy.TagModel:
		for i := range d {
			if math.Float32bits(d[i]) != math.Float32bits(w[i]) {
				return fmt.Errorf("dp layer: the %q vector differs from the noisy model at %d: it is not covered by the round's release", tag, i)
			}
		}
		return nil
	case strategy.TagUpdate:
		for i := range d {
			if math.Float32bits(d[i]) != math.Float32bits(w[i]-l.start[i]) {
				return fmt.Errorf("dp layer: the %q vector differs from the noisy update at %d: it is not covered by the round's release", tag, i)
			}
		}
		return nil
	case strategy.TagStart:
		for i := range d {
			if math.Float32bits(d[i]) != math.Float32bits(l.start[i]) {
				return fmt.Errorf("dp layer: the %q vector differs from the round's start model at %d", tag, i)
			}
		}
		return nil
	case strategy.TagDirection:
		// R-DPFL's u = (start − w)/(η·K): compare u·η·K with start − w.
		etaK := l.lr * float64(l.steps)
		for i := range d {
			want := float64(l.start[i] - w[i])
			got := float64(d[i])
			if etaK > 0 {
				got *= etaK
			}
			if math.Abs(got-want) > 1e-4*math.Abs(want)+1e-7 && !(etaK == 0 && d[i] == 0) {
				return fmt.Errorf("dp layer: the %q vector is not (start − noisy model)/(η·K) at %d", tag, i)
			}
		}
		return nil
	}
	return fmt.Errorf("dp layer: a %q vector is not derived from the round's noisy update alone; node-level DP cannot cover it", tag)
}

// ReportKind implements Report.
func (*PrivacyReport) ReportKind() string { return "privacy" }

// End implements Layer: the node's ε so far goes into Ready.Reports.
func (l *DPLayer) End(rd *Ready) error {
	rd.Reports = append(rd.Reports, &PrivacyReport{
		Mode: "node", Epsilon: l.dp.Epsilon(), Delta: l.dp.Delta(),
		Multiplier: l.dp.Multiplier(), Clip: l.dp.Clip(), Releases: l.dp.Releases(),
		Sampling: privacy.Unamplified().String(), Seeded: l.seeded,
		Norm: l.last.Norm, Clipped: l.last.Clipped,
	})
	return nil
}

// Trainer trains the node's model in place of nn.Model.Train (Config.Trainer):
// sample-level DP's DP-SGD.
type Trainer interface {
	Train(src nn.Batches, opt nn.Optimizer, cfg nn.TrainConfig, rng *rand.Rand) (nn.TrainResult, error)
}

// SampleDPLayer is sample-level differential privacy (DP-SGD,
// spec/privacy.md "Levels"): it is the node's Trainer — nn.DPSGD, per-sample
// clipping and noise every step — and a Layer that charges the round's
// steps to the node's accountant when the round ends: as Poisson-subsampled
// Gaussian steps with q = rate for nn.PoissonBatches, unamplified (q = 1)
// for shuffled fixed-size batches, which are not a random sample.
// Everything the node sends is post-processing of the noisy steps, so the
// layer does not touch the release.
type SampleDPLayer struct {
	id     int
	random seed.Source
	sgd    *nn.DPSGD
	src    *privacy.Stream
	seeded bool
	acct   *privacy.Accountant
	event  privacy.GaussianEvent
	delta  float64
	clip   float64
}

// NewSampleDPLayer returns node id's DP-SGD trainer and accounting layer
// for model, with per-sample clip C > 0, noise multiplier z > 0, δ in
// (0, 1) and DP-SGD's sampling (cfg.Rate the Poisson rate for
// nn.PoissonBatches).
func NewSampleDPLayer(id int, model *nn.Model, random seed.Source, cfg nn.DPConfig, delta float64) (*SampleDPLayer, error) {
	if model == nil || random == nil {
		return nil, fmt.Errorf("sample dp layer: a model and a seed source are required")
	}
	if !(cfg.Multiplier > 0) || math.IsInf(cfg.Multiplier, 0) {
		return nil, fmt.Errorf("sample dp layer: noise multiplier = %v, need a finite value > 0", cfg.Multiplier)
	}
	if !(delta > 0 && delta < 1) {
		return nil, fmt.Errorf("sample dp layer: delta = %v, allowed range (0, 1)", delta)
	}
	src := noiseStream(random, id, 0)
	sgd, err := nn.NewDPSGD(model, cfg, src)
	if err != nil {
		return nil, err
	}
	acct, err := privacy.NewAccountant(nil)
	if err != nil {
		return nil, err
	}
	s := privacy.Unamplified()
	if cfg.Sampling == nn.PoissonBatches {
		s = privacy.Poisson(cfg.Rate)
	}
	return &SampleDPLayer{id: id, random: random, sgd: sgd, src: src, seeded: random.Seeded(seed.Noise),
		acct: acct, event: privacy.GaussianEvent{Multiplier: cfg.Multiplier, Sampling: s}, delta: delta, clip: cfg.Clip}, nil
}

// UseOrders makes the layer's accountant compute ε over orders (e.g.
// privacy.DenseOrders) instead of the spec's grid; only before the first
// step is accounted.
func (l *SampleDPLayer) UseOrders(orders []float64) error {
	if l.acct.Steps() > 0 {
		return fmt.Errorf("sample dp layer: the order grid changed after %d steps", l.acct.Steps())
	}
	a, err := privacy.NewAccountant(orders)
	if err != nil {
		return err
	}
	l.acct = a
	return nil
}

// UseOrders is NodeDP.UseOrders for the layer's accountant.
func (l *DPLayer) UseOrders(orders []float64) error { return l.dp.UseOrders(orders) }

// Train implements Trainer: DP-SGD.
func (l *SampleDPLayer) Train(src nn.Batches, opt nn.Optimizer, cfg nn.TrainConfig, rng *rand.Rand) (nn.TrainResult, error) {
	return l.sgd.Train(src, opt, cfg, rng)
}

// Name implements Layer.
func (*SampleDPLayer) Name() string { return "dp-sgd" }

// Phases implements Layer.
func (*SampleDPLayer) Phases() int { return 1 }

// Owns implements Layer.
func (*SampleDPLayer) Owns(wire.Kind) bool { return false }

// Expects implements Layer: nothing of its own.
func (*SampleDPLayer) Expects(int) []Expect { return nil }

// Observe implements Layer.
func (*SampleDPLayer) Observe(*wire.Message, error) error { return nil }

// Handle implements Layer (never called).
func (*SampleDPLayer) Handle(m *wire.Message) error {
	return fmt.Errorf("sample dp layer: owns no %s messages", m.Kind)
}

// Outbox implements Layer: no messages.
func (*SampleDPLayer) Outbox(int) ([]*wire.Message, error) { return nil, nil }

// See implements Layer: nothing to show.
func (*SampleDPLayer) See(*strategy.View) {}

// Begin implements Layer: the round's noise is reseeded.
func (l *SampleDPLayer) Begin(r int, _ Neighborhood) error {
	if l.seeded {
		*l.src = *noiseStream(l.random, l.id, r)
	}
	return nil
}

// End implements Layer: the round's DP-SGD steps are charged and the
// node's ε goes into Ready.Reports. Steps taken outside Trainer (a
// strategy's TrainCopy) are not DP-SGD and not covered.
func (l *SampleDPLayer) End(rd *Ready) error {
	if rd.Trained && rd.Train.Steps > 0 {
		if err := l.acct.Compose(l.event, rd.Train.Steps); err != nil {
			return err
		}
	}
	eps, _, err := l.acct.Epsilon(l.delta)
	if err != nil {
		return err
	}
	rd.Reports = append(rd.Reports, &PrivacyReport{
		Mode: "sample", Epsilon: eps, Delta: l.delta, Multiplier: l.event.Multiplier, Clip: l.clip,
		Releases: l.acct.Steps(), Sampling: l.event.Sampling.String(), Seeded: l.seeded,
	})
	return nil
}

// Snapshot implements Layer: the accountant (the ε the node has spent
// must continue after a restart, never start again from 0). The round's
// noise stream needs nothing: it is drawn per round, from the seed or from
// crypto/rand.
//
//	version u8 (1), then privacy.Accountant.MarshalBinary
func (l *DPLayer) Snapshot() ([]byte, error) { return accountantState(l.dp.Accountant()) }

// Restore implements Layer.
func (l *DPLayer) Restore(b []byte) error { return restoreAccountant("dp", l.dp.Accountant(), b) }

// Snapshot implements Layer: the accountant of the DP-SGD steps (as
// DPLayer's).
func (l *SampleDPLayer) Snapshot() ([]byte, error) { return accountantState(l.acct) }

// Restore implements Layer.
func (l *SampleDPLayer) Restore(b []byte) error { return restoreAccountant("dp-sgd", l.acct, b) }

func accountantState(a *privacy.Accountant) ([]byte, error) {
	b, err := a.MarshalBinary()
	if err != nil {
		return nil, err
	}
	return append([]byte{layerStateVersion}, b...), nil
}

func restoreAccountant(layer string, a *privacy.Accountant, b []byte) error {
	if len(b) < 1 || b[0] != layerStateVersion {
		return fmt.Errorf("%s layer: not a %s state of format %d", layer, layer, layerStateVersion)
	}
	if err := a.UnmarshalBinary(b[1:]); err != nil {
		return fmt.Errorf("%s layer: %w", layer, err)
	}
	return nil
}

// Interface checks.
var (
	_ Releaser = (*DPLayer)(nil)
	_ Layer    = (*SampleDPLayer)(nil)
	_ Trainer  = (*SampleDPLayer)(nil)
)
