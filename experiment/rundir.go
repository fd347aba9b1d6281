package experiment

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/csv"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/trellis-fl/trellis/internal/seed"
	"github.com/trellis-fl/trellis/metrics"
	"github.com/trellis-fl/trellis/sim"
)

// Files of a run directory.
const (
	ConfigFile   = "config.toml"   // the config as resolved (defaults filled in)
	ManifestFile = "manifest.json" // seed, versions, machine, start and end
	MetricsFile  = "metrics.jsonl" // one line per round per node, reproducible
	RoundsFile   = "rounds.jsonl"  // one line per round: the aggregates over nodes
	TimingsFile  = "timings.jsonl" // wall-clock seconds per round, never reproducible
	SummaryFile  = "summary.csv"   // the final metrics; written last, so it marks a finished run
	EdgesFile    = "edges.jsonl"   // per round, the weight each receiver gave each sender (run.edges)
)

// Manifest records what a run needs to be re-run exactly.
type Manifest struct {
	Name       string    `json:"name"`
	Seed       uint64    `json:"seed"`
	Module     string    `json:"module"`
	Version    string    `json:"version"`
	Revision   string    `json:"vcs_revision,omitempty"`
	GoVersion  string    `json:"go_version"`
	GOOS       string    `json:"goos"`
	GOARCH     string    `json:"goarch"`
	CPU        string    `json:"cpu"`
	GOMAXPROCS int       `json:"gomaxprocs"`
	Start      time.Time `json:"start"`
	End        time.Time `json:"end,omitzero"`
	Rounds     int       `json:"rounds_finished"`
	// Randomness says where the nodes' random streams came from: "seeded"
	// (from the seed: reproducible, so DP noise, masks and keys are not
	// private), "crypto" or "mixed" (seed.Describe).
	Randomness string `json:"randomness"`
	// ConfigHash is ConfigHash of the run's config: a rerun into the
	// directory with another config is refused.
	ConfigHash string `json:"config_sha256"`
	// Resumed lists when the run was resumed after an interruption.
	Resumed []time.Time `json:"resumed,omitempty"`
	// F is strategy.f as resolved per node (robust rules with an f).
	F *FRecord `json:"f,omitempty"`
}

func newManifest(c Config) Manifest {
	m := Manifest{Name: c.Name, Seed: c.Seed, GoVersion: runtime.Version(), GOOS: runtime.GOOS,
		GOARCH: runtime.GOARCH, CPU: cpuName(), GOMAXPROCS: runtime.GOMAXPROCS(0), Start: time.Now().UTC(),
		Randomness: seed.Describe(seed.Seeded(c.Seed)) + " (simulation: not private)"}
	if bi, ok := debug.ReadBuildInfo(); ok {
		m.Module, m.Version = bi.Main.Path, bi.Main.Version
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" {
				m.Revision = s.Value
			}
		}
	}
	return m
}

func cpuName() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				return strings.TrimSpace(v)
			}
		}
	}
	return runtime.GOARCH
}

// writeAtomic writes a file through a temporary file and a rename, so a
// reader (or a resumed sweep) never sees half of it.
func writeAtomic(path string, b []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// Final is a run's final metrics: each the mean over the last
// FinalRounds evaluated rounds (spec/experiments.md, "final_*").
type Final struct {
	HonestLocalAcc  float64 `json:"final_honest_local_acc"`
	HonestGlobalAcc float64 `json:"final_honest_global_acc"`
	AllAcc          float64 `json:"final_all_acc"`
	HonestLoss      float64 `json:"final_honest_loss"`
	DeltaMax        float64 `json:"final_delta_max"`
	MeanByzWeight   float64 `json:"final_mean_byz_weight"`
	Rounds          int     `json:"rounds"` // rounds finished
	// DivergedRound is the first round at whose end an honest node's
	// model was diverged (-1: none); Diverged how many honest nodes were
	// diverged in the last round.
	DivergedRound int `json:"diverged_round"`
	Diverged      int `json:"diverged_nodes"`
	// Privacy is the last round's ε over honest nodes (nil without DP):
	// ε only grows, so the final value is the last one.
	Privacy *metrics.PrivacyRound `json:"privacy,omitempty"`
	// Audit is the [privacy.audit] of the final models (nil without).
	Audit *AuditSummary `json:"audit,omitempty"`
}

var finalColumns = []string{"final_honest_local_acc", "final_honest_global_acc", "final_all_acc",
	"final_honest_loss", "final_delta_max", "final_mean_byz_weight", "rounds", "diverged_round", "diverged_nodes"}

func (f Final) values() []float64 {
	return []float64{f.HonestLocalAcc, f.HonestGlobalAcc, f.AllAcc, f.HonestLoss, f.DeltaMax, f.MeanByzWeight, float64(f.Rounds),
		float64(f.DivergedRound), float64(f.Diverged)}
}

// Progress is told after every round, with the round's aggregates (its
// Nodes are not kept).
type Progress func(r *metrics.Round, rounds int)

// RunOptions are RunToDirWith's options.
type RunOptions struct {
	// Progress is told after every round (replayed ones included).
	Progress Progress
	// Force redoes the run from round 0 when its directory holds a run of
	// another config, or a finished run, instead of refusing or keeping it.
	Force bool
	// Live, when set, also gets the run's records as a metrics.Latest sink
	// (a live viewer: it may skip records and never makes a round wait).
	Live metrics.Sink
}

// ErrOtherConfig is wrapped by the error of a run directory that holds a
// run of another config (RunOptions.Force redoes it).
var ErrOtherConfig = errors.New("the directory holds a run of another config")

// RunToDir is RunToDirWith without force.
func RunToDir(ctx context.Context, c Config, dir string, progress Progress) (Final, error) {
	return RunToDirWith(ctx, c, dir, RunOptions{Progress: progress})
}

// RunToDirWith runs one config into dir (created if needed): config,
// manifest, per-node metrics, round aggregates and timings as rounds
// finish, and the summary at the end. Cancelling ctx stops after the
// current round; the files then hold every finished round completely, and
// no summary.
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
func RunToDirWith(ctx context.Context, c Config, dir string, o RunOptions) (Final, error) {
	hash, err := ConfigHash(c)
	if err != nil {
		return Final{}, err
	}
	done, err := previousRounds(dir, hash, c, o.Force)
	if err != nil {
		return Final{}, err
	}
	if done < 0 {
		fin, ok := readFinal(dir)
		if ok {
			return fin, nil
		}
		done = 0
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return Final{}, err
	}
	tt, err := c.LoadData()
	if err != nil {
		return Final{}, err
	}
	s, err := c.Setup(tt)
	if err != nil {
		return Final{}, err
	}
	var cfgText bytes.Buffer
	cfgText.WriteString(resolvedHeader)
	if err := toml.NewEncoder(&cfgText).Encode(c); err != nil {
		return Final{}, err
	}
	if err := writeAtomic(filepath.Join(dir, ConfigFile), cfgText.Bytes()); err != nil {
		return Final{}, err
	}
	man := newManifest(c)
	man.ConfigHash = hash
	if man.F, err = c.FRecord(); err != nil {
		return Final{}, err
	}
	if done > 0 {
		if old, err := readManifest(dir); err == nil {
			man.Start, man.Resumed = old.Start, append(old.Resumed, time.Now().UTC())
		}
	}
	if err := writeManifest(dir, man); err != nil {
		return Final{}, err
	}
	sink, err := newRunSink(dir, c, &man, o.Progress, done)
	if err != nil {
		return Final{}, err
	}
	defer sink.close()
	s.Timings = sink.timing
	// The run directory takes every record, in order, on a goroutine of its
	// own: the next round starts while the last one is written.
	out := metrics.NewFanout()
	out.Add(sink, metrics.Every, 0)
	edges, err := openEdges(c, dir, done)
	if err != nil {
		return Final{}, err
	}
	if edges != nil {
		out.Add(edges, metrics.Every, 0)
	}
	if o.Live != nil {
		out.Add(o.Live, metrics.Latest, 0)
	}
	// The run keeps its nodes for [privacy.audit] (auditAtEnd) and its
	// last round for their ε.
	var last *metrics.Round
	if c.Privacy.Audit != nil {
		out.Add(metrics.SinkFunc(func(r *metrics.Round) error { last = r; return nil }), metrics.Every, 0)
	}
	b, runErr := s.Build()
	if runErr == nil {
		runErr = sim.Run(ctx, b.Config, b.Nodes, out)
	}
	if err := out.Close(); err != nil && runErr == nil {
		runErr = err
	}
	if edges != nil {
		if err := edges.Close(); err != nil && runErr == nil {
			runErr = err
		}
	}
	man.End = time.Now().UTC()
	if err := writeManifest(dir, man); err != nil && runErr == nil {
		runErr = err
	}
	fin := finalOf(sink.evaluated, c.FinalRounds, man.Rounds)
	fin.DivergedRound, fin.Diverged = sink.firstDiverged, sink.lastDiverged
	if runErr != nil {
		return fin, runErr
	}
	if fin.Audit, err = auditAtEnd(ctx, c, dir, s, b, last); err != nil {
		return fin, err
	}
	return fin, writeSummary(filepath.Join(dir, SummaryFile), nil, []summaryRow{{c: c, f: fin}})
}

// ConfigHash is the SHA-256 of c's resolved TOML, the sweep and the run
// section (workers, wire round trip: they never change results) left out:
// what a run directory records to know which config it holds.
func ConfigHash(c Config) (string, error) {
	c.Sweep, c.Run = SweepConfig{}, RunConfig{}
	var b bytes.Buffer
	if err := toml.NewEncoder(&b).Encode(c); err != nil {
		return "", err
	}
	sum := sha256.Sum256(b.Bytes())
	return hex.EncodeToString(sum[:]), nil
}

// runFiles are the files a run writes (removed when a run is redone).
var runFiles = []string{ConfigFile, ManifestFile, MetricsFile, RoundsFile, TimingsFile, SummaryFile, EdgesFile}

// previousRounds says what dir holds for a run of config hash: -1 a
// finished run, else the number of complete rounds on file to resume from
// (0: none). Another config's run is an error, or with force removed.
func previousRounds(dir, hash string, c Config, force bool) (int, error) {
	man, err := readManifest(dir)
	if errors.Is(err, os.ErrNotExist) {
		if _, err := os.Stat(filepath.Join(dir, MetricsFile)); err == nil && !force {
			return 0, fmt.Errorf("%s: %w (it has run files but no %s); use another output directory, or --force to redo it", dir, ErrOtherConfig, ManifestFile)
		}
		return 0, removeRunFiles(dir)
	}
	if err != nil {
		if !force {
			return 0, fmt.Errorf("%s: %w; use another output directory, or --force to redo the run", dir, err)
		}
		return 0, removeRunFiles(dir)
	}
	if man.ConfigHash != hash {
		if !force && man.ConfigHash == "" {
			return 0, fmt.Errorf("%s: %w (its %s has no config_sha256: written by an older trellis); use another output directory, or --force to redo the run", dir, ErrOtherConfig, ManifestFile)
		}
		if !force {
			return 0, fmt.Errorf("%s: %w (config_sha256 %.12s…, this config's %.12s…); use another output directory, or --force to redo the run with this config",
				dir, ErrOtherConfig, man.ConfigHash, hash)
		}
		return 0, removeRunFiles(dir)
	}
	if force {
		return 0, removeRunFiles(dir)
	}
	if _, ok := readFinal(dir); ok {
		return -1, nil
	}
	return completeRounds(dir, c.Rounds)
}

func removeRunFiles(dir string) error {
	for _, f := range runFiles {
		if err := os.Remove(filepath.Join(dir, f)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	return nil
}

// completeRounds counts the rounds whose aggregate line in rounds.jsonl
// is complete (the sink writes a round's node lines before its aggregate
// line, and flushes both before the next round).
func completeRounds(dir string, rounds int) (int, error) {
	b, err := os.ReadFile(filepath.Join(dir, RoundsFile))
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	n := bytes.Count(b, []byte{'\n'})
	return min(n, rounds), nil
}

func readManifest(dir string) (Manifest, error) {
	var m Manifest
	b, err := os.ReadFile(filepath.Join(dir, ManifestFile))
	if err != nil {
		return m, err
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return m, fmt.Errorf("%s: %w", filepath.Join(dir, ManifestFile), err)
	}
	return m, nil
}

// runSink writes a run's records into its directory: per-node metrics and
// round aggregates as each round arrives, timings as the simulator reports
// them (from its own goroutine, hence the lock), and it keeps the
// evaluated rounds' aggregates for the final metrics. The first replay
// rounds (a resumed run) are compared with the files instead of written.
type runSink struct {
	c                        Config
	man                      *Manifest
	progress                 Progress
	perNode, rounds, timings *lines
	mu                       sync.Mutex
	timingErr                error
	evaluated                []*metrics.Round
	replay                   int
	old                      *replayed
	firstDiverged            int
	lastDiverged             int
}

func newRunSink(dir string, c Config, man *Manifest, progress Progress, replay int) (*runSink, error) {
	s := &runSink{c: c, man: man, progress: progress, replay: replay, firstDiverged: -1}
	var err error
	if replay > 0 {
		if s.old, err = readReplay(dir, replay); err != nil {
			return nil, err
		}
	}
	open := func(name string) (*lines, error) {
		if replay > 0 {
			return appendLines(filepath.Join(dir, name), s.old.keep[name])
		}
		return newLines(filepath.Join(dir, name))
	}
	if s.perNode, err = open(MetricsFile); err != nil {
		return nil, err
	}
	if s.rounds, err = open(RoundsFile); err != nil {
		s.perNode.close()
		return nil, err
	}
	if s.timings, err = open(TimingsFile); err != nil {
		s.perNode.close()
		s.rounds.close()
		return nil, err
	}
	return s, nil
}

func (s *runSink) timing(t metrics.Timing) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if t.Round < s.replay {
		return // on file already
	}
	if err := s.timings.write(t); err != nil && s.timingErr == nil {
		s.timingErr = err
	}
}

// Round implements metrics.Sink.
func (s *runSink) Round(r *metrics.Round) error {
	agg := *r
	agg.Nodes, agg.Live = nil, nil
	if r.Round < s.replay {
		if err := s.old.check(r, &agg); err != nil {
			return err
		}
	} else {
		for _, n := range r.Nodes {
			if err := s.perNode.write(nodeLine{r.Round, n}); err != nil {
				return err
			}
		}
		if err := s.rounds.write(&agg); err != nil {
			return err
		}
		if err := s.perNode.flush(); err != nil {
			return err
		}
		if err := s.rounds.flush(); err != nil {
			return err
		}
		s.mu.Lock()
		err := s.timings.flush()
		if s.timingErr != nil {
			err = s.timingErr
		}
		s.mu.Unlock()
		if err != nil {
			return err
		}
	}
	if r.Evaluated {
		s.evaluated = append(s.evaluated, &agg)
	}
	if r.Diverged > 0 && s.firstDiverged < 0 {
		s.firstDiverged = r.Round
	}
	s.lastDiverged = r.Diverged
	s.man.Rounds = r.Round + 1
	if s.progress != nil {
		s.progress(&agg, s.c.Rounds)
	}
	return nil
}

// nodeLine is one line of metrics.jsonl.
type nodeLine struct {
	Round int `json:"round"`
	metrics.NodeRound
}

func (s *runSink) close() {
	s.perNode.close()
	s.rounds.close()
	s.mu.Lock()
	s.timings.close()
	s.mu.Unlock()
}

func writeManifest(dir string, m Manifest) error {
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	return writeAtomic(filepath.Join(dir, ManifestFile), append(b, '\n'))
}

func finalOf(evaluated []*metrics.Round, k, rounds int) Final {
	f := Final{Rounds: rounds, DivergedRound: -1}
	if len(evaluated) == 0 {
		return f
	}
	f.Privacy = evaluated[len(evaluated)-1].Privacy
	last := evaluated[max(0, len(evaluated)-k):]
	n := float64(len(last))
	for _, r := range last {
		f.HonestLocalAcc += r.HonestLocalAcc / n
		f.HonestGlobalAcc += r.HonestGlobalAcc / n
		f.AllAcc += r.AllAcc / n
		f.HonestLoss += r.HonestLoss / n
		f.DeltaMax += r.DeltaMax / n
		f.MeanByzWeight += r.MeanByzWeight / n
	}
	return f
}

type summaryRow struct {
	params map[string]string
	c      Config
	f      Final
}

// writeSummary writes one CSV row per run: name, seed, the swept keys, the
// final metrics.
func writeSummary(path string, keys []string, rows []summaryRow) error {
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	private := slices.ContainsFunc(rows, func(r summaryRow) bool { return r.f.Privacy != nil })
	audited := slices.ContainsFunc(rows, func(r summaryRow) bool { return r.f.Audit != nil })
	head := append(append([]string{"name", "seed"}, keys...), finalColumns...)
	if private {
		head = append(head, privacyColumns...)
	}
	if audited {
		head = append(head, auditColumns...)
	}
	_ = w.Write(head)
	for _, r := range rows {
		rec := []string{r.c.Name, strconv.FormatUint(r.c.Seed, 10)}
		for _, k := range keys {
			rec = append(rec, r.params[k])
		}
		for _, v := range r.f.values() {
			rec = append(rec, strconv.FormatFloat(v, 'g', -1, 64))
		}
		if private {
			rec = append(rec, r.f.privacyValues()...)
		}
		if audited {
			rec = append(rec, r.f.Audit.values()...)
		}
		_ = w.Write(rec)
	}
	w.Flush()
	if err := w.Error(); err != nil {
		return err
	}
	return writeAtomic(path, buf.Bytes())
}

// lines writes JSON lines; each flush hands whole lines to the OS in one
// write, so an interrupted run leaves complete lines only.
type lines struct {
	f   *os.File
	buf *bufio.Writer
	enc *json.Encoder
}

func newLines(path string) (*lines, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	l := &lines{f: f, buf: bufio.NewWriterSize(f, 1<<20)}
	l.enc = json.NewEncoder(l.buf)
	return l, nil
}

func (l *lines) write(v any) error { return l.enc.Encode(v) }
func (l *lines) flush() error      { return l.buf.Flush() }
func (l *lines) close() {
	_ = l.buf.Flush()
	_ = l.f.Close()
}

// ReadSummary reads the rows of a run's or sweep's summary.csv back, each
// as column → value.
func ReadSummary(dir string) ([]map[string]string, error) {
	f, err := os.Open(filepath.Join(dir, SummaryFile))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, SummaryFile), err)
	}
	var out []map[string]string
	for _, r := range recs[1:] {
		m := map[string]string{}
		for i, k := range recs[0] {
			m[k] = r[i]
		}
		out = append(out, m)
	}
	return out, nil
}

// FinalColumns are the final metrics of summary.csv, in column order;
// the privacy columns are there only for runs with DP, the audit columns
// only for runs with [privacy.audit].
func FinalColumns() []string {
	return append(append(slices.Clone(finalColumns), privacyColumns...), auditColumns...)
}

// openEdges opens dir's edges file when c asks for one (run.edges), for a
// run whose first keep rounds are on file; nil otherwise.
func openEdges(c Config, dir string, keep int) (*metrics.EdgeWriter, error) {
	if !c.Run.Edges {
		return nil, nil
	}
	return metrics.NewEdgeWriter(filepath.Join(dir, EdgesFile), keep)
}

// RunDir is a run directory written from records another driver produces
// (the cluster's monitor): the same files RunToDir writes, in the same
// format, so every report tool reads a deployed run as a simulated one.
type RunDir struct {
	dir   string
	c     Config
	man   Manifest
	sink  *runSink
	edges *metrics.EdgeWriter // nil without run.edges
}

// CreateRunDir creates dir (if needed) and writes c and the manifest, its
// Randomness set to randomness (how the nodes drew their private streams);
// the records follow through Round and Timing, and Close finishes it.
func CreateRunDir(c Config, dir, randomness string, progress Progress) (*RunDir, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var cfgText bytes.Buffer
	if err := toml.NewEncoder(&cfgText).Encode(c); err != nil {
		return nil, err
	}
	if err := writeAtomic(filepath.Join(dir, ConfigFile), cfgText.Bytes()); err != nil {
		return nil, err
	}
	d := &RunDir{dir: dir, c: c, man: newManifest(c)}
	d.man.Randomness = randomness
	var err error
	if d.man.ConfigHash, err = ConfigHash(c); err != nil {
		return nil, err
	}
	if d.man.F, err = c.FRecord(); err != nil {
		return nil, err
	}
	if err := writeManifest(dir, d.man); err != nil {
		return nil, err
	}
	if d.sink, err = newRunSink(dir, c, &d.man, progress, 0); err != nil {
		return nil, err
	}
	if d.edges, err = openEdges(c, dir, 0); err != nil {
		d.sink.close()
		return nil, err
	}
	return d, nil
}

// Round implements metrics.Sink: one round's record, rounds in order.
func (d *RunDir) Round(r *metrics.Round) error {
	if err := d.sink.Round(r); err != nil {
		return err
	}
	if d.edges != nil {
		return d.edges.Round(r)
	}
	return nil
}

// Timing records one round's wall-clock timing.
func (d *RunDir) Timing(t metrics.Timing) { d.sink.timing(t) }

// Close ends the run: the manifest gets its end, and, unless runErr is
// set (an interrupted or failed run), the summary is written. It returns
// the final metrics over the rounds received.
func (d *RunDir) Close(runErr error) (Final, error) {
	d.sink.close()
	if d.edges != nil {
		runErr = errors.Join(runErr, d.edges.Close())
	}
	d.man.End = time.Now().UTC()
	err := writeManifest(d.dir, d.man)
	fin := finalOf(d.sink.evaluated, d.c.FinalRounds, d.man.Rounds)
	fin.DivergedRound, fin.Diverged = d.sink.firstDiverged, d.sink.lastDiverged
	if runErr != nil || err != nil {
		return fin, errors.Join(runErr, err)
	}
	return fin, writeSummary(filepath.Join(d.dir, SummaryFile), nil, []summaryRow{{c: d.c, f: fin}})
}
