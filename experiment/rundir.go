package experiment

import (
	"bufio"
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
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
)

// Files of a run directory.
const (
	ConfigFile   = "config.toml"   // the config as resolved (defaults filled in)
	ManifestFile = "manifest.json" // seed, versions, machine, start and end
	MetricsFile  = "metrics.jsonl" // one line per round per node, reproducible
	RoundsFile   = "rounds.jsonl"  // one line per round: the aggregates over nodes
	TimingsFile  = "timings.jsonl" // wall-clock seconds per round, never reproducible
	SummaryFile  = "summary.csv"   // the final metrics; written last, so it marks a finished run
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
	HonestLocalAcc  float64
	HonestGlobalAcc float64
	AllAcc          float64
	HonestLoss      float64
	DeltaMax        float64
	MeanByzWeight   float64
	Rounds          int // rounds finished
	// Privacy is the last round's ε over honest nodes (nil without DP):
	// ε only grows, so the final value is the last one.
	Privacy *metrics.PrivacyRound
}

var finalColumns = []string{"final_honest_local_acc", "final_honest_global_acc", "final_all_acc",
	"final_honest_loss", "final_delta_max", "final_mean_byz_weight", "rounds"}

func (f Final) values() []float64 {
	return []float64{f.HonestLocalAcc, f.HonestGlobalAcc, f.AllAcc, f.HonestLoss, f.DeltaMax, f.MeanByzWeight, float64(f.Rounds)}
}

// Progress is told after every round, with the round's aggregates (its
// Nodes are not kept).
type Progress func(r *metrics.Round, rounds int)

// RunToDir runs one config into dir (created if needed): config, manifest,
// per-node metrics, round aggregates and timings as rounds finish, and the
// summary at the end. Cancelling ctx stops after the current round; the
// files then hold every finished round completely, and no summary.
func RunToDir(ctx context.Context, c Config, dir string, progress Progress) (Final, error) {
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
	if err := toml.NewEncoder(&cfgText).Encode(c); err != nil {
		return Final{}, err
	}
	if err := writeAtomic(filepath.Join(dir, ConfigFile), cfgText.Bytes()); err != nil {
		return Final{}, err
	}
	man := newManifest(c)
	if err := writeManifest(dir, man); err != nil {
		return Final{}, err
	}
	// The streams are rewritten from scratch: a run restarts from round 0.
	sink, err := newRunSink(dir, c, &man, progress)
	if err != nil {
		return Final{}, err
	}
	defer sink.close()
	s.Timings = sink.timing
	// The run directory takes every record, in order, on a goroutine of its
	// own: the next round starts while the last one is written.
	out := metrics.NewFanout()
	out.Add(sink, metrics.Every, 0)
	runErr := s.Run(ctx, out)
	if err := out.Close(); err != nil && runErr == nil {
		runErr = err
	}
	man.End = time.Now().UTC()
	if err := writeManifest(dir, man); err != nil && runErr == nil {
		runErr = err
	}
	fin := finalOf(sink.evaluated, c.FinalRounds, man.Rounds)
	if runErr != nil {
		return fin, runErr
	}
	return fin, writeSummary(filepath.Join(dir, SummaryFile), nil, []summaryRow{{c: c, f: fin}})
}

// runSink writes a run's records into its directory: per-node metrics and
// round aggregates as each round arrives, timings as the simulator reports
// them (from its own goroutine, hence the lock), and it keeps the
// evaluated rounds' aggregates for the final metrics.
type runSink struct {
	c                        Config
	man                      *Manifest
	progress                 Progress
	perNode, rounds, timings *lines
	mu                       sync.Mutex
	timingErr                error
	evaluated                []*metrics.Round
}

func newRunSink(dir string, c Config, man *Manifest, progress Progress) (*runSink, error) {
	s := &runSink{c: c, man: man, progress: progress}
	var err error
	if s.perNode, err = newLines(filepath.Join(dir, MetricsFile)); err != nil {
		return nil, err
	}
	if s.rounds, err = newLines(filepath.Join(dir, RoundsFile)); err != nil {
		s.perNode.close()
		return nil, err
	}
	if s.timings, err = newLines(filepath.Join(dir, TimingsFile)); err != nil {
		s.perNode.close()
		s.rounds.close()
		return nil, err
	}
	return s, nil
}

func (s *runSink) timing(t metrics.Timing) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.timings.write(t); err != nil && s.timingErr == nil {
		s.timingErr = err
	}
}

// Round implements metrics.Sink.
func (s *runSink) Round(r *metrics.Round) error {
	for _, n := range r.Nodes {
		if err := s.perNode.write(struct {
			Round int `json:"round"`
			metrics.NodeRound
		}{r.Round, n}); err != nil {
			return err
		}
	}
	agg := *r
	agg.Nodes = nil
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
	if r.Evaluated {
		s.evaluated = append(s.evaluated, &agg)
	}
	s.man.Rounds = r.Round + 1
	if s.progress != nil {
		s.progress(&agg, s.c.Rounds)
	}
	return nil
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
	f := Final{Rounds: rounds}
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
	head := append(append([]string{"name", "seed"}, keys...), finalColumns...)
	if private {
		head = append(head, privacyColumns...)
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
// the privacy columns are there only for runs with DP.
func FinalColumns() []string { return append(slices.Clone(finalColumns), privacyColumns...) }
