package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/trellis-fl/trellis/experiment"
	"github.com/trellis-fl/trellis/privacy/audit"
	"github.com/trellis-fl/trellis/rundir"
)

// auditCmd runs the membership-inference audit of a finished run (or of
// every run under a sweep directory); experiment.AuditWith gets the models, package privacy/audit attacks them.
func auditCmd(o *options) *cobra.Command {
	var attack string
	var shadows, samples int
	cmd := &cobra.Command{
		Use:   "audit RUN_DIR",
		Short: "membership-inference audit of a run's final models: AUC, TPR at 1 % and 0.1 % FPR, ε lower bound vs the accountant's ε",
		Long: `audit attacks every honest node's final model with membership inference:
members are the node's training split, non-members its local test split.
The loss-threshold attack (Yeom et al. 2018) always; for runs with strategy
local the reference-model attack (each sample's loss calibrated by the mean
loss of the other nodes' models, which never saw it); with --attack lira
(or the run's [privacy.audit] attack = "lira") LiRA (Carlini et al. 2022):
--shadows shadow models per node, trained as the node trains on random
subsets of its samples, a Gaussian per sample of the logit-scaled
confidence in and out, and the likelihood ratio of the model's. Each attack
reports AUC, TPR at 1 % and 0.1 % FPR, advantage and the ε lower bound it
certifies with 95 % confidence, per node and pooled over the honest nodes,
next to the accountant's ε (none without DP); a lower bound above it is
flagged as a violation.

The models are the run directory's saved checkpoints when it has one per
honest node: a run with [privacy.audit] save_models = true (models/node-I/),
or a cluster run whose nodes checkpointed (cluster/node-I.state/); each is
checked to reproduce the node's recorded local test accuracy and loss of
the last round. Otherwise the run is re-run from its config.toml (a
simulation is bit-reproducible from its seed, DP noise included) and the
re-run's last round is checked against metrics.jsonl first. RUN_DIR may be a
sweep directory: every run under it with a config.toml is audited. Each
report is also written to the run's audit.json.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			dirs, err := runDirs(args[0])
			if err != nil {
				return err
			}
			var opt *audit.Options
			if cmd.Flags().Changed("attack") || cmd.Flags().Changed("shadows") || cmd.Flags().Changed("samples") {
				opt = &audit.Options{Attack: attack, Shadows: shadows, Samples: samples}
			}
			var reps []*audit.Report
			for _, d := range dirs {
				rep, err := experiment.AuditWith(cmd.Context(), d, opt)
				if err != nil {
					return err
				}
				reps = append(reps, rep)
				if !o.json {
					fmt.Fprintf(o.stdout, "%s\n%s\n", d, rep)
				}
			}
			if o.json {
				return jsonOut(o.stdout, reps)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&attack, "attack", "threshold", `threshold, or lira (adds LiRA with shadow models); default: the run's [privacy.audit] attack, else threshold`)
	cmd.Flags().IntVar(&shadows, "shadows", 0, "LiRA's shadow models per node, 4 to 256 (0: 16)")
	cmd.Flags().IntVar(&samples, "samples", 0, "score at most this many members and non-members per node (0: all)")
	return cmd
}

// runDirs is dir itself when it holds a config.toml, else every directory
// under it that does and has a metrics.jsonl.
func runDirs(dir string) ([]string, error) {
	if rundir.Has(dir, rundir.ConfigFile) {
		return []string{dir}, nil
	}
	var out []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		if rundir.Has(p, rundir.ConfigFile, rundir.MetricsFile) {
			out = append(out, p)
		}
		return nil
	})
	if err == nil && len(out) == 0 {
		err = fmt.Errorf("%s: no run directory (config.toml and metrics.jsonl) in it", dir)
	}
	return out, err
}
