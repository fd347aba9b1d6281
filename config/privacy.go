package config

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/trellis-fl/trellis/privacy"
)

// Privacy is the [privacy] section: differential privacy of what the
// nodes release (the survey, §3.1.1, docs/methods/privacy.md).
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
// all rounds is the target. delta = 0 means the default, 1/|D_i|
// rounded down to a power of ten. orders = "dense" accounts over
// privacy.DenseOrders instead of the default grid (a tighter ε for the same
// noise; with target_epsilon, a little less noise). accountant = "pld"
// reports every node's ε, and calibrates target_epsilon, with the privacy
// loss distribution accountant instead of RDP (tighter still; where it
// cannot meet its tolerance the node reports RDP's ε and says so).
type Privacy struct {
	Mode            string  `toml:"mode"`
	NoiseMultiplier float64 `toml:"noise_multiplier"`
	TargetEpsilon   float64 `toml:"target_epsilon"`
	Clip            float64 `toml:"clip"`
	Delta           float64 `toml:"delta"`
	Sampling        string  `toml:"sampling"`
	// Orders is the accountant's RDP order grid: "" or "spec" (the
	// default grid, privacy.DefaultOrders) or "dense" (privacy.DenseOrders: ε within 1e-4 of
	// TF-Privacy's and Opacus's published values, where the default grid
	// can be up to 4 % above them — still a valid bound).
	Orders string `toml:"orders,omitempty"`
	// Accountant is the accountant of the reported ε and of target_epsilon's
	// calibration: "" or "rdp" (the default) or "pld" (privacy.MethodPLD).
	Accountant string `toml:"accountant,omitempty"`
	// Audit, when present, runs the membership-inference audit on the
	// final models at the end of the run (with or without DP).
	Audit *Audit `toml:"audit,omitempty"`
}

// Audit is the [privacy.audit] section: the leakage audit that
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
type Audit struct {
	Attack     string `toml:"attack"`
	Shadows    int    `toml:"shadows"`
	Samples    int    `toml:"samples"`
	SaveModels bool   `toml:"save_models"`
}

// DefaultShadows is LiRA's number of shadow models per node when
// [privacy.audit] shadows is 0.
const DefaultShadows = 16

// WithDefaults fills the zero keys.
func (a Audit) WithDefaults() Audit {
	if a.Attack == "lira" && a.Shadows == 0 {
		a.Shadows = DefaultShadows
	}
	return a
}

// Validate checks the [privacy.audit] keys alone, every problem in one
// error ("privacy.audit.shadows = 2: allowed range …; …").
func (a Audit) Validate() error {
	var errs []string
	a.validate(func(key string, val any, allowed string) {
		errs = append(errs, fmt.Sprintf("%s = %v: %s", key, val, allowed))
	})
	if len(errs) > 0 {
		return errors.New(strings.Join(errs, "; "))
	}
	return nil
}

// validate checks the [privacy.audit] keys.
func (a *Audit) validate(bad func(key string, val any, allowed string)) {
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

func defaultPrivacy() Privacy {
	return Privacy{Mode: "none", Clip: 1, Sampling: "poisson"}
}

// PrivacyOn reports whether the nodes run a DP layer.
func (c Config) PrivacyOn() bool { return c.Privacy.Mode == "node" || c.Privacy.Mode == "sample" }

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
	if _, err := privacy.ParseMethod(p.Accountant); err != nil {
		bad("privacy.accountant", fmt.Sprintf("%q", p.Accountant), `want "rdp" (the default) or "pld"`)
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
