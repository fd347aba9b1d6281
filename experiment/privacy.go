package experiment

import (
	"fmt"
	"math"
	"slices"

	"github.com/trellis-fl/trellis/config"
	"github.com/trellis-fl/trellis/internal/seed"
	"github.com/trellis-fl/trellis/nn"
	"github.com/trellis-fl/trellis/node"
	"github.com/trellis-fl/trellis/node/dplayer"
	"github.com/trellis-fl/trellis/privacy"
)

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
	// Orders is the accountant's order grid (nil: the default grid).
	Orders []float64
	// Accountant is the accountant of the nodes' ε and of the calibration
	// (privacy.MethodRDP unless the config says "pld").
	Accountant privacy.Method
	// Decaying selects decaying Laplace noise (dplayer.Decaying): NoiseScale
	// is c (0: calibrated from TargetEpsilon over the run's rounds),
	// NoiseDecay q, StepDecay p; Clip is the L1 bound of round 0.
	Decaying                          bool
	NoiseScale, NoiseDecay, StepDecay float64
	// Tracking (with Decaying) is gradient tracking's layer
	// (dplayer.DecayingTracking): two releases a round, which the
	// calibration of c from TargetEpsilon counts.
	Tracking bool
	// Ternary selects stochastic ternary quantization (dplayer.Ternary):
	// Level is B (0: calibrated as rounds·Clip/Delta, Delta the run's
	// total δ); Clip is the L1 bound of a round's update.
	Ternary bool
	Level   float64
}

// accountant is p.Accountant, privacy.MethodRDP when unset (a Setup built
// in code).
func (p *Privacy) accountant() privacy.Method {
	if p.Accountant == "" {
		return privacy.MethodRDP
	}
	return p.Accountant
}

// tracksWithDP reports whether strategy name releases a state and a
// tracker (or the tracker's exchanged share), which decaying Laplace noise
// perturbs both of (dplayer.DecayingTracking).
func tracksWithDP(name string) bool {
	return name == "gradient_tracking" || name == "gradient_tracking_sd"
}

// privacySetup is the Setup's Privacy (nil with mode = "none").
func privacySetup(c config.Config) *Privacy {
	if c.Privacy.Mode == "laplace_decaying" {
		p := c.Privacy.Decaying()
		return &Privacy{Decaying: true, TargetEpsilon: p.TargetEpsilon, Clip: p.Clip,
			NoiseScale: p.NoiseScale, NoiseDecay: p.NoiseDecay, StepDecay: p.StepDecay,
			Tracking: tracksWithDP(c.Strategy.Name)}
	}
	if c.Privacy.Mode == "ternary" {
		p := c.Privacy
		return &Privacy{Ternary: true, Clip: p.Clip, Level: p.Level, Delta: p.Delta}
	}
	if !c.PrivacyOn() {
		return nil
	}
	p := c.Privacy
	var orders []float64 // nil: the default grid, the layers' own default
	if p.Orders == "dense" {
		orders = privacy.DenseOrders()
	}
	method, _ := privacy.ParseMethod(p.Accountant) // validated with the config
	return &Privacy{Sample: p.Mode == "sample", Multiplier: p.NoiseMultiplier, TargetEpsilon: p.TargetEpsilon,
		Clip: p.Clip, Delta: p.Delta, Poisson: p.Sampling == "poisson", Orders: orders, Accountant: method}
}

// configuration.
type nodeDP struct {
	z, delta float64
	dc       nn.DPConfig
	// steps and sampling are what the calibration assumed: the releases
	// of all rounds (node level) or the DP-SGD steps of the configured
	// local training.
	steps    int
	sampling privacy.Sampling
}

// nodeDP is the DP setting of a node with n training samples (s.Privacy
// set).
func (s Setup) nodeDP(n int) (nodeDP, error) {
	dp := s.Privacy
	if n == 0 {
		return nodeDP{}, fmt.Errorf("privacy: an empty training split")
	}
	if dp.Ternary {
		// z is the level B: Level, or Multiplier where a calibrated B was
		// copied (an audit's shadow model), or rounds·C/δ; delta is the
		// run's total δ.
		b := dp.Level
		if b == 0 {
			b = dp.Multiplier
		}
		if b == 0 {
			var err error
			if b, err = dplayer.TernaryLevelFor(dp.Delta, dp.Clip, s.Rounds); err != nil {
				return nodeDP{}, fmt.Errorf("privacy.delta: %w", err)
			}
		}
		return nodeDP{z: b, delta: dplayer.TernaryDelta(dp.Clip, b, s.Rounds), steps: s.Rounds, sampling: privacy.Unamplified()}, nil
	}
	if dp.Decaying {
		// z is the Laplace scale c of round 0: NoiseScale, or Multiplier
		// where a calibrated c was copied (an audit's shadow model), or
		// calibrated from TargetEpsilon over the run's rounds.
		c := dp.NoiseScale
		if c == 0 {
			c = dp.Multiplier
		}
		if c == 0 {
			var err error
			if c, err = dplayer.DecayingScaleFor(dp.TargetEpsilon, dp.Clip, dp.NoiseDecay, dp.StepDecay, s.Rounds); err != nil {
				return nodeDP{}, fmt.Errorf("privacy.target_epsilon: %w", err)
			}
			if dp.Tracking {
				c *= 2 // two releases a round: ε is twice that of one at the same c
			}
		}
		return nodeDP{z: c, steps: s.Rounds, sampling: privacy.Unamplified()}, nil
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
		if z, err = privacy.CalibrateWith(dp.accountant(), dp.TargetEpsilon, delta, steps, sampling, dp.Orders); err != nil {
			return nodeDP{}, fmt.Errorf("privacy.target_epsilon: %w", err)
		}
	}
	out := nodeDP{z: z, delta: delta, steps: steps, sampling: sampling}
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
	if dp.Ternary {
		l, err := dplayer.NewTernary(i, cfg.Model, random, dp.Clip, nd.z)
		if err != nil {
			return fmt.Errorf("node %d: privacy: %w", i, err)
		}
		cfg.Layers = append(cfg.Layers, l)
		return nil
	}
	if dp.Decaying && dp.Tracking && cfg.Strategy != nil && tracksWithDP(cfg.Strategy.Name()) {
		// [121]: the state and the tracker are released, each noised;
		// [122]: the state and the tracker's exchanged share.
		l, err := dplayer.NewDecayingTracking(i, cfg.Model, random, dp.Clip, nd.z, dp.NoiseDecay, dp.StepDecay)
		if err != nil {
			return fmt.Errorf("node %d: privacy: %w", i, err)
		}
		cfg.Layers = append(cfg.Layers, l)
		return nil
	}
	if dp.Decaying {
		l, err := dplayer.NewDecaying(i, cfg.Model, random, dp.Clip, nd.z, dp.NoiseDecay, dp.StepDecay)
		if err != nil {
			return fmt.Errorf("node %d: privacy: %w", i, err)
		}
		cfg.Layers = append(cfg.Layers, l)
		return nil
	}
	if !dp.Sample {
		l, err := dplayer.New(i, cfg.Model, random, dp.Clip, nd.z, nd.delta)
		if err == nil && dp.Orders != nil {
			err = l.UseOrders(dp.Orders)
		}
		if err == nil {
			err = l.UseAccountant(dp.accountant())
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
	if err == nil {
		err = l.UseAccountant(dp.accountant())
	}
	if err != nil {
		return fmt.Errorf("node %d: privacy: %w", i, err)
	}
	cfg.Layers, cfg.Trainer = append(cfg.Layers, l), l
	return nil
}

// NodePrivacy is one node's DP setting in a run and the ε it reaches after
// the configured rounds and local training, by both accountants.
type NodePrivacy struct {
	Node       int     `json:"node"`
	Byzantine  bool    `json:"byzantine"`
	Train      int     `json:"train_samples"`
	Multiplier float64 `json:"noise_multiplier"`
	Sampling   string  `json:"sampling"`
	Steps      int     `json:"steps"`
	Delta      float64 `json:"delta"`
	// Accountant is the run's accountant (privacy.accountant), whose ε
	// the run reports and target_epsilon calibrates.
	Accountant privacy.Method `json:"accountant"`
	RDPEpsilon float64        `json:"rdp_epsilon"`
	// PLDEpsilon is absent when the PLD accountant failed (PLDError).
	PLDEpsilon *float64 `json:"pld_epsilon"`
	PLDError   string   `json:"pld_error,omitempty"`
}

// PrivacyOf is every node's DP setting in the run c (nil when c runs no
// DP): its training split, noise multiplier (calibrated as the run
// calibrates it), sampling, step count and δ, and the ε after all rounds
// by RDP (over the run's order grid) and by PLD, side by side — the ε the
// run's records end with, as long as local training takes the configured
// steps. It partitions the data as the run does; nothing is trained.
func PrivacyOf(c config.Config) ([]NodePrivacy, error) {
	if c.Privacy.Mode == "laplace_decaying" {
		// Pure ε-DP, the same for every node: nothing per node to list.
		dp := privacySetup(c)
		nd, err := Setup{Rounds: c.Rounds, Privacy: dp}.nodeDP(1)
		if err != nil {
			return nil, err
		}
		if dp.Tracking {
			return nil, fmt.Errorf("privacy.mode = \"laplace_decaying\" with %s is pure ε-DP (δ = 0), the same for every node: ε = %.6g after %d rounds, two releases a round, the state and the tracker, each of L1 sensitivity 2·clip·p^k (round 0's Laplace scale c = %.6g, decay %g, L1 clip %g decaying by %g a round); the Gaussian accountants this command lists do not apply", c.Strategy.Name, dplayer.DecayingTrackingEpsilon(dp.Clip, nd.z, dp.NoiseDecay, dp.StepDecay, c.Rounds), c.Rounds, nd.z, dp.NoiseDecay, dp.Clip, dp.StepDecay)
		}
		return nil, fmt.Errorf("privacy.mode = \"laplace_decaying\" is pure ε-DP (δ = 0), the same for every node: ε = %.6g after %d rounds (round 0's Laplace scale c = %.6g, decay %g, L1 clip %g decaying by %g a round); the Gaussian accountants this command lists do not apply", dplayer.DecayingEpsilon(dp.Clip, nd.z, dp.NoiseDecay, dp.StepDecay, c.Rounds), c.Rounds, nd.z, dp.NoiseDecay, dp.Clip, dp.StepDecay)
	}
	if c.Privacy.Mode == "ternary" {
		dp := privacySetup(c)
		nd, err := Setup{Rounds: c.Rounds, Privacy: dp}.nodeDP(1)
		if err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("privacy.mode = \"ternary\" is (0, δ)-DP, the same for every node: ε = 0 and δ = %.6g after %d rounds (δ = clip/level = %.6g a round, L1 clip %g, level %.6g); pure ε is unbounded (an update of 0 never sends ±level); the Gaussian accountants this command lists do not apply", nd.delta, c.Rounds, dp.Clip/nd.z, dp.Clip, nd.z)
	}
	if !c.PrivacyOn() {
		return nil, nil
	}
	tt, err := LoadData(c)
	if err != nil {
		return nil, err
	}
	s, err := SetupOf(c, tt)
	if err != nil {
		return nil, err
	}
	p, err := s.plan()
	if err != nil {
		return nil, err
	}
	out := make([]NodePrivacy, len(p.splits))
	for i, sp := range p.splits {
		nd, err := p.s.nodeDP(len(sp.Train))
		if err != nil {
			return nil, fmt.Errorf("node %d: %w", i, err)
		}
		ev := privacy.GaussianEvent{Multiplier: nd.z, Sampling: nd.sampling}
		np := NodePrivacy{Node: i, Byzantine: slices.Contains(p.byz, i), Train: len(sp.Train), Multiplier: nd.z,
			Sampling: nd.sampling.String(), Steps: nd.steps, Delta: nd.delta, Accountant: p.s.Privacy.accountant()}
		if np.RDPEpsilon, _, err = privacy.EpsilonAfter(ev, nd.steps, nd.delta, p.s.Privacy.Orders); err != nil {
			return nil, fmt.Errorf("node %d: %w", i, err)
		}
		if eps, err := privacy.EpsilonPLD(ev, nd.steps, nd.delta); err != nil {
			np.PLDError = err.Error()
		} else {
			np.PLDEpsilon = &eps
		}
		out[i] = np
	}
	return out, nil
}
