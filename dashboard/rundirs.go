package dashboard

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/trellis-fl/trellis/config"
	"github.com/trellis-fl/trellis/metrics"
	"github.com/trellis-fl/trellis/report"
	"github.com/trellis-fl/trellis/rundir"
)

// runDir is one run directory found under a root.
type runDir struct {
	path string // as found
	rel  string // relative to the root ("" for the root itself)
	c    config.Config
}

// findRuns lists the run directories under root (those holding a
// config.toml and a rounds.jsonl or a summary.csv), in path order.
func findRuns(root string) ([]runDir, error) {
	var out []runDir
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		if !rundir.Has(p, rundir.ConfigFile) || !rundir.Has(p, rundir.RoundsFile) && !rundir.Has(p, rundir.SummaryFile) {
			return nil
		}
		c, err := loadConfig(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if rel == "." {
			rel = ""
		}
		out = append(out, runDir{path: p, rel: rel, c: c})
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no run directories (directories with %s and %s)", root, rundir.ConfigFile, rundir.RoundsFile)
	}
	return out, nil
}

// accuracyOf is the accuracy a run's curve in the sweep's comparison
// shows, as the report's plots choose it (report.AccuracyCurve).
func accuracyOf(c config.Config) string {
	return report.AccuracyCurve(c.Strategy.Name, c.Evaluation.GlobalTest != 0)
}

// loadConfig reads the config of the run in dir.
func loadConfig(dir string) (config.Config, error) {
	text, err := rundir.ReadConfig(dir)
	if err != nil {
		return config.Config{}, err
	}
	return config.Parse(text, filepath.Join(dir, rundir.ConfigFile))
}

// sweptParams returns, per run, the config keys whose values differ
// between the runs (the seed, the name, the label and the run section
// left out).
func sweptParams(cs []config.Config) []map[string]string {
	flat := make([]map[string]string, len(cs))
	for i, c := range cs {
		flat[i] = config.Flatten(c)
	}
	out := make([]map[string]string, len(cs))
	for i := range out {
		out[i] = map[string]string{}
	}
	if len(cs) < 2 {
		return out
	}
	for k, v := range flat[0] {
		if k == "seed" || k == "name" || k == "label" || strings.HasPrefix(k, "run.") { // the label has its own column
			continue
		}
		differs := false
		for _, f := range flat[1:] {
			if f[k] != v {
				differs = true
				break
			}
		}
		if differs {
			for i, f := range flat {
				out[i][k] = f[k]
			}
		}
	}
	return out
}

// LoadDirs adds every run under each root (a run directory, a sweep, or
// the demo's directory of runs) to the page with its rounds as on file,
// and returns how many runs it added. A run whose files are damaged
// (rundir.Verify) is shown with the damage as its error, which Warnings
// also lists.
func (s *Server) LoadDirs(roots ...string) (int, error) {
	n := 0
	for _, root := range roots {
		rds, err := findRuns(root)
		if err != nil {
			return n, err
		}
		for i := range rds {
			if len(roots) > 1 || rds[i].rel == "" {
				rds[i].rel = filepath.Join(filepath.Base(filepath.Clean(root)), rds[i].rel)
			}
		}
		k, err := s.addRuns(rds)
		n += k
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// addRuns adds runs to the page, each named by its rel, with the keys
// that differ among them as its parameters.
func (s *Server) addRuns(rds []runDir) (int, error) {
	cs := make([]config.Config, len(rds))
	for i, rd := range rds {
		cs[i] = rd.c
	}
	params := sweptParams(cs)
	for i, rd := range rds {
		info := describe(rd.c, rd.path)
		info.Dir, info.Params = rd.rel, params[i]
		// A record file cut short or edited is shown as on file, with
		// the damage said on the page and to the caller (Warnings):
		// the readers would stop quietly at its first bad line.
		if err := rundir.Verify(rd.path, rd.c.Nodes, rd.c.FinalRounds); err != nil {
			info.Error = err.Error()
			s.mu.Lock()
			s.warnings = append(s.warnings, err.Error())
			s.mu.Unlock()
		}
		run := s.AddRun(info)
		if err := s.loadRounds(run, rd.path); err != nil {
			return i, err
		}
	}
	return len(rds), nil
}

// WriteReportOf writes the self-contained report of chosen run
// directories (dirs, relative to root, each shown by that path) to
// root/report.html, titled title: a worst-case search draws its
// confirmed runs, not its hundreds of short ones.
func WriteReportOf(root, title string, dirs []string) (string, error) {
	s := New(title)
	rds := make([]runDir, len(dirs))
	for i, d := range dirs {
		p := filepath.Join(root, d)
		c, err := loadConfig(p)
		if err != nil {
			return "", err
		}
		rds[i] = runDir{path: p, rel: d, c: c}
	}
	if _, err := s.addRuns(rds); err != nil {
		return "", err
	}
	path := filepath.Join(root, ReportFile)
	return path, s.writePage(path)
}

// describe is a run's RunInfo from its config and what its directory
// holds (status, final metrics, config and manifest text).
func describe(c config.Config, path string) RunInfo {
	info := RunInfo{Label: c.Label(), Seed: c.Seed, Nodes: c.Nodes, Rounds: c.Rounds, Strategy: c.Strategy.Name, Accuracy: accuracyOf(c), Global: c.Evaluation.GlobalTest != 0, Status: Pending}
	if b, err := rundir.ReadConfig(path); err == nil {
		info.Config = string(b)
	}
	if b, err := rundir.ReadManifestText(path); err == nil {
		info.Manifest = string(b)
	}
	if man, err := rundir.ReadManifest(path); err == nil {
		info.Async = man.Async
	}
	info.Command = fmt.Sprintf("trellis run %s -o %s   # keeps a finished run; add --force to redo it",
		shellQuote(filepath.Join(path, rundir.ConfigFile)), shellQuote(path))
	refresh(&info, path)
	return info
}

// refresh sets a run's status and final metrics from its directory.
func refresh(info *RunInfo, path string) {
	if rows, err := rundir.ReadSummary(path); err == nil && len(rows) == 1 {
		info.Status = Finished
		info.Final = map[string]num{}
		for k, v := range rows[0] {
			if f, err := strconv.ParseFloat(v, 64); err == nil && k != "seed" {
				info.Final[k] = num(f)
			}
		}
		return
	}
	if rundir.Has(path, rundir.RoundsFile) {
		info.Status = Interrupted
	}
}

func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./=+,:@", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// loadRounds adds a run directory's rounds (rounds.jsonl with the node
// records of metrics.jsonl) as frames of run. A torn last line (an
// interrupted run) ends the file.
func (s *Server) loadRounds(run int, path string) error {
	rounds, err := rundir.ReadRounds(path)
	if err != nil {
		return err
	}
	nodes, err := rundir.ReadNodes(path)
	if err != nil {
		return err
	}
	// The round's graph from the config (the weights are not on file); a
	// graph the config cannot rebuild here (a trace file elsewhere) leaves
	// the rounds without edges.
	var in func(r int) func(int) []int
	if c, err := loadConfig(path); err == nil {
		if g, err := c.Graph(); err == nil && g.N() == c.Nodes {
			in = func(r int) func(int) []int {
				gr := g.At(r)
				return func(i int) []int {
					if i < 0 || i >= gr.N() {
						return nil
					}
					return gr.In(i)
				}
			}
		}
	}
	byRound := map[int][]metrics.NodeRound{}
	for _, n := range nodes {
		byRound[n.Round] = append(byRound[n.Round], n.NodeRound)
	}
	edges, err := rundir.ReadEdges(path)
	if err != nil {
		return err
	}
	weights := map[int][][3]float64{}
	for _, e := range edges {
		weights[e.Round] = e.Edges
	}
	// An asynchronous run's windows on its time axes.
	var async *asyncFrames
	if man, err := rundir.ReadManifest(path); err == nil && man.Async != nil {
		steps, err := rundir.ReadSteps(path)
		if err != nil {
			return err
		}
		n := 0
		if c, err := loadConfig(path); err == nil {
			n = c.Nodes
		}
		async = newAsyncFrames(man.Async.Window, n, steps)
	}
	for _, r := range rounds {
		r.Nodes = byRound[r.Round]
		slices.SortFunc(r.Nodes, func(a, b metrics.NodeRound) int { return a.Node - b.Node })
		var inOf func(int) []int
		if in != nil {
			inOf = in(r.Round)
		}
		if w, ok := weights[r.Round]; ok {
			r.Live = liveOf(len(r.Nodes), w, inOf)
		}
		f := newFrame(run, r, inOf)
		if async != nil {
			async.annotate(f)
		}
		if err := s.hub.add(f); err != nil {
			return fmt.Errorf("%s: round %d: %w", path, r.Round, err)
		}
	}
	return nil
}

// liveOf rebuilds a finished round's metrics.Live from its edges file
// line: the weights as written, over the round's graph from the config
// (in; nil: the senders the file lists), so that a sender given no weight
// is drawn as an edge of weight 0. The rejections by reason are not on
// file.
func liveOf(n int, edges [][3]float64, in func(int) []int) *metrics.Live {
	l := &metrics.Live{In: make([][]int, n), Weights: make([]map[int]float64, n), Rejections: make([]map[string]int, n)}
	for i := range n {
		l.Weights[i] = map[int]float64{}
		if in != nil {
			l.In[i] = in(i)
		}
	}
	for _, e := range edges {
		recv, send := int(e[0]), int(e[1])
		if recv < 0 || recv >= n || float64(recv) != e[0] || float64(send) != e[1] {
			continue // not a node of this round: a damaged line
		}
		l.Weights[recv][send] = e[2]
		if in == nil && send != recv {
			l.In[recv] = append(l.In[recv], send)
		}
	}
	return l
}

// ReportFile is the self-contained report's name, next to results.md.
const ReportFile = "report.html"

// WriteReport writes dir/report.html: the dashboard's page with every run
// under dir inline (charts, graph, per-node table, the sweep's runs, each
// run's config, manifest and command), readable without a server or a
// network. It returns the file's path.
func WriteReport(dir string) (string, error) {
	s := New("trellis report: " + filepath.Base(filepath.Clean(dir)))
	if _, err := s.LoadDirs(dir); err != nil {
		return "", err
	}
	return filepath.Join(dir, ReportFile), s.writePage(filepath.Join(dir, ReportFile))
}

func (s *Server) writePage(path string) error {
	tmpl, err := assets.ReadFile("assets/index.html")
	if err != nil {
		return err
	}
	page := pageHTML(tmpl, s.Title, true, s.hub.all())
	return rundir.WriteAtomicFunc(path, func(w io.Writer) error { _, err := w.Write(page); return err })
}
