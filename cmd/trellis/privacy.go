package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/trellis-fl/trellis/privacy"
)

// privacyCmd answers the calibration question of DP training from the
// command line: the ε of σ, q, T, δ, or the σ of a target ε. The logic is
// privacy.Question; this is flags only.
func privacyCmd(o *options) *cobra.Command {
	var q privacy.Question
	var grid, accountant string
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

--accountant picks whose ε is stated first and what --target-eps calibrates
with: rdp (the default: Rényi DP over --orders, Balle et al. 2020
conversion) or pld (privacy loss distributions, tighter). The other's ε
follows. When PLD cannot meet its tolerance it says why and the RDP bound
is printed, named as such.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
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
	f.Float64Var(&q.Q, "q", 1, "Poisson sampling rate per step, in (0, 1]")
	f.BoolVar(&q.NotPoisson, "not-poisson", false, "the sampling was not Poisson: claim no amplification (q = 1)")
	f.IntVar(&q.Steps, "steps", 0, "number of steps (DP-SGD iterations, or rounds of node-level release)")
	f.Float64Var(&q.Delta, "delta", 1e-5, "δ of the (ε, δ) guarantee, in (0, 1)")
	f.Float64Var(&q.TargetEps, "target-eps", 0, "solve for the smallest noise multiplier reaching this ε instead")
	f.IntVar(&q.Records, "n", 0, "with --batch and --epochs, instead of --q and --steps: number of training records (q = batch/n, steps = ⌈epochs·n/batch⌉)")
	f.IntVar(&q.Batch, "batch", 0, "with --n and --epochs: expected batch size")
	f.Float64Var(&q.Epochs, "epochs", 0, "with --n and --batch: passes over the data")
	f.StringVar(&accountant, "accountant", "rdp", "accountant whose ε is stated and calibrated for: rdp or pld (both are reported)")
	f.StringVar(&grid, "orders", "spec", "RDP order grid: spec (the default grid, α from 1.25 to 256; ε up to 4 % above the published values) or dense (within 1e-4 of them)")
	return c
}
