package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/trellis-fl/trellis/experiment"
)

// auditCmd runs the membership-inference audit of a finished run (or of
// every run under a sweep directory); the logic is experiment.Audit.
func auditCmd(o *options) *cobra.Command {
	return &cobra.Command{
		Use:   "audit RUN_DIR",
		Short: "membership-inference audit of a run's final models: AUC, TPR at 1 % FPR, ε lower bound vs the accountant's ε",
		Long: `audit attacks every honest node's final model with the loss-threshold
membership inference (Yeom et al. 2018): members are the node's training
split, non-members its local test split. It reports the attack's AUC, TPR
at 1 % FPR, advantage, and the ε lower bound it certifies with 95 %
confidence, next to the accountant's ε of the node (none without DP). A
lower bound above the accountant's ε is flagged as a violation. For runs
with strategy local it adds the reference-model attack (each sample's loss
calibrated by the mean loss of the other nodes' models, which never saw it).

The models are not stored: the run is re-run from its config.toml (a
simulation is bit-reproducible from its seed, DP noise included) and the
re-run's last round is checked against metrics.jsonl first. RUN_DIR may be
a sweep directory: every run under it with a config.toml is audited. Each
report is also written to the run's audit.json.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			dirs, err := runDirs(args[0])
			if err != nil {
				return err
			}
			var reps []*experiment.AuditReport
			for _, d := range dirs {
				rep, err := experiment.Audit(cmd.Context(), d)
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
}

// runDirs is dir itself when it holds a config.toml, else every directory
// under it that does and has a metrics.jsonl.
func runDirs(dir string) ([]string, error) {
	if _, err := os.Stat(filepath.Join(dir, experiment.ConfigFile)); err == nil {
		return []string{dir}, nil
	}
	var out []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		_, e1 := os.Stat(filepath.Join(p, experiment.ConfigFile))
		_, e2 := os.Stat(filepath.Join(p, experiment.MetricsFile))
		if e1 == nil && e2 == nil {
			out = append(out, p)
		}
		return nil
	})
	if err == nil && len(out) == 0 {
		err = fmt.Errorf("%s: no run directory (config.toml and metrics.jsonl) in it", dir)
	}
	return out, err
}
