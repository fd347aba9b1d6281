package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/trellis-fl/trellis/config"
	"github.com/trellis-fl/trellis/experiment"
	"github.com/trellis-fl/trellis/rundir"
	"github.com/trellis-fl/trellis/scale"
)

// shardHelp is the sweep command's help on --shard and --merge.
const shardHelp = `

A sweep can run as several jobs: --shard I/N runs only the runs k (numbered from
0 as ` + "`trellis validate`" + ` lists them) with k mod N = I, into the same directory layout, and
writes no summary; --shard auto takes I and N from a Slurm job array
(SLURM_ARRAY_TASK_ID, SLURM_ARRAY_TASK_COUNT) or a Kubernetes Indexed Job
(JOB_COMPLETION_INDEX, with N from --shard-count or TRELLIS_SHARD_COUNT). Once every
shard is done, --merge assembles summary.csv, results.md and the plots in -o DIR
(byte for byte an unsharded sweep's summary), taking runs from DIR and from the
directories given after the config, or names the runs still missing.`

// shardFlags are the sweep command's --shard, --shard-count and --merge.
type shardFlags struct {
	shard string
	count int
	merge bool
}

func (s *shardFlags) add(c *cobra.Command) {
	f := c.Flags()
	f.StringVar(&s.shard, "shard", "", "I/N: run only the runs k with k mod N = I (0 ≤ I < N; `trellis validate` numbers the runs); auto: from SLURM_ARRAY_TASK_ID/COUNT or JOB_COMPLETION_INDEX")
	f.IntVar(&s.count, "shard-count", 0, "with --shard auto: the number of shards, where the scheduler does not say it (a Kubernetes Indexed Job)")
	f.BoolVar(&s.merge, "merge", false, "run nothing: assemble the sweep's summary.csv, results.md and plots in -o DIR from finished runs there and in the directories given after the config, or name the missing runs")
}

// args checks the positional arguments: directories only with --merge.
func (s *shardFlags) args(cmd *cobra.Command, args []string) error {
	if len(args) < 1 || len(args) > 1 && !s.merge {
		err := cobra.ExactArgs(1)(cmd, args)
		if len(args) > 1 {
			err = fmt.Errorf("%w: one config or preset (directories to merge go with --merge)", err)
		}
		return err
	}
	if s.merge && s.shard != "" {
		return errors.New("--merge and --shard exclude each other: run the shards, then merge")
	}
	return nil
}

// get is the shard to run (the zero Shard: the whole sweep).
func (s *shardFlags) get() (experiment.Shard, error) {
	switch s.shard {
	case "":
		if s.count != 0 {
			return experiment.Shard{}, errors.New("--shard-count goes with --shard auto")
		}
		return experiment.Shard{}, nil
	case "auto":
		return experiment.ShardFromEnv(os.Getenv, s.count)
	}
	if s.count != 0 {
		return experiment.Shard{}, errors.New("--shard-count goes with --shard auto (--shard I/N gives the count)")
	}
	return experiment.ParseShard(s.shard)
}

// mergeSweep is `trellis sweep CFG --merge [DIR…]`.
func mergeSweep(o *options, c config.Config, out string, from []string) error {
	res, err := experiment.MergeSweep(c, out, from)
	if err != nil {
		return err
	}
	return printSweep(o, out, res)
}

// printShard reports a finished shard: what it ran, and how to merge.
func printShard(o *options, cfg, out string, sh experiment.Shard, res *experiment.SweepResult) error {
	ks := experiment.ShardRuns(len(res.Runs), sh)
	if o.json {
		type row struct {
			Run   int          `json:"run"`
			Dir   string       `json:"dir"`
			Final rundir.Final `json:"final"`
		}
		rows := []row{}
		for _, k := range ks {
			if res.Errs[k] == nil {
				rows = append(rows, row{k, res.Runs[k].Dir, res.Fin[k]})
			}
		}
		return jsonOut(o.stdout, map[string]any{"shard": sh.String(), "runs": rows})
	}
	fmt.Fprintf(o.stdout, "shard %s: %d of the sweep's %d runs in %s\n", sh, len(ks), len(res.Runs), out)
	fmt.Fprintf(o.stdout, "once every shard is done: trellis sweep %s --merge -o %s\n", scale.Quote(cfg), scale.Quote(out))
	return nil
}
