package main

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/trellis-fl/trellis/resilience"
)

func benchCmd(o *options) *cobra.Command {
	c := &cobra.Command{Use: "bench", Short: "measurements of the building blocks"}
	cfg := resilience.DefaultConfig()
	rules := &cobra.Command{
		Use:   "rules",
		Short: "κ̂-robustness and distance to the honest mean of every rule and chain under every attack, on synthetic honest sets",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := cfg.Validate(); err != nil {
				return err
			}
			rs, err := resilience.StandardRules(cfg)
			if err != nil {
				return err
			}
			attacks, err := resilience.StandardAttacks(cfg)
			if err != nil {
				return err
			}
			res, err := resilience.Table(rs, attacks, cfg)
			if err != nil {
				return err
			}
			var buf bytes.Buffer
			if o.json {
				if err := jsonOut(&buf, benchRulesJSON(res)); err != nil {
					return err
				}
				return writeBench(o, buf.Bytes())
			}
			fmt.Fprintf(&buf, "Command: `trellis bench rules --n %d --f %d --d %d --spread %g --trials %d --seed %d`\n\n",
				cfg.N, cfg.F, cfg.D, cfg.Spread, cfg.Trials, cfg.Seed)
			fmt.Fprintf(&buf, "Each cell: κ̂ / distance of the output to the honest mean (the survey, §4.3).\n\n")
			if err := res.WriteMarkdown(&buf); err != nil {
				return err
			}
			return writeBench(o, buf.Bytes())
		},
	}
	f := rules.Flags()
	f.IntVar(&cfg.N, "n", cfg.N, "inputs of the rule, honest and attack together")
	f.IntVar(&cfg.F, "f", cfg.F, "attack inputs (and the f the rules tolerate)")
	f.IntVar(&cfg.D, "d", cfg.D, "dimension")
	f.Float64Var(&cfg.Spread, "spread", cfg.Spread, "standard deviation of the honest vectors")
	f.IntVar(&cfg.Trials, "trials", cfg.Trials, "honest sets drawn (κ̂ is the max over them)")
	f.Uint64Var(&cfg.Seed, "seed", cfg.Seed, "seed of every draw")
	c.AddCommand(rules)
	return c
}

// writeBench writes a bench's output to the file -o names, else stdout.
func writeBench(o *options, b []byte) error {
	if o.out != "" {
		if err := os.MkdirAll(filepath.Dir(o.out), 0o755); err != nil {
			return err
		}
		return os.WriteFile(o.out, b, 0o644)
	}
	_, err := o.stdout.Write(b)
	return err
}

// benchCell is one rule under one attack in `bench rules --json`; a
// non-finite value is null (JSON has no infinity), an error names why the
// cell has no values.
type benchCell struct {
	Rule      string   `json:"rule"`
	Attack    string   `json:"attack"`
	Kappa     *float64 `json:"kappa"`
	KappaMean *float64 `json:"kappa_mean"`
	Dist      *float64 `json:"dist"`
	DistMax   *float64 `json:"dist_max"`
	Error     string   `json:"error,omitempty"`
}

func benchRulesJSON(res *resilience.Results) any {
	finite := func(v float64) *float64 {
		if math.IsInf(v, 0) || math.IsNaN(v) {
			return nil
		}
		return &v
	}
	cells := []benchCell{}
	for i, rule := range res.Rules {
		for j, att := range res.Attacks {
			c := res.Cells[i][j]
			bc := benchCell{Rule: rule, Attack: att}
			if c.Err != nil {
				bc.Error = c.Err.Error()
			} else {
				r := c.Result
				bc.Kappa, bc.KappaMean, bc.Dist, bc.DistMax = finite(r.Kappa), finite(r.KappaMean), finite(r.Dist), finite(r.DistMax)
			}
			cells = append(cells, bc)
		}
	}
	cfg := res.Config
	return map[string]any{
		"n": cfg.N, "f": cfg.F, "d": cfg.D, "spread": cfg.Spread, "trials": cfg.Trials, "seed": cfg.Seed,
		"cells": cells,
	}
}
