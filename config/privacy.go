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
//	mode = "none" | "node" | "sample" | "laplace_decaying" | "ternary"
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
//
// "laplace_decaying": differentially private distributed gradient descent
// with decaying Laplace noise (the survey, §3.2.2, ref. [117];
// dplayer.Decaying): round k's update is clipped to L1 norm clip·step_decay^k
// and noised with Laplace noise of scale noise_scale·noise_decay^k, and the
// node keeps and sends that noisy model; pure ε-DP (δ = 0), ε the geometric
// sum dplayer.DecayingEpsilon. Set noise_scale or target_epsilon (neither:
// target_epsilon = DefaultDecayingEpsilon over the run's rounds);
// noise_decay and step_decay default to DefaultNoiseDecay and
// DefaultStepDecay. With strategy gradient_tracking the mode is [121]'s
// state and direction perturbation (the survey, §3.2.2, ref. [121];
// dplayer.DecayingTracking): the state and the tracker each go out with
// their own Laplace draw, and ε counts two releases a round,
// dplayer.DecayingTrackingEpsilon; with gradient_tracking_sd, ref. [122]'s
// state decomposition with Laplace noise on the exchanged share, the same
// two releases (the state and the tracker's exchanged share α).
//
// "ternary": differential privacy by stochastic ternary quantization (the
// survey, §3.2.2, ref. [132]; dplayer.Ternary): round k's update is
// clipped to L1 norm clip and every coordinate becomes ±level with
// probability |u_i|/level, else 0; (0, δ)-DP with δ = clip/level per
// round (pure ε is unbounded). Set level or delta (the run's total δ,
// which calibrates level = rounds·clip/delta), not both.
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
	// NoiseScale is c, the Laplace scale of round 0, NoiseDecay q and
	// StepDecay p the per-round factors of the noise scale and of the L1
	// clip bound (mode "laplace_decaying" only; 0: the default).
	NoiseScale float64 `toml:"noise_scale,omitzero"`
	NoiseDecay float64 `toml:"noise_decay,omitzero"`
	StepDecay  float64 `toml:"step_decay,omitzero"`
	// Level is B, the ternary quantizer's magnitude (mode "ternary" only;
	// 0: calibrated from delta).
	Level float64 `toml:"level,omitzero"`
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

// The defaults of mode "laplace_decaying": q = 0.95 and p = 0.9 (p < q,
// so that ε stays below (2C/c)/(1 − p/q) however long the run), and, with
// neither noise_scale nor target_epsilon set, ε = 1 after the run's rounds.
const (
	DefaultNoiseDecay      = 0.95
	DefaultStepDecay       = 0.9
	DefaultDecayingEpsilon = 1.0
)

// Decaying is the [privacy] section of mode "laplace_decaying" with its
// zero keys filled: noise_decay, step_decay, and target_epsilon when
// noise_scale is not set either.
func (p Privacy) Decaying() Privacy {
	if p.NoiseDecay == 0 {
		p.NoiseDecay = DefaultNoiseDecay
	}
	if p.StepDecay == 0 {
		p.StepDecay = DefaultStepDecay
	}
	if p.NoiseScale == 0 && p.TargetEpsilon == 0 {
		p.TargetEpsilon = DefaultDecayingEpsilon
	}
	return p
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
	finite := func(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
	switch p.Mode {
	case "none":
		return
	case "node", "sample":
	case "laplace_decaying":
		c.validateDecaying(bad, finite)
		return
	case "ternary":
		c.validateTernary(bad, finite)
		return
	default:
		bad("privacy.mode", fmt.Sprintf("%q", p.Mode), `want "none", "node" or "sample", or "laplace_decaying" or "ternary"`)
		return
	}
	if p.Level != 0 {
		bad("privacy.level", p.Level, `level is a key of mode = "ternary"`)
	}
	if p.NoiseScale != 0 || p.NoiseDecay != 0 || p.StepDecay != 0 {
		bad("privacy.noise_scale", p.NoiseScale, `noise_scale, noise_decay and step_decay are keys of mode = "laplace_decaying"`)
	}
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
		case "gradient_tracking", "ditto", "gradient_tracking_sd", "function_sharing":
			bad("privacy.mode", `"node"`, "strategy "+c.Strategy.Name+" sends vectors that are not derived from the round's noisy update (gradient trackers, secret shares, perturbation vectors, a model trained in Share): node-level DP cannot cover them")
		}
	}
	if p.Mode == "sample" && c.Model.BatchNorm {
		bad("privacy.mode", `"sample"`, "DP-SGD needs per-sample gradients: batch norm mixes the samples of a batch")
	}
}

// validateDecaying checks the keys of mode "laplace_decaying".
func (c Config) validateDecaying(bad func(key string, val any, allowed string), finite func(float64) bool) {
	p := c.Privacy
	switch {
	case p.NoiseScale != 0 && p.TargetEpsilon != 0:
		bad("privacy.noise_scale", p.NoiseScale, "set noise_scale or target_epsilon, not both")
	case p.NoiseScale != 0 && !(p.NoiseScale > 0 && finite(p.NoiseScale)):
		bad("privacy.noise_scale", p.NoiseScale, "need a finite value > 0 (the Laplace scale c of round 0)")
	case p.TargetEpsilon != 0 && !(p.TargetEpsilon > 0 && finite(p.TargetEpsilon)):
		bad("privacy.target_epsilon", p.TargetEpsilon, "need a finite value > 0")
	}
	if p.NoiseDecay != 0 && !(p.NoiseDecay > 0 && p.NoiseDecay <= 1) {
		bad("privacy.noise_decay", p.NoiseDecay, "allowed range (0, 1] (q: round k's scale is c·q^k; 0 means 0.95)")
	}
	if p.StepDecay != 0 && !(p.StepDecay > 0 && p.StepDecay <= 1) {
		bad("privacy.step_decay", p.StepDecay, "allowed range (0, 1] (p: round k's L1 clip is clip·p^k; 0 means 0.9)")
	}
	if !(p.Clip > 0 && finite(p.Clip)) {
		bad("privacy.clip", p.Clip, "need a finite value > 0 (the L1 bound of round 0's update)")
	}
	if p.NoiseMultiplier != 0 || p.Delta != 0 || p.Orders != "" || p.Accountant != "" || p.Level != 0 {
		bad("privacy.noise_multiplier", p.NoiseMultiplier, `mode = "laplace_decaying" is pure ε-DP with its own noise: noise_multiplier, delta, orders, accountant and level do not apply`)
	}
	// gradient_tracking and gradient_tracking_sd have their own layer
	// (both their vectors noised: the state, and the tracker or its
	// exchanged share); ditto's second model, trained in Share, is not
	// covered by either.
	switch c.Strategy.Name {
	case "ditto":
		bad("privacy.mode", `"laplace_decaying"`, "strategy ditto sends a model trained in Share: only the model of the round's noisy update (or gradient tracking's state and tracker) is released with the round's noise")
	case "function_sharing":
		bad("privacy.mode", `"laplace_decaying"`, "strategy "+c.Strategy.Name+" sends secret shares or perturbation vectors besides the model: only the model of the round's noisy update (or gradient tracking's state and tracker) is released with the round's noise")
	}
}

// validateTernary checks the keys of mode "ternary".
func (c Config) validateTernary(bad func(key string, val any, allowed string), finite func(float64) bool) {
	p := c.Privacy
	if !(p.Clip > 0 && finite(p.Clip)) {
		bad("privacy.clip", p.Clip, "need a finite value > 0 (the L1 bound of a round's update)")
	}
	switch {
	case p.Level != 0 && p.Delta != 0:
		bad("privacy.level", p.Level, "set level or delta, not both")
	case p.Level == 0 && p.Delta == 0:
		bad("privacy.level", 0, `mode = "ternary" needs level ≥ clip (the quantizer's magnitude) or delta in (0, 1) (the run's total δ)`)
	case p.Level != 0 && !(p.Level >= p.Clip && finite(p.Level)):
		bad("privacy.level", p.Level, "need a finite value ≥ clip: the quantizer's probabilities |u_i|/level must not exceed 1")
	case p.Delta != 0 && !(p.Delta > 0 && p.Delta < 1):
		bad("privacy.delta", p.Delta, `allowed range (0, 1): mode = "ternary" is (0, δ)-DP, δ the run's total`)
	}
	if p.NoiseMultiplier != 0 || p.TargetEpsilon != 0 || p.NoiseScale != 0 || p.NoiseDecay != 0 || p.StepDecay != 0 || p.Orders != "" || p.Accountant != "" {
		bad("privacy.noise_multiplier", p.NoiseMultiplier, `mode = "ternary" is (0, δ)-DP by its quantizer alone: noise_multiplier, target_epsilon, noise_scale, noise_decay, step_decay, orders and accountant do not apply`)
	}
	switch c.Strategy.Name {
	case "gradient_tracking", "ditto", "gradient_tracking_sd", "function_sharing":
		bad("privacy.mode", `"ternary"`, "strategy "+c.Strategy.Name+" sends vectors other than its model (gradient trackers, secret shares, perturbation vectors, a model trained in Share): only the quantized model is released")
	}
	if c.SecAgg.Across {
		bad("secagg.across", true, `privacy.mode = "ternary" covers the quantized model, not the group mean sent across`)
	}
}
