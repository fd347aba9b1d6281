package experiment

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"

	"github.com/BurntSushi/toml"

	"github.com/trellis-fl/trellis/config"
	"github.com/trellis-fl/trellis/data"
	"github.com/trellis-fl/trellis/internal/seed"
	"github.com/trellis-fl/trellis/metrics"
	"github.com/trellis-fl/trellis/rundir"
	"github.com/trellis-fl/trellis/sim"
)

// RunOptions are RunToDirWith's options.
type RunOptions struct {
	// Progress is told after every round (replayed ones included).
	Progress rundir.Progress
	// Force redoes the run from round 0 when its directory holds a run of
	// another config, or a finished run, instead of refusing or keeping it.
	Force bool
	// Live, when set, also gets the run's records as a metrics.Latest sink
	// (a live viewer: it may skip records and never makes a round wait);
	// in asynchronous timing, if it is a StepSink, every step record too.
	Live metrics.Sink
	// Data, when set, is the run's dataset as LoadData returns it, loaded
	// once by a caller that makes many runs of it (decoding the embedded
	// MNIST takes longer than a short run); runs only read it.
	Data *data.TrainTest
}

// RunToDir is RunToDirWith without force.
func RunToDir(ctx context.Context, c config.Config, dir string, progress rundir.Progress) (rundir.Final, error) {
	return RunToDirWith(ctx, c, dir, RunOptions{Progress: progress})
}

// RunToDirWith runs one config into dir (created if needed): config,
// manifest, per-node metrics, round aggregates and timings as rounds
// finish, and the summary at the end (rundir has the files). Cancelling
// ctx stops after the current round; the files then hold every finished
// round completely, and no summary.
//
// A directory that already holds this config's run (the manifest's
// config_sha256, ConfigHash) is resumed: a finished run is returned as it
// is; an interrupted one (Ctrl-C, kill, power loss) continues after its
// last complete round. The rounds on file are the checkpoint: the
// simulator recomputes them from the seed, checks that each one's records
// are byte for byte those on file (an error otherwise: the code or the
// machine changed what the config computes), and appends the rest, so the
// final files are identical to those of an uninterrupted run. A directory
// holding another config's run is refused (ErrOtherConfig) unless
// o.Force.
//
// A config of task type consensus ([consensus]) runs its own driver
// (runConsensus) into the same files.
func RunToDirWith(ctx context.Context, c config.Config, dir string, o RunOptions) (rundir.Final, error) {
	hash, err := ConfigHash(c)
	if err != nil {
		return rundir.Final{}, err
	}
	done, err := rundir.Previous(dir, hash, c.Rounds, o.Force)
	if err != nil {
		return rundir.Final{}, err
	}
	if done == rundir.Finished {
		if fin, ok := rundir.ReadFinal(dir); ok {
			return fin, nil
		}
		done = 0
	}
	if c.Consensus != nil {
		return runConsensus(ctx, c, dir, o, hash)
	}
	var tt data.TrainTest
	if o.Data != nil {
		tt = *o.Data
	} else if tt, err = LoadData(c); err != nil {
		return rundir.Final{}, err
	}
	s, err := SetupOf(c, tt)
	if err != nil {
		return rundir.Final{}, err
	}
	spec, err := runSpec(c, config.ResolvedHeader, hash, seed.Describe(seed.Seeded(c.Seed))+" (simulation: not private)", o.Progress)
	if err != nil {
		return rundir.Final{}, err
	}
	spec.Resume = done
	if s.Async != nil {
		// An asynchronous run's steps go to steps.jsonl, its clock to the
		// manifest (asyncClock).
		spec.Steps = true
		if spec.Manifest.Async, err = asyncClock(c, s); err != nil {
			return rundir.Final{}, err
		}
	}
	w, err := rundir.Create(dir, spec)
	if err != nil {
		return rundir.Final{}, err
	}
	s.Timings = w.Timing
	// The run directory takes every record, in order, on a goroutine of its
	// own: the next round starts while the last one is written.
	out := metrics.NewFanout()
	out.Add(w, metrics.Every, 0)
	if o.Live != nil {
		out.Add(o.Live, metrics.Latest, 0)
	}
	// The run keeps its nodes for [privacy.audit] (auditAtEnd) and its
	// last round for their ε.
	var last *metrics.Round
	if c.Privacy.Audit != nil {
		out.Add(metrics.SinkFunc(func(r *metrics.Round) error { last = r; return nil }), metrics.Every, 0)
	}
	// The soft memory limit follows the live heap round by round
	// (FollowLiveHeap; nothing without LimitHeap's limit).
	out.Add(metrics.SinkFunc(func(*metrics.Round) error { FollowLiveHeap(); return nil }), metrics.Every, 0)
	var sink metrics.Sink = out
	if s.Async != nil {
		sink = stepsTo(w, s.Async, out, o.Live)
	}
	b, runErr := s.Build()
	if runErr == nil {
		runErr = sim.Run(ctx, b.Config, b.Nodes, sink)
	}
	if err := out.Close(); err != nil && runErr == nil {
		runErr = err
	}
	fin, err := w.End(runErr)
	if err != nil {
		return fin, err
	}
	if fin.Audit, err = auditAtEnd(ctx, c, dir, s, b, last); err != nil {
		return fin, err
	}
	return fin, w.Summarize(fin)
}

// runSpec is what rundir.Create needs of a run of c: config.toml's text
// (header, then c as TOML), the manifest and the run's shape.
func runSpec(c config.Config, header, hash, randomness string, progress rundir.Progress) (rundir.Spec, error) {
	var text bytes.Buffer
	text.WriteString(header)
	if err := toml.NewEncoder(&text).Encode(c); err != nil {
		return rundir.Spec{}, err
	}
	man := rundir.NewManifest(c.Name, c.Seed, randomness)
	man.ConfigHash = hash
	f, err := FRecordOf(c)
	if err != nil {
		return rundir.Spec{}, err
	}
	if f != nil {
		if man.F, err = json.Marshal(f); err != nil {
			return rundir.Spec{}, err
		}
	}
	if man.Evaluation, err = json.Marshal(EvalRecordOf(c)); err != nil {
		return rundir.Spec{}, err
	}
	return rundir.Spec{Config: text.Bytes(), Manifest: man, Rounds: c.Rounds, FinalRounds: c.FinalRounds,
		Edges: c.Run.Edges, Progress: progress}, nil
}

// ConfigHash is the SHA-256 of c's resolved TOML, the sweep, the
// worst-case search and the run section (workers, wire round trip: they
// never change results) left out:
// what a run directory records to know which config it holds.
func ConfigHash(c config.Config) (string, error) {
	c.Sweep, c.Run, c.WorstCase = config.Sweep{}, config.Run{}, nil
	var b bytes.Buffer
	if err := toml.NewEncoder(&b).Encode(c); err != nil {
		return "", err
	}
	sum := sha256.Sum256(b.Bytes())
	return hex.EncodeToString(sum[:]), nil
}

// CreateRunDir creates a run directory for records another driver
// produces (the cluster's monitor): c and the manifest, its Randomness set
// to randomness (how the nodes drew their private streams); the records
// follow through Round and Timing, and Close finishes it.
func CreateRunDir(c config.Config, dir, randomness string, progress rundir.Progress) (*rundir.Writer, error) {
	hash, err := ConfigHash(c)
	if err != nil {
		return nil, err
	}
	spec, err := runSpec(c, "", hash, randomness, progress)
	if err != nil {
		return nil, err
	}
	return rundir.Create(dir, spec)
}
