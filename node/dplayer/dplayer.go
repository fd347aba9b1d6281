package dplayer

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/trellis-fl/trellis/internal/seed"
	"github.com/trellis-fl/trellis/nn"
	"github.com/trellis-fl/trellis/node"
	"github.com/trellis-fl/trellis/privacy"
	"github.com/trellis-fl/trellis/strategy"
	"github.com/trellis-fl/trellis/wire"
)

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

// Layer is node-level differential privacy: the round's update — the
// change of the model since the round began — is clipped to L2 norm Clip
// and noised with N(0, (z·Clip)² I) once per round, and the model itself
// becomes start + noisy update before the strategy shares anything. Every vector the node then sends (the model,
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
type Layer struct {
	releasing
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

// New returns node id's node-level DP layer over model (the node's
// own, whose parameters it noises in place), with clip C > 0, noise
// multiplier z > 0 and δ in (0, 1); random is the node's seed.Source
// (purpose seed.Noise).
func New(id int, model *nn.Model, random seed.Source, clip, multiplier, delta float64) (*Layer, error) {
	if model == nil || random == nil {
		return nil, fmt.Errorf("dp layer: a model and a seed source are required")
	}
	src := noiseStream(random, id, 0)
	dp, err := privacy.NewNodeDP(clip, multiplier, delta, src)
	if err != nil {
		return nil, err
	}
	n := model.NumParams()
	return &Layer{releasing: releasing{passive{"dp layer"}}, id: id, model: model, random: random, dp: dp, src: src,
		seeded: random.Seeded(seed.Noise), start: make([]float32, n), update: make([]float32, n)}, nil
}

// Name implements node.Layer.
func (*Layer) Name() string { return "dp" }

// Begin implements node.Layer: it keeps the round's start model and reseeds the
// round's noise.
func (l *Layer) Begin(r int, _ node.Neighborhood) error {
	copy(l.start, l.model.Params())
	if l.seeded {
		*l.src = *noiseStream(l.random, l.id, r)
	}
	l.released, l.last = false, privacy.Released{}
	return nil
}

// Outbox implements node.Layer. At the round's first exchange phase — after
// training, before the strategy's Share at any release phase — the model
// becomes start + noisy(clipped(update)) and the release is charged.
func (l *Layer) Outbox(int) ([]*wire.Message, error) {
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

// See implements node.Layer: it notes the step size and step count the
// strategy is shown (for the check of direction vectors).
func (l *Layer) See(v *strategy.View) {
	l.lr, l.steps = v.LR, v.Steps
}

// Release implements node.Releaser: every outgoing vector must be derived from
// the noisy model alone (see Layer); the vectors go out unchanged.
func (l *Layer) Release(out []*wire.Message) ([]*wire.Message, error) {
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
func (l *Layer) derived(tag string, d, w []float32) error {
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

// End implements node.Layer: the node's ε so far goes into Ready.Reports.
func (l *Layer) End(rd *node.Ready) error {
	r := l.dp.Reading()
	rd.Reports = append(rd.Reports, &node.PrivacyReport{
		Mode: "node", Epsilon: r.Epsilon, Delta: l.dp.Delta(), Accountant: string(r.Accountant), Fallback: r.Fallback,
		Multiplier: l.dp.Multiplier(), Clip: l.dp.Clip(), Releases: l.dp.Releases(),
		Sampling: privacy.Unamplified().String(), Seeded: l.seeded,
		Norm: l.last.Norm, Clipped: l.last.Clipped,
	})
	return nil
}

// Sample is sample-level differential privacy (DP-SGD): it is the node's
// Trainer — nn.DPSGD, per-sample clipping and noise every step — and a
// node.Layer that charges the round's steps to the node's accountant when
// the round ends: as Poisson-subsampled
// Gaussian steps with q = rate for nn.PoissonBatches, unamplified (q = 1)
// for shuffled fixed-size batches, which are not a random sample.
// Everything the node sends is post-processing of the noisy steps, so the
// layer does not touch the release.
type Sample struct {
	passive
	id     int
	random seed.Source
	sgd    *nn.DPSGD
	src    *privacy.Stream
	seeded bool
	acct   *privacy.Accountant
	event  privacy.GaussianEvent
	delta  float64
	clip   float64
	method privacy.Method
}

// NewSample returns node id's DP-SGD trainer and accounting layer
// for model, with per-sample clip C > 0, noise multiplier z > 0, δ in
// (0, 1) and DP-SGD's sampling (cfg.Rate the Poisson rate for
// nn.PoissonBatches).
func NewSample(id int, model *nn.Model, random seed.Source, cfg nn.DPConfig, delta float64) (*Sample, error) {
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
	return &Sample{passive: passive{"sample dp layer"}, id: id, random: random, sgd: sgd, src: src, seeded: random.Seeded(seed.Noise),
		acct: acct, event: privacy.GaussianEvent{Multiplier: cfg.Multiplier, Sampling: s}, delta: delta, clip: cfg.Clip,
		method: privacy.MethodRDP}, nil
}

// UseOrders makes the layer's accountant compute ε over orders (e.g.
// privacy.DenseOrders) instead of the default grid; only before the first
// step is accounted.
func (l *Sample) UseOrders(orders []float64) error {
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
func (l *Layer) UseOrders(orders []float64) error { return l.dp.UseOrders(orders) }

// UseAccountant makes the layer report ε under m (privacy.MethodRDP by
// default; privacy.MethodPLD falls back to RDP, named in the report, where
// PLD fails).
func (l *Layer) UseAccountant(m privacy.Method) error { return l.dp.UseAccountant(m) }

// UseAccountant is Layer.UseAccountant for the DP-SGD steps.
func (l *Sample) UseAccountant(m privacy.Method) error {
	if _, err := privacy.ParseMethod(string(m)); err != nil {
		return fmt.Errorf("sample dp layer: %w", err)
	}
	l.method = m
	return nil
}

// Train implements node.Trainer: DP-SGD.
func (l *Sample) Train(src nn.Batches, opt nn.Optimizer, cfg nn.TrainConfig, rng *rand.Rand) (nn.TrainResult, error) {
	return l.sgd.Train(src, opt, cfg, rng)
}

// Name implements node.Layer.
func (*Sample) Name() string { return "dp-sgd" }

// Outbox implements node.Layer: no messages.
func (*Sample) Outbox(int) ([]*wire.Message, error) { return nil, nil }

// Begin implements node.Layer: the round's noise is reseeded.
func (l *Sample) Begin(r int, _ node.Neighborhood) error {
	if l.seeded {
		*l.src = *noiseStream(l.random, l.id, r)
	}
	return nil
}

// End implements node.Layer: the round's DP-SGD steps are charged and the
// node's ε goes into Ready.Reports. Steps taken outside Trainer (a
// strategy's TrainCopy) are not DP-SGD and not covered.
func (l *Sample) End(rd *node.Ready) error {
	if rd.Trained && rd.Train.Steps > 0 {
		if err := l.acct.Compose(l.event, rd.Train.Steps); err != nil {
			return err
		}
	}
	r, err := l.acct.Reading(l.method, l.event, l.delta)
	if err != nil {
		return err
	}
	rd.Reports = append(rd.Reports, &node.PrivacyReport{
		Mode: "sample", Epsilon: r.Epsilon, Delta: l.delta, Accountant: string(r.Accountant), Fallback: r.Fallback, Multiplier: l.event.Multiplier, Clip: l.clip,
		Releases: l.acct.Steps(), Sampling: l.event.Sampling.String(), Seeded: l.seeded,
	})
	return nil
}

// Snapshot implements node.Layer: the accountant (the ε the node has spent
// must continue after a restart, never start again from 0). The round's
// noise stream needs nothing: it is drawn per round, from the seed or from
// crypto/rand.
//
//	version u8 (1), then privacy.Accountant.MarshalBinary
func (l *Layer) Snapshot() ([]byte, error) { return accountantState(l.dp.Accountant()) }

// Restore implements node.Layer.
func (l *Layer) Restore(b []byte) error { return restoreAccountant("dp", l.dp.Accountant(), b) }

// Snapshot implements node.Layer: the accountant of the DP-SGD steps (as
// Layer's).
func (l *Sample) Snapshot() ([]byte, error) { return accountantState(l.acct) }

// Restore implements node.Layer.
func (l *Sample) Restore(b []byte) error { return restoreAccountant("dp-sgd", l.acct, b) }

func accountantState(a *privacy.Accountant) ([]byte, error) {
	b, err := a.MarshalBinary()
	if err != nil {
		return nil, err
	}
	return append([]byte{stateVersion}, b...), nil
}

func restoreAccountant(layer string, a *privacy.Accountant, b []byte) error {
	if len(b) < 1 || b[0] != stateVersion {
		return fmt.Errorf("%s layer: not a %s state of format %d", layer, layer, stateVersion)
	}
	if err := a.UnmarshalBinary(b[1:]); err != nil {
		return fmt.Errorf("%s layer: %w", layer, err)
	}
	return nil
}

// stateVersion is the format of the layers' states (Snapshot), their
// first byte.
const stateVersion = 1

// Interface checks.
var (
	_ node.Releaser = (*Layer)(nil)
	_ node.Layer    = (*Sample)(nil)
	_ node.Trainer  = (*Sample)(nil)
)
