package experiment

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"github.com/BurntSushi/toml"

	"github.com/trellis-fl/trellis/config"
	"github.com/trellis-fl/trellis/consensus/task"
	"github.com/trellis-fl/trellis/internal/seed"
	"github.com/trellis-fl/trellis/metrics"
	"github.com/trellis-fl/trellis/rundir"
	"github.com/trellis-fl/trellis/topology"
)

// ErrConsensusTask is the error of whatever builds a learning run's nodes
// (SetupOf: a simulation's, a deployment's, a node process's) from a
// config of task type consensus.
var ErrConsensusTask = errors.New("task type consensus ([consensus]) has no learning nodes to build: it runs in one process with `trellis run` (or `trellis sweep`), not as a deployment or node process")

// ConsensusSpec is the consensus task c describes ([consensus]): its
// graph (the [topology] section's, built as a learning run's), initial
// values drawn from the seed, method and parameters; the graph is
// refused unless undirected and connected.
func ConsensusSpec(c config.Config) (task.Spec, error) {
	if c.Consensus == nil {
		return task.Spec{}, fmt.Errorf("%s: no [consensus] section: not task type consensus", c.Name)
	}
	g, err := consensusGraph(c)
	if err != nil {
		return task.Spec{}, err
	}
	s := c.Consensus
	x0, err := task.InitialValues(c.Nodes, s.Dim, c.Seed, c.ConsensusInit())
	if err != nil {
		return task.Spec{}, err
	}
	return task.Spec{G: g, Method: s.Method, Params: c.ConsensusParams(), X0: x0, Init: c.ConsensusInit(), Iters: c.Rounds, Seed: c.Seed,
		Colluders: s.Colluders, Target: s.Target}, nil
}

// consensusGraph is c's graph, checked for the task: static, undirected,
// connected, with as many neighbours of the target as colluders.
func consensusGraph(c config.Config) (*topology.Graph, error) {
	if !c.StaticTopology() {
		return nil, fmt.Errorf("topology.kind = %q: task type consensus runs on one static graph", c.Topology.Kind)
	}
	d, err := c.Graph()
	if err != nil {
		return nil, err
	}
	g := d.At(0)
	if err := task.CheckGraph(g); err != nil {
		return nil, fmt.Errorf("topology.kind = %q: %w", c.Topology.Kind, err)
	}
	if s := c.Consensus; s.Colluders > 0 && s.Target < g.N() && s.Colluders > g.Degree(s.Target) {
		return nil, fmt.Errorf("consensus.colluders = %d: the coalition is neighbours of node consensus.target = %d, which has %d on this graph", s.Colluders, s.Target, g.Degree(s.Target))
	}
	return g, nil
}

// checkConsensus is Check for task type consensus.
func checkConsensus(c config.Config) error {
	if err := c.Validate(); err != nil {
		return err
	}
	_, err := consensusGraph(c)
	return err
}

// runConsensus is RunToDirWith for task type consensus: the method runs
// once per coordinate (task.Execute), then the run directory gets one
// round per iteration (rounds.jsonl, each with its metrics.ConsensusRound;
// metrics.jsonl stays empty, since the methods report their error over
// nodes, and so does timings.jsonl: the iterations of all coordinates are
// not timed one by one), and summary.csv the error after the last
// iteration. A finished run of the same config is kept; an interrupted
// one is redone from the start (the run takes seconds), never resumed.
//
// RunToDirWith has checked the directory against the config's hash and
// returned a finished run's results already.
func runConsensus(ctx context.Context, c config.Config, dir string, o RunOptions, hash string) (rundir.Final, error) {
	spec, err := ConsensusSpec(c)
	if err != nil {
		return rundir.Final{}, err
	}
	var text bytes.Buffer
	text.WriteString(config.ResolvedHeader)
	if err := toml.NewEncoder(&text).Encode(c); err != nil {
		return rundir.Final{}, err
	}
	man := rundir.NewManifest(c.Name, c.Seed, seed.Describe(seed.Seeded(c.Seed))+" (simulation: not private)")
	man.ConfigHash = hash
	w, err := rundir.Create(dir, rundir.Spec{Config: text.Bytes(), Manifest: man, Rounds: c.Rounds, FinalRounds: 1, Progress: o.Progress})
	if err != nil {
		return rundir.Final{}, err
	}
	res, err := task.Execute(spec)
	if err != nil {
		_, _ = w.Close(err)
		return rundir.Final{}, err
	}
	var eps *float64
	if m, _ := task.Lookup(spec.Method); m.DP {
		e := spec.Params.Epsilon
		eps = &e
	}
	var runErr error
	for k, r := range res.Records {
		if runErr = ctx.Err(); runErr != nil {
			break
		}
		cr := &metrics.ConsensusRound{Method: spec.Method, MSE: r.MSE, MaxAbsErr: r.MaxAbsErr, Epsilon: eps}
		if k == len(res.Records)-1 {
			cr.ReconRMSE = res.ReconRMSE
		}
		if runErr = w.Round(&metrics.Round{Round: k, Evaluated: true, Consensus: cr}); runErr != nil {
			break
		}
	}
	return w.Close(runErr)
}
