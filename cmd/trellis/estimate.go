package main

import (
	"context"
	"fmt"
	"math"
	"os"
	"runtime/debug"

	"github.com/spf13/cobra"

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

// estimated is one run's estimate.
type estimated struct {
	Dir      string              `json:"dir,omitempty"`
	Estimate experiment.Estimate `json:"estimate"`
	shape    experiment.DataShape
	config   experiment.Config
}

// shapes loads each dataset once (only those not known without loading).
type shapes map[string]experiment.DataShape

func (s shapes) of(c experiment.Config) (experiment.DataShape, error) {
	if d, ok := c.KnownShape(); ok {
		return d, nil
	}
	key := c.Data.Dataset + "\x00" + c.Data.Dir
	if d, ok := s[key]; ok {
		return d, nil
	}
	tt, err := c.LoadData()
	if err != nil {
		return experiment.DataShape{}, err
	}
	d := experiment.ShapeOf(tt)
	s[key] = d
	return d, nil
}

// estimateRuns estimates the runs of cfg's sweep that shard owns, the
// largest first in the result's order of Expand.
func estimateRuns(cfg experiment.Config, shard experiment.Shard) ([]estimated, error) {
	runs, _, err := cfg.Expand()
	if err != nil {
		return nil, err
	}
	ds := shapes{}
	var out []estimated
	for k, r := range runs {
		if !shard.Owns(k) {
			continue
		}
		d, err := ds.of(r.Config)
		if err != nil {
			return nil, err
		}
		e, err := r.Config.EstimateWith(d)
		if err != nil {
			return nil, fmt.Errorf("run %s: %w", r.Dir, err)
		}
		dir := r.Dir
		if len(runs) == 1 {
			dir = ""
		}
		out = append(out, estimated{Dir: dir, Estimate: e, shape: d, config: r.Config})
	}
	return out, nil
}

func largest(es []estimated) int {
	best := 0
	for i, e := range es {
		if e.Estimate.Live > es[best].Estimate.Live {
			best = i
		}
	}
	return best
}

// memoryGate runs before a run or sweep: with --dry-run (or --probe) it
// prints the estimates and reports done; otherwise it refuses a run that
// would not fit (unless --no-memory-check) and bounds the heap's garbage
// to the available memory (a soft limit, GOMEMLIMIT unless set).
func (m *memFlags) gate(ctx context.Context, o *options, cfg experiment.Config, shard experiment.Shard) (done bool, err error) {
	dry := m.dryRun || m.probe
	es, err := estimateRuns(cfg, shard)
	if err != nil {
		if dry {
			return true, err
		}
		// The run reports its own error (a dataset it cannot load).
		return false, nil
	}
	if len(es) == 0 {
		return dry, nil
	}
	mem, memErr := experiment.MachineMemory()
	big := es[largest(es)]
	check := big.config.CheckMemory(big.Estimate, big.shape, mem)
	if !dry {
		if check != nil {
			if m.noCheck {
				return false, nil // the user knows better: no soft limit under the live heap either
			}
			return true, check
		}
		setMemoryLimit(mem)
		return false, nil
	}
	var probe *experiment.ProbeResult
	if m.probe && (check == nil || m.noCheck) {
		p, err := big.config.Probe(ctx)
		if err != nil {
			return true, fmt.Errorf("probe: %w", err)
		}
		probe = &p
	}
	if o.json {
		type out struct {
			Runs   []estimated             `json:"runs"`
			Memory experiment.Memory       `json:"memory"`
			Fits   bool                    `json:"fits"`
			Probe  *experiment.ProbeResult `json:"probe,omitempty"`
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

func printEstimates(o *options, es []estimated, mem experiment.Memory, memErr error, probe *experiment.ProbeResult) {
	w := o.stdout
	big := largest(es)
	if len(es) > 1 {
		fmt.Fprintf(w, "%d runs (run one after another: the largest sets the peak)\n", len(es))
		width := 3
		for _, e := range es {
			width = max(width, len(e.Dir))
		}
		fmt.Fprintf(w, "  %-*s %7s %13s %10s %10s\n", width, "run", "nodes", "parameters", "live", "peak")
		const most = 40
		for i, e := range es {
			if i == most && len(es) > most+1 {
				fmt.Fprintf(w, "  … %d more\n", len(es)-most)
				break
			}
			mark := ""
			if i == big {
				mark = "  ← largest"
			}
			fmt.Fprintf(w, "  %-*s %7d %13s %10s %10s%s\n", width, e.Dir, e.Estimate.Nodes, experiment.Thousands(e.Estimate.Params),
				experiment.BytesText(e.Estimate.Live), experiment.BytesText(e.Estimate.Peak), mark)
		}
		fmt.Fprintf(w, "\nthe largest, %s:\n", es[big].Dir)
	}
	fmt.Fprint(w, es[big].Estimate.Text())
	if memErr != nil {
		fmt.Fprintf(w, "available memory: unknown (%v)\n", memErr)
	} else {
		fmt.Fprintln(w, mem.Text())
	}
	if probe != nil {
		e := es[big].Estimate
		fmt.Fprintf(w, "probe (round 0 of %d, measured): load %.2f s, build %.2f s, round %.2f s (training %.2f s); whole run ≈ %s",
			probe.Rounds, probe.LoadSeconds, probe.BuildSeconds, probe.RoundSeconds, probe.TrainSeconds, duration(probe.ProjectedSeconds))
		if probe.PeakRSS > 0 {
			// One round leaves no garbage of earlier ones: its estimate is the live memory.
			fmt.Fprintf(w, "; its peak resident set %s (estimate for one round %s, %+.0f %%)", experiment.BytesText(probe.PeakRSS),
				experiment.BytesText(e.Live), 100*(float64(e.Live)/float64(probe.PeakRSS)-1))
		}
		if g := e.WithRoundTime(probe.RoundSeconds); g.Peak != e.Peak {
			fmt.Fprintf(w, "with rounds of %.1f s the collector runs every %d rounds at most: expected peak %s", probe.RoundSeconds,
				max(1, int(math.Ceil(120/probe.RoundSeconds))), experiment.BytesText(g.Peak))
		}
		fmt.Fprintln(w)
	}
}

func duration(s float64) string {
	switch {
	case s < 120:
		return fmt.Sprintf("%.0f s", s)
	case s < 7200:
		return fmt.Sprintf("%.0f min", s/60)
	}
	return fmt.Sprintf("%.1f h", s/3600)
}

// setMemoryLimit makes the collector keep the heap under the available
// memory (the run's live memory fits, checked): garbage is collected
// sooner instead of the process growing past what the machine has.
// GOMEMLIMIT, when set, is the user's.
func setMemoryLimit(m experiment.Memory) {
	if m.Available > 0 && os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(m.Available)
	}
}

// launchGate is --dry-run and the memory check of `trellis launch`: a
// monitor and one node process per node on this machine, each loading the
// dataset and building its node.
func (m *memFlags) launchGate(o *options, cfg experiment.Config) (done bool, err error) {
	d, err := (shapes{}).of(cfg)
	if err != nil {
		if m.dryRun {
			return true, err
		}
		return false, nil
	}
	node, err := cfg.EstimateNodeProcess(d)
	if err != nil {
		if m.dryRun {
			return true, err
		}
		return false, nil
	}
	mon := cfg.EstimateMonitor()
	total := experiment.Estimate{Kind: "launch", Name: cfg.Name, Nodes: cfg.Nodes, Params: node.Params, Model: node.Model,
		Parts: []experiment.EstimatePart{
			{Name: "node processes", Each: node.Peak, Count: cfg.Nodes, PerNode: true, How: "each its expected peak: its own dataset, splits and node"},
			{Name: "monitor", Each: mon.Peak, Count: 1},
			{Name: "launcher (this process)", Each: experiment.EstimateRuntimeBytes, Count: 1},
		}}
	total = experiment.Totals(total)
	mem, memErr := experiment.MachineMemory()
	var check error
	if mem.Available > 0 && total.Live > mem.Available {
		fits := launchFits(cfg, d, mem.Available)
		check = &experiment.MemoryError{Estimate: total, Memory: mem, Fits: fits}
	}
	if m.dryRun {
		if o.json {
			type out struct {
				Node    experiment.Estimate `json:"node_process"`
				Monitor experiment.Estimate `json:"monitor"`
				Total   experiment.Estimate `json:"total"`
				Memory  experiment.Memory   `json:"memory"`
				Fits    bool                `json:"fits"`
			}
			if err := jsonOut(o.stdout, out{node, mon, total, mem, check == nil}); err != nil {
				return true, err
			}
		} else {
			printEstimatesAndMemory(o, mem, memErr, node, mon, total)
		}
	}
	return m.refuse(check)
}

// printEstimatesAndMemory prints each estimate, then the available memory.
func printEstimatesAndMemory(o *options, mem experiment.Memory, memErr error, es ...experiment.Estimate) {
	for _, e := range es {
		fmt.Fprint(o.stdout, e.Text())
	}
	if memErr != nil {
		fmt.Fprintf(o.stdout, "available memory: unknown (%v)\n", memErr)
	} else {
		fmt.Fprintln(o.stdout, mem.Text())
	}
}

// refuse ends a dry run or a gate: check's error unless --no-memory-check.
func (m *memFlags) refuse(check error) (done bool, err error) {
	if check != nil && !m.noCheck {
		return true, check
	}
	return m.dryRun, nil
}

// nodeGate is the memory check of one node process (`trellis node`): its
// estimate (its own dataset, splits and node, as launch counts each node
// process) against this machine's available memory, before anything is
// loaded. An edge device too small for its node refuses to start with the
// numbers instead of being killed by the OOM killer mid-run.
func (m *memFlags) nodeGate(o *options, cfg experiment.Config) (done bool, err error) {
	d, err := (shapes{}).of(cfg)
	if err != nil {
		if m.dryRun {
			return true, err
		}
		return false, nil // the node reports its own error (a dataset it cannot load)
	}
	node, err := cfg.EstimateNodeProcess(d)
	if err != nil {
		if m.dryRun {
			return true, err
		}
		return false, nil
	}
	mem, memErr := experiment.MachineMemory()
	var check error
	if mem.Available > 0 && node.Live > mem.Available {
		check = &experiment.MemoryError{Estimate: node, Memory: mem,
			// data.samples would not help: a node decodes its whole dataset.
			Fits: []string{"a smaller model (model.kind, model.hidden)", "a machine with more memory"}}
	}
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

// launchFits is the node counts that fit as a launch on this machine.
func launchFits(cfg experiment.Config, d experiment.DataShape, avail int64) []string {
	lo, hi := 0, cfg.Nodes
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		x := cfg
		x.Nodes = mid
		node, err := x.EstimateNodeProcess(d)
		if err == nil && int64(mid)*node.Peak+x.EstimateMonitor().Peak+experiment.EstimateRuntimeBytes <= avail {
			lo = mid
		} else {
			hi = mid
		}
	}
	var fits []string
	if lo >= 1 {
		fits = append(fits, fmt.Sprintf("nodes = %d", lo))
	}
	return append(fits, "`trellis run` (one process: the dataset once)", "more machines (`trellis slurm launch`, `trellis k8s launch`)")
}
