package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/trellis-fl/trellis/config"
	"github.com/trellis-fl/trellis/experiment"
)

// memHelp is the help of --dry-run, --probe and --no-memory-check.
const memHelp = `

Before starting, the run's memory is estimated from its config (model
parameters and gradients, optimizer state, activation and per-node buffers,
strategy state, the decoded dataset and index lists, × nodes) and compared
with the available memory (MemAvailable, or the cgroup limit in a container or
job; TRELLIS_MEMORY_AVAILABLE overrides): a run that would not fit is refused
before anything is allocated, with the numbers and what would fit
(--no-memory-check starts it anyway). --dry-run prints the estimate and runs
nothing; --probe (run, sweep) also builds the run and times its first round.`

// memFlags are the memory estimate's flags of run, sweep and launch.
type memFlags struct {
	dryRun, probe, noCheck bool
}

func (m *memFlags) register(c *cobra.Command, probe bool) {
	f := c.Flags()
	f.BoolVar(&m.dryRun, "dry-run", false, "run nothing: print the memory estimate (model, optimizer, per-node buffers, data, × nodes) against the available memory")
	if probe {
		f.BoolVar(&m.probe, "probe", false, "with the estimate, build the run and time its first round (writes nothing; implies --dry-run)")
	}
	f.BoolVar(&m.noCheck, "no-memory-check", false, "start even when the estimate exceeds the available memory")
}

// sweepFit is the memory estimate of a sweep's runs against this
// machine's available memory.
type sweepFit struct {
	runs   []experiment.RunEstimate
	mem    experiment.Memory
	memErr error
	// check is the refusal of the largest run (the runs of a sweep run one
	// after another), nil when it fits.
	check error
}

// fitSweep estimates the runs of cfg that shard owns (an error: the
// estimate cannot be made, e.g. a dataset that cannot be found).
func fitSweep(cfg config.Config, shard experiment.Shard) (sweepFit, error) {
	es, err := experiment.EstimateSweep(cfg, shard)
	if err != nil || len(es) == 0 {
		return sweepFit{}, err
	}
	f := sweepFit{runs: es}
	f.mem, f.memErr = experiment.MachineMemory()
	big := es[experiment.Largest(es)]
	f.check = experiment.CheckMemory(big.Config, big.Estimate, big.Shape, f.mem)
	return f, nil
}

// gate runs before a run or sweep: with --dry-run (or --probe) it
// prints the estimates and reports done; otherwise it refuses a run that
// would not fit (unless --no-memory-check) and bounds the heap's garbage
// to the available memory (a soft limit, GOMEMLIMIT unless set).
func (m *memFlags) gate(ctx context.Context, o *options, cfg config.Config, shard experiment.Shard) (done bool, err error) {
	dry := m.dryRun || m.probe
	fit, err := fitSweep(cfg, shard)
	if err != nil {
		if dry {
			return true, err
		}
		// The run reports its own error (a dataset it cannot load).
		return false, nil
	}
	if len(fit.runs) == 0 {
		return dry, nil
	}
	es, mem, memErr, check := fit.runs, fit.mem, fit.memErr, fit.check
	big := es[experiment.Largest(es)]
	if !dry {
		if check != nil {
			if m.noCheck {
				return false, nil // the user knows better: no soft limit under the live heap either
			}
			return true, check
		}
		experiment.LimitHeap(mem, big.Estimate)
		return false, nil
	}
	var probe *experiment.ProbeResult
	if m.probe && (check == nil || m.noCheck) {
		p, err := experiment.Probe(ctx, big.Config)
		if err != nil {
			return true, fmt.Errorf("probe: %w", err)
		}
		probe = &p
	}
	if o.json {
		type out struct {
			Runs   []experiment.RunEstimate `json:"runs"`
			Memory experiment.Memory        `json:"memory"`
			Fits   bool                     `json:"fits"`
			Probe  *experiment.ProbeResult  `json:"probe,omitempty"`
		}
		if err := jsonOut(o.stdout, out{es, mem, check == nil, probe}); err != nil {
			return true, err
		}
	} else {
		printEstimates(o, es, mem, memErr, probe)
	}
	if check != nil && !m.noCheck {
		return true, check
	}
	return true, nil
}

func printEstimates(o *options, es []experiment.RunEstimate, mem experiment.Memory, memErr error, probe *experiment.ProbeResult) {
	fmt.Fprint(o.stdout, experiment.SweepEstimateText(es))
	fmt.Fprintln(o.stdout, experiment.MemoryText(mem, memErr))
	if probe != nil {
		fmt.Fprint(o.stdout, probe.Text(es[experiment.Largest(es)].Estimate))
	}
}

// launchGate is --dry-run and the memory check of `trellis launch`: a
// monitor and one node process per node on this machine, each loading the
// dataset and building its node.
func (m *memFlags) launchGate(o *options, cfg config.Config) (done bool, err error) {
	d, err := (experiment.Shapes{}).Of(cfg)
	if err != nil {
		if m.dryRun {
			return true, err
		}
		return false, nil
	}
	l, err := experiment.EstimateLaunch(cfg, d)
	if err != nil {
		if m.dryRun {
			return true, err
		}
		return false, nil
	}
	mem, memErr := experiment.MachineMemory()
	check := experiment.CheckLaunchMemory(cfg, l, d, mem)
	if m.dryRun {
		if o.json {
			type out struct {
				experiment.LaunchEstimate
				Memory experiment.Memory `json:"memory"`
				Fits   bool              `json:"fits"`
			}
			if err := jsonOut(o.stdout, out{l, mem, check == nil}); err != nil {
				return true, err
			}
		} else {
			printEstimatesAndMemory(o, mem, memErr, l.Node, l.Monitor, l.Total)
		}
	}
	return m.refuse(check)
}

// printEstimatesAndMemory prints each estimate, then the available memory.
func printEstimatesAndMemory(o *options, mem experiment.Memory, memErr error, es ...experiment.Estimate) {
	for _, e := range es {
		fmt.Fprint(o.stdout, e.Text())
	}
	fmt.Fprintln(o.stdout, experiment.MemoryText(mem, memErr))
}

// refuse ends a dry run or a gate: check's error unless --no-memory-check.
func (m *memFlags) refuse(check error) (done bool, err error) {
	if check != nil && !m.noCheck {
		return true, check
	}
	return m.dryRun, nil
}

// nodeGate is the memory check of one node process (`trellis node`): its
// estimate (its shard of the dataset, or its pages of a launch's mapped
// file when mapped, its splits and node) against this machine's available
// memory, before anything is loaded. An edge device too small for its node
// refuses to start with the numbers instead of being killed by the OOM
// killer mid-run.
func (m *memFlags) nodeGate(o *options, cfg config.Config, mapped bool) (done bool, err error) {
	d, err := (experiment.Shapes{}).Of(cfg)
	if err != nil {
		if m.dryRun {
			return true, err
		}
		return false, nil // the node reports its own error (a dataset it cannot load)
	}
	estimate := experiment.EstimateNodeProcess
	if mapped {
		estimate = experiment.EstimateLaunchedNode
	}
	node, err := estimate(cfg, d)
	if err != nil {
		if m.dryRun {
			return true, err
		}
		return false, nil
	}
	mem, memErr := experiment.MachineMemory()
	check := experiment.CheckNodeProcessMemory(cfg, node, mem)
	if m.dryRun {
		if o.json {
			type out struct {
				Node   experiment.Estimate `json:"node_process"`
				Memory experiment.Memory   `json:"memory"`
				Fits   bool                `json:"fits"`
			}
			if err := jsonOut(o.stdout, out{node, mem, check == nil}); err != nil {
				return true, err
			}
		} else {
			printEstimatesAndMemory(o, mem, memErr, node)
		}
	}
	return m.refuse(check)
}
