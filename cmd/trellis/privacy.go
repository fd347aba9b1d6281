package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/trellis-fl/trellis/experiment"
	"github.com/trellis-fl/trellis/privacy"
)

// privacyCmd answers the calibration question of DP training from the
// command line: the ε of σ, q, T, δ, or the σ of a target ε. The logic is
// privacy.Question; this is flags only.
func privacyCmd(o *options) *cobra.Command {
	var q privacy.Question
	var grid, accountant, cfgArg string
	var sets []string
	c := &cobra.Command{
		Use:   "privacy",
		Short: "ε of the (subsampled) Gaussian mechanism after T steps at δ, or the σ that reaches a target ε (RDP and PLD accountants)",
		Long: `privacy answers with the project's RDP and PLD accountants side by side
(docs/methods/privacy.md):

  trellis privacy --sigma 1.1 --q 0.004267 --steps 14063 --delta 1e-5   ε of DP-SGD on MNIST
  trellis privacy --target-eps 1 --q 1 --steps 100 --delta 1e-5         σ for ε = 1 after 100 rounds
  trellis privacy --sigma 1.3 --n 60000 --batch 150 --epochs 15          as TF-Privacy's compute_dp_sgd_privacy
  trellis privacy --target-eps 1 --q 0.01 --steps 1000 --accountant pld  σ calibrated with the PLD accountant

--q is the Poisson sampling rate; 1 (the default) is a release every step
from all the data, as node-level DP each round. --not-poisson charges q = 1
whatever --q says, for batches that were not Poisson-sampled.

--config NAME|FILE (with --set key=value) answers for a run config or
preset instead: for every run of its sweep, each node's noise multiplier
(calibrated as the run calibrates it), steps and δ, and its ε after all
rounds by RDP and by PLD side by side (--json: every node; the text: the
honest nodes' largest and mean ε). Nothing is trained.

  trellis privacy --config privacy/audit-quick

--accountant picks whose ε is stated first and what --target-eps calibrates
with: rdp (the default: Rényi DP over --orders, Balle et al. 2020
conversion) or pld (privacy loss distributions, tighter). The other's ε
follows. When PLD cannot meet its tolerance it says why and the RDP bound
is printed, named as such.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if cfgArg != "" {
				return privacyOfConfig(o, cfgArg, sets)
			}
			if grid != "spec" {
				orders, err := privacy.OrderGrid(grid)
				if err != nil {
					return fmt.Errorf("--orders: %w", err)
				}
				q.Orders = orders
			}
			m, err := privacy.ParseMethod(accountant)
			if err != nil {
				return fmt.Errorf("--accountant: %w", err)
			}
			q.Accountant = m
			a, err := q.Answer()
			if err != nil {
				return err
			}
			if o.json {
				return jsonOut(o.stdout, a)
			}
			_, err = fmt.Fprintln(o.stdout, a)
			return err
		},
	}
	f := c.Flags()
	f.Float64Var(&q.Sigma, "sigma", 0, "noise multiplier z = noise standard deviation / clip norm")
	// -q is the sampling rate here, not the global --quiet (which this
	// command, printing no progress, shadows with a long-only flag).
	f.Float64VarP(&q.Q, "q", "q", 1, "Poisson sampling rate per step, in (0, 1] (-q 0.5 = --q 0.5)")
	f.BoolVar(&o.quiet, "quiet", false, "no progress output (there is none)")
	f.BoolVar(&q.NotPoisson, "not-poisson", false, "the sampling was not Poisson: claim no amplification (q = 1)")
	f.IntVar(&q.Steps, "steps", 0, "number of steps (DP-SGD iterations, or rounds of node-level release)")
	f.Float64Var(&q.Delta, "delta", 1e-5, "δ of the (ε, δ) guarantee, in (0, 1)")
	f.Float64Var(&q.TargetEps, "target-eps", 0, "solve for the smallest noise multiplier reaching this ε instead")
	f.IntVar(&q.Records, "n", 0, "with --batch and --epochs, instead of --q and --steps: number of training records (q = batch/n, steps = ⌈epochs·n/batch⌉)")
	f.IntVar(&q.Batch, "batch", 0, "with --n and --epochs: expected batch size")
	f.Float64Var(&q.Epochs, "epochs", 0, "with --n and --batch: passes over the data")
	f.StringVar(&cfgArg, "config", "", "a run config file or preset: every node's ε after all rounds by RDP and PLD, for every run of its sweep")
	f.StringArrayVar(&sets, "set", nil, "with --config: override a config key (key=value, repeatable)")
	f.StringVar(&accountant, "accountant", "rdp", "accountant whose ε is stated and calibrated for: rdp or pld (both are reported)")
	f.StringVar(&grid, "orders", "spec", "RDP order grid: spec (the default grid, α from 1.25 to 256; ε up to 4 % above the published values) or dense (within 1e-4 of them)")
	return c
}

// configPrivacy is one run's nodes in the answer of --config.
type configPrivacy struct {
	Run   string                   `json:"run"`
	Nodes []experiment.NodePrivacy `json:"nodes"`
}

// privacyOfConfig prints experiment.PrivacyOf for every run of the
// config's sweep.
func privacyOfConfig(o *options, arg string, sets []string) error {
	cfg, err := loadConfigOrPreset(arg, sets)
	if err != nil {
		return err
	}
	runs, _, err := cfg.Expand()
	if err != nil {
		return err
	}
	var all []configPrivacy
	for _, r := range runs {
		nodes, err := experiment.PrivacyOf(r.Config)
		if err != nil {
			return fmt.Errorf("%s: %w", r.Dir, err)
		}
		name := r.Dir
		if name == "" {
			name = cfg.Name
		}
		all = append(all, configPrivacy{Run: name, Nodes: nodes})
	}
	if o.json {
		return jsonOut(o.stdout, all)
	}
	for _, r := range all {
		if _, err := fmt.Fprintln(o.stdout, honestPrivacyLine(r)); err != nil {
			return err
		}
	}
	return nil
}

// honestPrivacyLine is one run's honest nodes in a sentence.
func honestPrivacyLine(r configPrivacy) string {
	var n, failed int
	var z, steps [2]float64
	var delta, rdpMax, rdpSum, pldMax, pldSum float64
	for _, p := range r.Nodes {
		if p.Byzantine {
			continue
		}
		if n == 0 {
			z, steps = [2]float64{p.Multiplier, p.Multiplier}, [2]float64{float64(p.Steps), float64(p.Steps)}
		}
		z = [2]float64{min(z[0], p.Multiplier), max(z[1], p.Multiplier)}
		steps = [2]float64{min(steps[0], float64(p.Steps)), max(steps[1], float64(p.Steps))}
		delta = max(delta, p.Delta)
		n++
		rdpMax, rdpSum = max(rdpMax, p.RDPEpsilon), rdpSum+p.RDPEpsilon
		if p.PLDEpsilon == nil {
			failed++
			continue
		}
		pldMax, pldSum = max(pldMax, *p.PLDEpsilon), pldSum+*p.PLDEpsilon
	}
	if n == 0 {
		return r.Run + ": no DP"
	}
	span := func(v [2]float64) string {
		if v[0] == v[1] {
			return fmt.Sprintf("%.4g", v[0])
		}
		return fmt.Sprintf("%.4g–%.4g", v[0], v[1])
	}
	s := fmt.Sprintf("%s: %d honest nodes, noise multiplier %s, %s steps, δ ≤ %g: ε by RDP max %.4g mean %.4g",
		r.Run, n, span(z), span(steps), delta, rdpMax, rdpSum/float64(n))
	if failed < n {
		s += fmt.Sprintf("; by PLD max %.4g mean %.4g", pldMax, pldSum/float64(n-failed))
	}
	if failed > 0 {
		s += fmt.Sprintf("; PLD failed on %d nodes (--json says why)", failed)
	}
	return s
}
