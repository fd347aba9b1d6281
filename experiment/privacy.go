package experiment

import (
	"fmt"
	"math"

	"github.com/trellis-fl/trellis/internal/seed"
	"github.com/trellis-fl/trellis/nn"
	"github.com/trellis-fl/trellis/node"
	"github.com/trellis-fl/trellis/node/dplayer"
	"github.com/trellis-fl/trellis/privacy"
)

// PrivacyConfig is the [privacy] section: differential privacy of what the
// nodes release (spec/privacy.md, docs/methods/privacy.md).
//
//	mode = "none" | "node" | "sample"
//
// "node": each round's update is clipped to clip and noised with
// N(0, (noise_multiplier·clip)²) once, before the strategy shares
// (dplayer.Layer). "sample": DP-SGD in local training, per-sample gradients
// clipped to clip and the sum noised every step (dplayer.Sample);
// sampling = "poisson" (q = batch / |D_i|, amplified) or "shuffle"
// (fixed-size shuffled batches, accounted without amplification).
// Exactly one of noise_multiplier and target_epsilon is set; with
// target_epsilon each node's multiplier is calibrated so that its ε after
// all rounds is the target. delta = 0 means the spec's default, 1/|D_i|
// rounded down to a power of ten. orders = "dense" accounts over
// privacy.DenseOrders instead of the spec's grid (a tighter ε for the same
// noise; with target_epsilon, a little less noise).
type PrivacyConfig struct {
	Mode            string  `toml:"mode"`
	NoiseMultiplier float64 `toml:"noise_multiplier"`
	TargetEpsilon   float64 `toml:"target_epsilon"`
	Clip            float64 `toml:"clip"`
	Delta           float64 `toml:"delta"`
	Sampling        string  `toml:"sampling"`
	// Orders is the accountant's RDP order grid: "" or "spec" (the spec's
	// grid, the default) or "dense" (privacy.DenseOrders: ε within 1e-4 of
	// TF-Privacy's and Opacus's published values, where the spec's grid
	// can be up to 4 % above them — still a valid bound).
	Orders string `toml:"orders,omitempty"`
	// Audit, when present, runs the membership-inference audit on the
	// final models at the end of the run (with or without DP).
	Audit *AuditConfig `toml:"audit,omitempty"`
}

// AuditConfig is the [privacy.audit] section: the leakage audit that
// `trellis run` does at the end of a run (and `trellis audit` by
// default), written to the run directory's audit.json and summary.csv's
// final_audit_* columns.
//
//	attack = "threshold" | "lira"
//	shadows = 16       # lira: shadow models per audited node, 4 to 256
//	samples = 0        # members and non-members scored per node, each at most this many (0: all)
//	save_models = false  # also write the final models to models/node-I/ (experiment.Save)
//
// "threshold" is the loss-threshold attack (and, for strategy local, the
// reference-model attack); "lira" adds LiRA (Carlini et al. 2022) with
// shadow models trained like the node (locally: exact for strategy local,
// an approximation otherwise) on random subsets of the node's training and
// test samples.
type AuditConfig struct {
	Attack     string `toml:"attack"`
	Shadows    int    `toml:"shadows"`
	Samples    int    `toml:"samples"`
	SaveModels bool   `toml:"save_models"`
}

// DefaultShadows is LiRA's number of shadow models per node when
// [privacy.audit] shadows is 0.
const DefaultShadows = 16

// withDefaults fills the zero keys.
func (a AuditConfig) withDefaults() AuditConfig {
	if a.Attack == "lira" && a.Shadows == 0 {
		a.Shadows = DefaultShadows
	}
	return a
}

// validate checks the [privacy.audit] keys.
func (a *AuditConfig) validate(bad func(key string, val any, allowed string)) {
	switch a.Attack {
	case "threshold":
		if a.Shadows != 0 {
			bad("privacy.audit.shadows", a.Shadows, `only attack = "lira" trains shadow models`)
		}
	case "lira":
		if a.Shadows != 0 && (a.Shadows < 4 || a.Shadows > 256) {
			bad("privacy.audit.shadows", a.Shadows, "allowed range 4 to 256 (0: 16)")
		}
	default:
		bad("privacy.audit.attack", fmt.Sprintf("%q", a.Attack), `want "threshold" or "lira"`)
	}
	if a.Samples < 0 {
		bad("privacy.audit.samples", a.Samples, "need ≥ 0 (0: every member and non-member)")
	}
}

func defaultPrivacy() PrivacyConfig {
	return PrivacyConfig{Mode: "none", Clip: 1, Sampling: "poisson"}
}

// Privacy is the nodes' DP setting in a Setup (nil: none).
type Privacy struct {
	// Sample selects DP-SGD (sample level); otherwise node level.
	Sample bool
	// Multiplier is z; when 0, TargetEpsilon calibrates it per node.
	Multiplier, TargetEpsilon float64
	Clip                      float64
	// Delta is δ; 0: privacy.DefaultDelta of the node's training split.
	Delta float64
	// Poisson makes DP-SGD's batches Poisson samples (q = batch/|D_i|).
	Poisson bool
	// Orders is the accountant's order grid (nil: the spec's).
	Orders []float64
}

// privacyOn reports whether the nodes run a DP layer.
func (c Config) privacyOn() bool { return c.Privacy.Mode == "node" || c.Privacy.Mode == "sample" }

// privacySetup is the Setup's Privacy (nil with mode = "none").
func (c Config) privacySetup() *Privacy {
	if !c.privacyOn() {
		return nil
	}
	p := c.Privacy
	var orders []float64 // nil: the spec's grid, the layers' own default
	if p.Orders == "dense" {
		orders = privacy.DenseOrders()
	}
	return &Privacy{Sample: p.Mode == "sample", Multiplier: p.NoiseMultiplier, TargetEpsilon: p.TargetEpsilon,
		Clip: p.Clip, Delta: p.Delta, Poisson: p.Sampling == "poisson", Orders: orders}
}

// validatePrivacy checks the [privacy] keys.
func (c Config) validatePrivacy(bad func(key string, val any, allowed string)) {
	p := c.Privacy
	if p.Audit != nil {
		p.Audit.validate(bad)
	}
	switch p.Mode {
	case "none":
		return
	case "node", "sample":
	default:
		bad("privacy.mode", fmt.Sprintf("%q", p.Mode), `want "none", "node" or "sample"`)
		return
	}
	finite := func(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
	switch {
	case p.NoiseMultiplier != 0 && p.TargetEpsilon != 0:
		bad("privacy.noise_multiplier", p.NoiseMultiplier, "set noise_multiplier or target_epsilon, not both")
	case p.NoiseMultiplier == 0 && p.TargetEpsilon == 0:
		bad("privacy.noise_multiplier", 0, "mode = \""+p.Mode+"\" needs noise_multiplier > 0 or target_epsilon > 0")
	case p.NoiseMultiplier != 0 && !(p.NoiseMultiplier > 0 && finite(p.NoiseMultiplier)):
		bad("privacy.noise_multiplier", p.NoiseMultiplier, "need a finite value > 0")
	case p.TargetEpsilon != 0 && !(p.TargetEpsilon > 0 && finite(p.TargetEpsilon)):
		bad("privacy.target_epsilon", p.TargetEpsilon, "need a finite value > 0")
	}
	if !(p.Clip > 0 && finite(p.Clip)) {
		bad("privacy.clip", p.Clip, "need a finite value > 0")
	}
	if p.Delta != 0 && !(p.Delta > 0 && p.Delta < 1) {
		bad("privacy.delta", p.Delta, "allowed range (0, 1); 0 means 1/|D_i| rounded down to a power of ten")
	}
	if p.Sampling != "poisson" && p.Sampling != "shuffle" {
		bad("privacy.sampling", fmt.Sprintf("%q", p.Sampling), `want "poisson" or "shuffle"`)
	}
	if _, err := privacy.OrderGrid(p.Orders); err != nil {
		bad("privacy.orders", fmt.Sprintf("%q", p.Orders), `want "spec" (the default) or "dense"`)
	}
	if p.Mode == "node" {
		switch c.Strategy.Name {
		case "gradient_tracking", "ditto":
			bad("privacy.mode", `"node"`, "strategy "+c.Strategy.Name+" sends vectors that are not derived from the round's noisy update (gradient trackers, a model trained in Share): node-level DP cannot cover them")
		}
	}
	if p.Mode == "sample" && c.Model.BatchNorm {
		bad("privacy.mode", `"sample"`, "DP-SGD needs per-sample gradients: batch norm mixes the samples of a batch")
	}
}

// nodeDP is a node's DP setting: the noise multiplier (calibrated when
// the config gives a target ε), δ and, at sample level, DP-SGD's
// configuration.
type nodeDP struct {
	z, delta float64
	dc       nn.DPConfig
}

// nodeDP is the DP setting of a node with n training samples (s.Privacy
// set).
func (s Setup) nodeDP(n int) (nodeDP, error) {
	dp := s.Privacy
	if n == 0 {
		return nodeDP{}, fmt.Errorf("privacy: an empty training split")
	}
	delta := dp.Delta
	if delta == 0 {
		delta = privacy.DefaultDelta(n)
	}
	sampling, steps := privacy.Unamplified(), s.Rounds // node level: one release a round
	q := min(1, float64(s.Batch)/float64(n))
	if dp.Sample {
		per := s.Local.Steps
		if per == 0 {
			per = s.Local.Epochs * ((n + s.Batch - 1) / s.Batch)
			if dp.Poisson {
				per = s.Local.Epochs * int(math.Ceil(1/q))
			}
		}
		steps = s.Rounds * per
		if dp.Poisson {
			sampling = privacy.Poisson(q)
		}
	}
	z := dp.Multiplier
	if z == 0 {
		var err error
		if z, err = privacy.Calibrate(dp.TargetEpsilon, delta, steps, sampling, dp.Orders); err != nil {
			return nodeDP{}, fmt.Errorf("privacy.target_epsilon: %w", err)
		}
	}
	out := nodeDP{z: z, delta: delta}
	if dp.Sample {
		out.dc = nn.DPConfig{Clip: dp.Clip, Multiplier: z}
		if dp.Poisson {
			out.dc.Sampling, out.dc.Rate = nn.PoissonBatches, q
		}
	}
	return out, nil
}

// addPrivacy gives node i's configuration its DP layer (and, for DP-SGD,
// its trainer).
func (p *plan) addPrivacy(i int, cfg *node.Config) error {
	dp := p.s.Privacy
	if dp == nil {
		return nil
	}
	nd, err := p.s.nodeDP(len(p.splits[i].Train))
	if err != nil {
		return fmt.Errorf("node %d: %w", i, err)
	}
	random := cfg.Random
	if random == nil {
		random = seed.Seeded(cfg.Seed)
	}
	if !dp.Sample {
		l, err := dplayer.New(i, cfg.Model, random, dp.Clip, nd.z, nd.delta)
		if err == nil && dp.Orders != nil {
			err = l.UseOrders(dp.Orders)
		}
		if err != nil {
			return fmt.Errorf("node %d: privacy: %w", i, err)
		}
		cfg.Layers = append(cfg.Layers, l)
		return nil
	}
	l, err := dplayer.NewSample(i, cfg.Model, random, nd.dc, nd.delta)
	if err == nil && dp.Orders != nil {
		err = l.UseOrders(dp.Orders)
	}
	if err != nil {
		return fmt.Errorf("node %d: privacy: %w", i, err)
	}
	cfg.Layers, cfg.Trainer = append(cfg.Layers, l), l
	return nil
}
