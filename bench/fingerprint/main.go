// Command fingerprint prints the SHA-256 of metrics.jsonl and rounds.jsonl
// of short runs of every preset family, so a refactor that must not change
// behaviour can be checked: run it before and after, and diff the output.
//
//	go run ./bench/fingerprint > before.txt
//	... change the code ...
//	go run ./bench/fingerprint | diff before.txt -
//
// The presets themselves are not edited: each is shortened by overrides
// applied to its parsed config (fewer rounds and samples, the first seed
// only), then every run of its sweep is run into a temporary directory.
// bench/fingerprint.sh adds the demo through the CLI.
package main

import (
	"context"
	"encoding/hex"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/trellis-fl/trellis/config"
	"github.com/trellis-fl/trellis/configs"
	"github.com/trellis-fl/trellis/experiment"
	"github.com/trellis-fl/trellis/rundir"
)

// presets covers every preset family: quickstart, byzantine-sweep, the
// R-DPFL tables, DMTT main and sensitivity, the LIGHTYEAR malfunctions
// and score study, minsum-check, node- and sample-level DP, secure
// aggregation's modes.
var presets = []string{
	"quickstart",
	"byzantine-sweep",
	"minsum-check",
	"rdpfl/table2-attacks-quick",
	"rdpfl/table3-ablation-quick",
	"dmtt/main-quick",
	"dmtt/sensitivity-quick",
	"lightyear/sfa-quick",
	"lightyear/scores-quick",
	"privacy/node-quick",
	"privacy/sample-quick",
	"secagg/modes-quick",
}

func main() {
	rounds := flag.Int("rounds", 2, "rounds per run")
	perNode := flag.Int("samples-per-node", 200, "training samples per node")
	only := flag.String("only", "", "run only presets whose name contains this")
	flag.Parse()
	tmp, err := os.MkdirTemp("", "trellis-fingerprint-")
	if err != nil {
		fail(err)
	}
	defer os.RemoveAll(tmp)
	for _, name := range presets {
		if !strings.Contains(name, *only) {
			continue
		}
		if err := fingerprint(name, tmp, *rounds, *perNode); err != nil {
			fail(fmt.Errorf("%s: %w", name, err))
		}
	}
}

func fingerprint(name, tmp string, rounds, perNode int) error {
	text, ok := configs.Read(name)
	if !ok {
		return fmt.Errorf("no such preset")
	}
	c, err := config.Parse(text, name)
	if err != nil {
		return err
	}
	// The overrides: short, but every mechanism of the preset still runs
	// (at least two rounds, so history and forwarding act).
	c.Rounds = rounds
	c.EvalEvery = min(c.EvalEvery, rounds)
	evaluated := rounds
	if c.EvalEvery > 1 {
		evaluated = (rounds + c.EvalEvery - 1) / c.EvalEvery
	}
	c.FinalRounds = min(c.FinalRounds, evaluated)
	c.Training.Epochs = min(c.Training.Epochs, 1)
	if c.Data.Samples == 0 || c.Data.Samples > perNode*c.Nodes {
		c.Data.Samples = perNode * c.Nodes
	}
	if c.Evaluation.GlobalTest < 0 || c.Evaluation.GlobalTest > 500 {
		c.Evaluation.GlobalTest = 500
	}
	if len(c.Sweep.Seeds) > 1 {
		c.Sweep.Seeds = c.Sweep.Seeds[:1]
	}
	runs, _, err := c.Expand()
	if err != nil {
		return err
	}
	for _, r := range runs {
		dir := filepath.Join(tmp, strings.ReplaceAll(name, "/", "_"), r.Dir)
		if _, err := experiment.RunToDir(context.Background(), r.Config, dir, nil); err != nil {
			return fmt.Errorf("run %s: %w", r.Dir, err)
		}
		if r.Config.SecAgg.Mode == "ckks" {
			// lattigo draws CKKS keys and encryption noise from
			// crypto/rand, so these runs differ at the 1e-6 level from
			// one run to the next: there is no fingerprint to compare.
			fmt.Printf("%s/%s not-reproducible (ckks)\n", name, r.Dir)
			continue
		}
		var sums []string
		for _, f := range []string{rundir.MetricsFile, rundir.RoundsFile} {
			h, err := rundir.Digest(dir, f)
			if err != nil {
				return err
			}
			sums = append(sums, hex.EncodeToString(h[:8]))
		}
		fmt.Printf("%s/%s %s\n", name, r.Dir, strings.Join(sums, " "))
	}
	return nil
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "fingerprint:", err)
	os.Exit(1)
}
