package experiment

import (
	"context"
	"fmt"
	"maps"
	"path/filepath"
	"runtime"
	"slices"

	"github.com/trellis-fl/trellis/adversary"
	"github.com/trellis-fl/trellis/config"
	"github.com/trellis-fl/trellis/data"
	"github.com/trellis-fl/trellis/metrics"
	"github.com/trellis-fl/trellis/nn"
	"github.com/trellis-fl/trellis/node"
	"github.com/trellis-fl/trellis/privacy/audit"
	"github.com/trellis-fl/trellis/rundir"
	"github.com/trellis-fl/trellis/sim"
	"github.com/trellis-fl/trellis/wire"
)

// This file gets a run's final models for the membership-inference audit
// (package privacy/audit, which attacks them): at the end of a run, from
// the run directory's saved models, or by re-running the run from its
// config; and it trains the audit's shadow models as the run trains.

// auditOptions are the run's [privacy.audit] settings, or the loss
// threshold on every sample when it has none.
func auditOptions(c config.Config) audit.Options {
	if c.Privacy.Audit == nil {
		return audit.Options{Attack: "threshold"}
	}
	a := c.Privacy.Audit.WithDefaults()
	return audit.Options{Attack: a.Attack, Shadows: a.Shadows, Samples: a.Samples}
}

// checkAuditOptions checks o as the keys of [privacy.audit].
func checkAuditOptions(o audit.Options) error {
	a := config.Audit{Attack: o.Attack, Shadows: o.Shadows, Samples: o.Samples}
	if err := a.Validate(); err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	return nil
}

// Audit audits the final models of the run in dir with the attack of the
// run's [privacy.audit] (the loss threshold when it has none); AuditWith
// chooses it.
func Audit(ctx context.Context, dir string) (*audit.Report, error) {
	return AuditWith(ctx, dir, nil)
}

// AuditWith audits the final models of the run in dir with o (nil: the
// run's [privacy.audit]). The models are the run directory's checkpoints
// when it holds one per honest node (FindModels: a run with save_models,
// a cluster run's node checkpoints), each checked first against the
// last round of metrics.jsonl — its local test accuracy and loss must be
// the recorded ones exactly; otherwise the run is re-run from its
// config.toml, which reproduces a simulation bit for bit (every stream,
// the DP noise included, comes from the seed), and the re-run's last
// round is checked against metrics.jsonl before its models are trusted.
// The report is written to dir/audit.json.
func AuditWith(ctx context.Context, dir string, o *audit.Options) (*audit.Report, error) {
	text, err := rundir.ReadConfig(dir)
	if err != nil {
		return nil, err
	}
	c, err := config.Parse(text, filepath.Join(dir, rundir.ConfigFile))
	if err != nil {
		return nil, err
	}
	opts := auditOptions(c)
	if o != nil {
		opts = *o
		if opts.Attack == "lira" && opts.Shadows == 0 {
			opts.Shadows = config.DefaultShadows
		}
	}
	if err := checkAuditOptions(opts); err != nil {
		return nil, err
	}
	if c.Async() {
		// A simulation's manifest has its virtual clock; a deployment's
		// monitor writes none (its records are by step index).
		if man, err := rundir.ReadManifest(dir); err == nil && man.Async == nil {
			return nil, fmt.Errorf("%s: a deployed asynchronous run (its manifest has no virtual clock) cannot be audited: its nodes end at different steps, which its records do not vouch for, and a re-run does not reproduce its arrival order; audit a simulation of the same config (trellis run, then trellis audit)", dir)
		}
	}
	round, recorded, err := rundir.LastRound(dir)
	if err != nil {
		return nil, err
	}
	tt, err := LoadData(c)
	if err != nil {
		return nil, err
	}
	s, err := SetupOf(c, tt)
	if err != nil {
		return nil, err
	}
	s = s.Defaults()
	b, err := s.Build()
	if err != nil {
		return nil, err
	}
	source := "checkpoints"
	models, err := FindModels(dir)
	if err != nil {
		return nil, err
	}
	if c.Async() {
		// In asynchronous timing a node's last step need not be one it
		// evaluated, so the recorded accuracy cannot vouch for a saved
		// model: the simulation is re-run (a deployed run's re-run then
		// fails the check below: its arrival order is not the config's).
		models = nil
	}
	if len(models) > 0 {
		if err := loadModels(s, b, models, round, recorded); err != nil {
			return nil, fmt.Errorf("%s: %w", dir, err)
		}
	} else {
		source = "re-run"
		var last *metrics.Round
		if err := sim.Run(ctx, b.Config, b.Nodes, metrics.SinkFunc(func(r *metrics.Round) error {
			last = r
			return nil
		})); err != nil {
			return nil, err
		}
		if err := sameRound(last, recorded); err != nil {
			return nil, fmt.Errorf("%s: the re-run does not reproduce the recorded run (%w): the code or the data changed since; audit refused", dir, err)
		}
	}
	rep, err := auditBuilt(ctx, s, b, recorded, opts)
	if err != nil {
		return nil, err
	}
	rep.Run, rep.Models = dir, source
	return rep, audit.Write(dir, rep)
}

// auditBuilt audits the honest nodes of b, whose models are the run's
// final ones; last is the run's last round (each node's ε and δ).
func auditBuilt(ctx context.Context, s Setup, b *Built, last []metrics.NodeRound, o audit.Options) (*audit.Report, error) {
	shift, err := data.FeatureShift(s.Data.Train.Shape, s.Nodes, s.Shift)
	if err != nil {
		return nil, err
	}
	rounds, err := shadowRounds(s, b)
	if err != nil {
		return nil, err
	}
	t := audit.Target{Seed: s.Seed, Train: s.Data.Train, Splits: b.Splits, Shift: shift, Last: last,
		Models: make([]*nn.Model, len(b.Nodes)), Workers: auditWorkers(s),
		// Reference models must be independent of the node's data: with
		// strategy local, the other honest nodes' models are.
		Reference: s.Strategy().Name() == "local",
		Shadow: func(ctx context.Context, i int, shadowSeed uint64, sub []int32, train int, shift data.Transform) (*nn.Model, error) {
			return s.trainShadow(ctx, i, rounds[i], shadowSeed, sub, train, shift)
		}}
	for i, n := range b.Nodes {
		t.Models[i] = n.Model()
		if !slices.Contains(b.Config.Adversary.Byzantine, i) {
			t.Honest = append(t.Honest, i)
		}
	}
	return audit.Run(ctx, t, o)
}

// shadowRounds is how many rounds each node's shadow models train: the
// run's rounds, or in asynchronous timing the steps the node took (its
// last step plus one: a straggler's shadows train as few steps as it
// did, each one release of its DP layer, as in the node).
func shadowRounds(s Setup, b *Built) ([]int, error) {
	out := make([]int, len(b.Nodes))
	for i, n := range b.Nodes {
		out[i] = s.Rounds
		if s.Async == nil {
			continue
		}
		snap, err := n.Snapshot()
		if err != nil {
			return nil, fmt.Errorf("node %d: its steps: %w", i, err)
		}
		out[i] = snap.Round + 1
	}
	return out, nil
}

// FindModels looks for saved final models in a run directory: every
// checkpoint (experiment.Load) rundir.Checkpoints finds in it — ModelsDir's
// node-I (save_models), a cluster run's node checkpoints — keeping each
// node's latest round. None is no error (an empty map); a checkpoint
// that does not load is.
func FindModels(dir string) (map[int]*Checkpoint, error) {
	dirs, err := rundir.Checkpoints(dir, CheckpointJSON)
	if err != nil {
		return nil, err
	}
	out := map[int]*Checkpoint{}
	for _, d := range dirs {
		st, err := Load(d)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", d, err)
		}
		if old, ok := out[st.Node]; !ok || st.Round > old.Round {
			out[st.Node] = st
		}
	}
	return out, nil
}

// loadModels puts the checkpoints into b's honest models (a Byzantine
// node's is not audited): one per honest node, each of the run's last
// round, of the model's size, and reproducing the node's recorded local
// test accuracy and loss exactly.
func loadModels(s Setup, b *Built, models map[int]*Checkpoint, round int, rec []metrics.NodeRound) error {
	shift, err := data.FeatureShift(s.Data.Train.Shape, s.Nodes, s.Shift)
	if err != nil {
		return err
	}
	for i, n := range b.Nodes {
		if slices.Contains(b.Config.Adversary.Byzantine, i) {
			continue // not audited: its checkpoint, if any, is not read
		}
		st, ok := models[i]
		if !ok {
			return fmt.Errorf("no checkpoint of node %d (found nodes %v)", i, slices.Sorted(maps.Keys(models)))
		}
		if st.Round != round {
			return fmt.Errorf("node %d's checkpoint is of round %d, the run's last round is %d", i, st.Round, round)
		}
		if err := n.Model().SetParams(st.Params); err != nil {
			return fmt.Errorf("node %d's checkpoint: %w", i, err)
		}
		if i >= len(rec) || rec[i].Node != i {
			return fmt.Errorf("metrics.jsonl's last round has no record of node %d", i)
		}
		ev, err := n.Model().Evaluate(data.NewBatcher(s.Data.Train, b.Splits[i].Test, nil, shift[i]))
		if err != nil {
			return fmt.Errorf("node %d: %w", i, err)
		}
		if ev.Accuracy != rec[i].LocalAcc || ev.Loss != rec[i].LocalLoss {
			return fmt.Errorf("node %d's checkpoint is not the model the run evaluated in round %d: local accuracy %v and loss %v, recorded %v and %v",
				i, round, ev.Accuracy, ev.Loss, rec[i].LocalAcc, rec[i].LocalLoss)
		}
	}
	return nil
}

// saveModels writes every node's model into dir's rundir.ModelsDir
// (CaptureModel and Save, after the last round).
func saveModels(dir string, b *Built, round int) error {
	for i, n := range b.Nodes {
		if err := Save(filepath.Join(dir, rundir.ModelDir(i)), CaptureModel(n, round)); err != nil {
			return err
		}
	}
	return nil
}

// auditAtEnd is [privacy.audit] at the end of a run into dir: the final
// models saved if asked, the audit of b (just run; last its last round)
// written to audit.json, and its summary for summary.csv.
func auditAtEnd(ctx context.Context, c config.Config, dir string, s Setup, b *Built, last *metrics.Round) (*rundir.AuditSummary, error) {
	a := c.Privacy.Audit
	if a == nil || last == nil {
		return nil, nil
	}
	if a.SaveModels {
		if err := saveModels(dir, b, last.Round); err != nil {
			return nil, fmt.Errorf("saving the final models: %w", err)
		}
	}
	rep, err := auditBuilt(ctx, s.Defaults(), b, last.Nodes, auditOptions(c))
	if err != nil {
		return nil, fmt.Errorf("audit: %w", err)
	}
	rep.Run, rep.Models = dir, "run"
	if err := audit.Write(dir, rep); err != nil {
		return nil, err
	}
	return rep.Summary(), nil
}

// sameRound checks the re-run's last round against the recorded one: the
// evaluation and ε of every node.
func sameRound(r *metrics.Round, rec []metrics.NodeRound) error {
	if r == nil || len(r.Nodes) != len(rec) {
		return fmt.Errorf("a different number of nodes or rounds")
	}
	for i, a := range r.Nodes {
		b := rec[i]
		if a.Node != b.Node || a.LocalAcc != b.LocalAcc || a.LocalLoss != b.LocalLoss || a.TrainLoss != b.TrainLoss {
			return fmt.Errorf("node %d: local accuracy %v, recorded %v", a.Node, a.LocalAcc, b.LocalAcc)
		}
		if (a.Epsilon == nil) != (b.Epsilon == nil) || a.Epsilon != nil && *a.Epsilon != *b.Epsilon {
			return fmt.Errorf("node %d: ε differs from the recorded one", a.Node)
		}
	}
	return nil
}

// trainShadow trains a shadow model of node i for the audit's LiRA
// (audit.Target.Shadow) on the samples sub, as node i trains: a one-node
// experiment of s's model, training and DP setting for rounds rounds
// (shadowRounds: in asynchronous timing node i's steps, each a round of
// the shadow, which runs in rounds) — alone (strategy local) — with node
// i's feature shift, seeded from shadowSeed. train is node i's training
// split size, which fixes the noise multiplier and δ (the node's, even
// where the shadow's own size would calibrate another).
func (s Setup) trainShadow(ctx context.Context, i, rounds int, shadowSeed uint64, sub []int32, train int, shift data.Transform) (*nn.Model, error) {
	sh := s
	sh.Rounds, sh.Async = rounds, nil
	sh.Nodes, sh.Pool, sh.Partition, sh.Shift, sh.Fractions = 1, 64, data.PartitionConfig{Method: data.IID}, data.ShiftConfig{}, data.Fractions{}
	sh.Graph, sh.Strategy = nil, nil // one node, local
	sh.ByzantineFraction, sh.ByzantineIDs, sh.Attack, sh.Drop = 0, nil, nil, 0
	sh.SameForAll, sh.ByzantineIdle, sh.Claims = false, false, adversary.ClaimAttack{}
	sh.Trust, sh.GlobalTest, sh.EvalEvery = nil, 0, 0
	sh.WireRoundTrip, sh.Timings, sh.Random, sh.Workers = false, nil, nil, 1
	sh.Seed = shadowSeed
	if s.Privacy != nil {
		nd, err := s.nodeDP(train)
		if err != nil {
			return nil, err
		}
		p := *s.Privacy
		p.Multiplier, p.TargetEpsilon, p.Delta = nd.z, 0, nd.delta
		sh.Privacy = &p
	}
	p, err := sh.plan()
	if err != nil {
		return nil, err
	}
	p.splits = []data.ClientSplit{{Train: sub, Test: sub[:1]}}
	p.shift = []data.Transform{shift}
	keys := wire.NewSeedKeys(sh.Seed, 1)
	n, err := p.node(0, keys)
	if err != nil {
		return nil, err
	}
	if rounds == 0 {
		return n.Model(), nil // a node that ended no step: its initial model
	}
	cfg := sim.Config{Rounds: sh.Rounds, EvalEvery: sh.Rounds, Graph: p.graph, Identities: keys.All(), Seed: sh.Seed, Workers: 1}
	if err := sim.Run(ctx, cfg, []*node.Node{n}, metrics.SinkFunc(func(*metrics.Round) error { return nil })); err != nil {
		n.Model().Close()
		return nil, err
	}
	return n.Model(), nil
}

// auditWorkers is how many shadow models train at once.
func auditWorkers(s Setup) int {
	if s.Workers > 0 {
		return s.Workers
	}
	return runtime.GOMAXPROCS(0)
}
