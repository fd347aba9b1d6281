package rundir

import (
	"errors"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/trellis-fl/trellis/metrics"
)

// Progress is told after every round, with the round's aggregates (its
// Nodes are not kept) and the run's number of rounds.
type Progress func(r *metrics.Round, rounds int)

// Spec is what Create needs to know of a run.
type Spec struct {
	// Config is the text of config.toml: the config as resolved.
	Config []byte
	// Manifest is the run's manifest (NewManifest, with its ConfigHash
	// and F set); when resuming, its start and resumption times are
	// taken from the manifest on file.
	Manifest Manifest
	// Rounds is the run's number of rounds (Progress's total);
	// FinalRounds how many of the last evaluated rounds the final
	// metrics average.
	Rounds, FinalRounds int
	// Edges writes edges.jsonl (run.edges).
	Edges bool
	// Steps writes steps.jsonl (an asynchronous run: Writer.Step).
	Steps bool
	// Resume is the number of complete rounds on file (Previous) that the
	// run replays: their records are compared with the files instead of
	// written; 0 starts afresh.
	Resume int
	// Progress, when set, is told after every round (replayed ones
	// included).
	Progress Progress
}

// Writer writes a run's records into its directory: per-node metrics and
// round aggregates as each round arrives, timings as the driver reports
// them (from its own goroutine, hence the lock), the edges when asked;
// it keeps the evaluated rounds' aggregates for the final metrics. Every
// driver writes through it (the simulator's RunToDir, the cluster's
// monitor), so every report tool reads a deployed run as a simulated one.
type Writer struct {
	dir                      string
	spec                     Spec
	man                      Manifest
	perNode, rounds, timings *lines
	edges                    *edgeWriter // nil without Spec.Edges
	steps                    *stepWriter // nil without Spec.Steps
	mu                       sync.Mutex
	timingErr                error
	evaluated                []*metrics.Round
	old                      *replayed // the rounds on file, for Spec.Resume
	firstDiverged            int
	lastDiverged             int
}

// Create creates dir (if needed), writes its config and manifest, and
// opens its record files; the records follow through Round and Timing,
// and Close (or End and Summarize) finishes the run.
func Create(dir string, s Spec) (*Writer, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	if err := WriteAtomic(filepath.Join(dir, ConfigFile), s.Config); err != nil {
		return nil, err
	}
	w := &Writer{dir: dir, spec: s, man: s.Manifest, firstDiverged: -1}
	if s.Resume > 0 {
		if old, err := ReadManifest(dir); err == nil {
			w.man.Start, w.man.Resumed = old.Start, append(old.Resumed, time.Now().UTC())
		}
	}
	if err := WriteManifest(dir, w.man); err != nil {
		return nil, err
	}
	var err error
	if s.Resume > 0 {
		if w.old, err = readReplay(dir, s.Resume); err != nil {
			return nil, err
		}
	}
	open := func(name string) (*lines, error) {
		if s.Resume > 0 {
			return appendLines(filepath.Join(dir, name), w.old.keep[name])
		}
		return newLines(filepath.Join(dir, name))
	}
	if w.perNode, err = open(MetricsFile); err != nil {
		return nil, err
	}
	if w.rounds, err = open(RoundsFile); err != nil {
		w.perNode.close()
		return nil, err
	}
	if w.timings, err = open(TimingsFile); err != nil {
		w.perNode.close()
		w.rounds.close()
		return nil, err
	}
	if s.Edges {
		if w.edges, err = newEdgeWriter(filepath.Join(dir, EdgesFile), s.Resume); err != nil {
			w.closeFiles()
			return nil, err
		}
	}
	if s.Steps {
		if w.steps, err = newStepWriter(dir, s.Resume > 0); err != nil {
			w.closeFiles()
			return nil, err
		}
	}
	return w, nil
}

// Timing records one round's wall-clock timing (safe to call from
// another goroutine than Round's).
func (w *Writer) Timing(t metrics.Timing) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if t.Round < w.spec.Resume {
		return // on file already
	}
	if err := w.timings.write(t); err != nil && w.timingErr == nil {
		w.timingErr = err
	}
}

// Round implements metrics.Sink: one round's record, rounds in order.
func (w *Writer) Round(r *metrics.Round) error {
	agg := *r
	agg.Nodes, agg.Live = nil, nil
	if r.Round < w.spec.Resume {
		if err := w.old.check(r, &agg); err != nil {
			return err
		}
	} else if err := w.write(r, &agg); err != nil {
		return err
	}
	if w.edges != nil {
		if err := w.edges.Round(r); err != nil {
			return err
		}
	}
	if r.Evaluated {
		w.evaluated = append(w.evaluated, &agg)
	}
	if r.Diverged > 0 && w.firstDiverged < 0 {
		w.firstDiverged = r.Round
	}
	w.lastDiverged = r.Diverged
	w.man.Rounds = r.Round + 1
	if w.spec.Progress != nil {
		w.spec.Progress(&agg, w.spec.Rounds)
	}
	return nil
}

// write appends round r's node lines and aggregate line agg, and flushes
// every record file.
func (w *Writer) write(r, agg *metrics.Round) error {
	for _, n := range r.Nodes {
		if err := w.perNode.write(NodeLine{r.Round, n}); err != nil {
			return err
		}
	}
	if err := w.rounds.write(agg); err != nil {
		return err
	}
	if err := w.perNode.flush(); err != nil {
		return err
	}
	if err := w.rounds.flush(); err != nil {
		return err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.timings.flush(); err != nil {
		return err
	}
	return w.timingErr
}

func (w *Writer) closeFiles() {
	w.perNode.close()
	w.rounds.close()
	w.mu.Lock()
	w.timings.close()
	w.mu.Unlock()
	if w.steps != nil {
		w.steps.out.close()
	}
}

// End closes the record files and writes the manifest's end; it returns
// the final metrics over the rounds received, and runErr joined with any
// error of its own. The summary is not written (Summarize).
func (w *Writer) End(runErr error) (Final, error) {
	w.closeFiles()
	if w.edges != nil {
		runErr = errors.Join(runErr, w.edges.Close())
	}
	w.man.End = time.Now().UTC()
	if runErr == nil {
		var err error
		w.man.Records, err = recordDigests(w.dir)
		runErr = err
	}
	runErr = errors.Join(runErr, WriteManifest(w.dir, w.man))
	fin := finalOf(w.evaluated, w.spec.FinalRounds, w.man.Rounds)
	fin.DivergedRound, fin.Diverged = w.firstDiverged, w.lastDiverged
	return fin, runErr
}

// Summarize writes the run's summary.csv, its one row fin: what marks the
// run finished.
func (w *Writer) Summarize(fin Final) error {
	return WriteSummary(w.dir, nil, []SummaryRow{{Name: w.man.Name, Seed: w.man.Seed, Final: fin}})
}

// Close ends the run (End) and, unless runErr is set (an interrupted or
// failed run), writes the summary.
func (w *Writer) Close(runErr error) (Final, error) {
	fin, err := w.End(runErr)
	if err != nil {
		return fin, err
	}
	return fin, w.Summarize(fin)
}
