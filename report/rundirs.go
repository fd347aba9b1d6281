package report

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/trellis-fl/trellis/config"
	"github.com/trellis-fl/trellis/rundir"
	"github.com/trellis-fl/trellis/strategy"
)

// Results reads every finished run under dir (a run directory, a sweep, or
// the demo's directory of runs), writes results.md (final metrics, mean ±
// std over seeds) and the plots — honest accuracy vs round per strategy,
// one figure per combination of the other swept values, and, when one
// numeric key was swept besides the strategy, the final accuracy vs that
// key — as PNG and SVG, and returns the Markdown table. The accuracy
// plotted follows each run's strategy (AccuracyCurve).
func Results(dir string) (string, error) { return ResultsCurve(dir, "") }

// ResultsCurve is Results with the accuracy curves of the plots chosen
// for every run: honest_local_acc (personalized accuracy) or
// honest_global_acc; "" lets each run's strategy choose (AccuracyCurve).
func ResultsCurve(dir, curve string) (string, error) {
	switch curve {
	case "", "honest_local_acc", "honest_global_acc":
	default:
		return "", fmt.Errorf("curve %q: want honest_local_acc or honest_global_acc", curve)
	}
	runs, keys, err := collectRuns(dir)
	if err != nil {
		return "", err
	}
	if len(runs) == 0 {
		return "", fmt.Errorf("%s: no finished runs (directories with %s, %s and %s)", dir, rundir.ConfigFile, rundir.RoundsFile, rundir.SummaryFile)
	}
	if consensusRuns(runs) {
		return consensusResults(dir, runs)
	}
	metrics := []string{"final_honest_global_acc", "final_honest_local_acc", "final_honest_local_acc_std", "final_delta_max"}
	var md bytes.Buffer
	if err := WriteMarkdown(&md, runs, metrics, 4); err != nil {
		return "", err
	}
	if len(keys) == 1 {
		// One swept key besides the strategy (e.g. the number of
		// malfunctioning clients): the honest accuracy per label and value,
		// ± its spread across honest nodes.
		fmt.Fprintf(&md, "\n%s ± its spread across honest nodes (std), mean over seeds:\n\n", capital(Label("final_honest_local_acc")))
		if err := WriteSpreadPivot(&md, runs, keys[0], "final_honest_local_acc", "final_honest_local_acc_std", 4); err != nil {
			return "", err
		}
	}
	scores, err := scoreReport(dir)
	if err != nil {
		return "", err
	}
	md.WriteString(scores)
	corrections, err := correctionReport(dir)
	if err != nil {
		return "", err
	}
	md.WriteString(corrections)
	async, err := asyncReport(dir)
	if err != nil {
		return "", err
	}
	md.WriteString(async)
	acc := accuracyOf(runs, curve)
	fmt.Fprintf(&md, "\nAccuracies are fractions (0–1) and rounds count from 0, as in the run files. %s\n", acc.note())
	if err := rundir.WriteAtomicFunc(filepath.Join(dir, "results.md"), func(w io.Writer) error { _, err := w.Write(md.Bytes()); return err }); err != nil {
		return "", err
	}
	// One curve figure per combination of the non-strategy swept values.
	combos := []map[string]string{{}}
	for _, k := range keys {
		var next []map[string]string
		for _, base := range combos {
			for _, v := range Values(runs, k) {
				m := map[string]string{k: v}
				for bk, bv := range base {
					m[bk] = bv
				}
				next = append(next, m)
			}
		}
		combos = next
	}
	names := plotNames(keys, combos)
	for i, combo := range combos {
		sel := Filter(runs, combo)
		if len(sel) == 0 {
			continue
		}
		plotted, metric := acc.runs(sel, "")
		name := "accuracy" + names[i]
		ch, err := Curves(plotted, metric, Figure{Title: plotTitle("Honest accuracy", keys, combo), YLabel: acc.axis(sel, false)})
		if err != nil {
			return "", fmt.Errorf("plot %s: %w", name, err)
		}
		if err := savePlot(dir, name, oldPlotName("accuracy", keys, combo), ch); err != nil {
			return "", err
		}
	}
	if err := trustPlots(dir, runs, combos, keys, names); err != nil {
		return "", err
	}
	if len(keys) == 1 {
		k := keys[0]
		plotted, metric := acc.runs(runs, "final_")
		ch, err := Sweep(plotted, k, metric, Figure{Title: "Final honest accuracy vs " + shortKey(k), XLabel: k, YLabel: acc.axis(runs, true)})
		if err == nil {
			if err := ch.Save(0, 0, filepath.Join(dir, "final-vs-"+config.SafeName(k)+".png"), filepath.Join(dir, "final-vs-"+config.SafeName(k)+".svg")); err != nil {
				return "", err
			}
		}
	}
	return md.String(), nil
}

// Personalized reports whether a strategy keeps a personal model that it
// evaluates on the node's own data — local-only training, Ditto, R-DPFL,
// LIGHTYEAR, MURMURA and DMTT on it — so that its headline is the honest
// nodes' local (personalized) accuracy; the others train one model per
// node towards a common one, judged on the global test set.
// The strategy's registry row says it (strategy.Row.Personalized).
func Personalized(name string) bool {
	r, ok := strategy.Lookup(name)
	return ok && r.Personalized
}

// AccuracyCurve is the accuracy a run's plots show by default: honest
// local accuracy for a personalized strategy (Personalized) and for a run
// that measured no global accuracy, honest global accuracy otherwise.
func AccuracyCurve(strategy string, measuredGlobal bool) string {
	if Personalized(strategy) || !measuredGlobal {
		return "honest_local_acc"
	}
	return "honest_global_acc"
}

// accuracy is the accuracy curve each label's runs plot.
type accuracy map[string]string // label → honest_local_acc or honest_global_acc

// accuracyOf picks each label's accuracy curve: curve for every label
// when given, else by the label's strategy (AccuracyCurve), global only
// where every run of the label measured it.
func accuracyOf(runs []RunResult, curve string) accuracy {
	a := accuracy{}
	global := map[string]bool{}
	for _, r := range runs {
		ok, seen := global[r.Label]
		global[r.Label] = (ok || !seen) && hasCurve([]RunResult{r}, "honest_global_acc")
	}
	for _, r := range runs {
		switch {
		case curve != "":
			a[r.Label] = curve
		case a[r.Label] == "":
			a[r.Label] = AccuracyCurve(r.Strategy, global[r.Label])
		}
	}
	return a
}

// runs returns the runs to plot and the metric (prefix + curve) they
// plot: the runs themselves when their labels share one curve, else
// copies whose metric "accuracy" holds each label's curve and whose label
// says which ("ubar (global)").
func (a accuracy) runs(runs []RunResult, prefix string) ([]RunResult, string) {
	if m, ok := a.one(runs); ok {
		return runs, prefix + m
	}
	out := make([]RunResult, len(runs))
	for i, r := range runs {
		m := a[r.Label]
		c := r
		c.Label = r.Label + " (" + strings.TrimSuffix(strings.TrimPrefix(m, "honest_"), "_acc") + ")"
		c.Curves = map[string]Series{"accuracy": r.Curves[m]}
		c.Final = map[string]float64{}
		if v, ok := r.Final["final_"+m]; ok {
			c.Final["final_accuracy"] = v
		}
		out[i] = c
	}
	return out, prefix + "accuracy"
}

// one returns the curve every label of runs plots, if they agree.
func (a accuracy) one(runs []RunResult) (string, bool) {
	m := ""
	for _, r := range runs {
		if m != "" && a[r.Label] != m && a[r.Label] != "" {
			return "", false
		}
		m = cmp.Or(m, a[r.Label])
	}
	return m, m != ""
}

// axis is the y label of a plot of runs (a.runs' input; of their final
// value when final): the label of the curve they share, or "honest
// accuracy" when the legend says which each label plots.
func (a accuracy) axis(runs []RunResult, final bool) string {
	prefix := ""
	if final {
		prefix = "final_"
	}
	if m, ok := a.one(runs); ok {
		return Label(prefix + m)
	}
	return strings.ReplaceAll(prefix, "_", " ") + "honest accuracy (" + UnitFraction + ")"
}

// note says in results.md which accuracy the plots show.
func (a accuracy) note() string {
	var local, global []string
	for _, l := range slices.SortedFunc(maps.Keys(a), CompareValues) {
		if a[l] == "honest_local_acc" {
			local = append(local, l)
		} else {
			global = append(global, l)
		}
	}
	switch {
	case len(global) == 0:
		return "The accuracy plots show honest local accuracy."
	case len(local) == 0:
		return "The accuracy plots show honest global accuracy."
	}
	return fmt.Sprintf("The accuracy plots show honest local accuracy for %s (personalized, or no global test) and honest global accuracy for %s (`trellis report --curve` picks one for all).",
		strings.Join(local, ", "), strings.Join(global, ", "))
}

// trustCurves are the per-round topology-trust diagnostics a run records
// when its nodes run DMTT's trust layer (metrics.TrustRound), as curves named
// "trust_" + the field's JSON name; their final_ means are final metrics.
var trustCurves = []string{"trust_neighbor_honest", "trust_neighbor_byzantine", "trust_all_honest",
	"trust_all_byzantine", "trust_screened_honest", "trust_screened_byzantine", "trust_view_edges",
	"trust_view_true_edges", "trust_true_edges", "trust_claim_bytes_per_node"}

// trustPlots draws, per combination of the swept values, the mean
// topology trust honest nodes hold in honest and in Byzantine neighbors
// over rounds, for every run that records it (one curve pair per label).
func trustPlots(dir string, runs []RunResult, combos []map[string]string, keys, names []string) error {
	for i, combo := range combos {
		var sel []RunResult
		for _, r := range Filter(runs, combo) {
			for _, side := range []string{"honest", "byzantine"} {
				s, ok := r.Curves["trust_neighbor_"+side]
				if !ok {
					continue
				}
				sel = append(sel, RunResult{Label: r.Label + " · " + side + " neighbors", Params: r.Params, Seed: r.Seed,
					Curves: map[string]Series{"trust": s}, Final: map[string]float64{}})
			}
		}
		if len(sel) == 0 {
			continue
		}
		name := "trust" + names[i]
		ch, err := Curves(sel, "trust", Figure{Title: plotTitle("Trust in neighbors", keys, combo), XLabel: Label("round"), YLabel: "mean topology trust (T_topo, 0–1)"})
		if err != nil {
			return fmt.Errorf("plot %s: %w", name, err)
		}
		if err := savePlot(dir, name, oldPlotName("trust", keys, combo), ch); err != nil {
			return err
		}
	}
	return nil
}

// plotNames are the file-name suffixes of the plots of each combination
// of swept values: per key its short name and the value, "-"-joined, the
// pairs "_"-joined ("_fraction-0.1_rule-median"); a key whose short name
// two swept keys share keeps its full name (dots as "-"). Names that
// still coincide (values that differ only in characters a file name
// cannot hold) get a number.
func plotNames(keys []string, combos []map[string]string) []string {
	short := map[string]string{}
	count := map[string]int{}
	for _, k := range keys {
		count[shortKey(k)]++
	}
	for _, k := range keys {
		short[k] = shortKey(k)
		if count[short[k]] > 1 {
			short[k] = strings.ReplaceAll(k, ".", "-")
		}
	}
	names := make([]string, len(combos))
	seen := map[string]int{}
	for i, combo := range combos {
		var b strings.Builder
		for _, k := range keys {
			b.WriteString("_" + slug(short[k]) + "-" + slug(combo[k]))
		}
		n := b.String()
		if seen[n]++; seen[n] > 1 {
			n += fmt.Sprintf("_%d", seen[n])
		}
		names[i] = n
	}
	return names
}

// slug is s with every character but ASCII letters, digits, '.', '-' and
// '_' replaced by '_'.
func slug(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '-', r == '_':
			return r
		}
		return '_'
	}, s)
}

// plotTitle appends a combination of swept values to a plot's title.
func plotTitle(title string, keys []string, combo map[string]string) string {
	for _, k := range keys {
		title += fmt.Sprintf(", %s = %s", shortKey(k), combo[k])
	}
	return title
}

// oldPlotName is the name earlier versions gave the plot of a combination
// ("accuracy_adversary.fraction=0.1"): savePlot removes such a file when
// it redraws the plot under its new name.
func oldPlotName(name string, keys []string, combo map[string]string) string {
	for _, k := range keys {
		name += "_" + config.SafeName(k+"="+combo[k])
	}
	return name
}

// savePlot writes dir/name.png and .svg and removes the same plot under
// its old name, if there.
func savePlot(dir, name, old string, ch *Chart) error {
	if err := ch.Save(0, 0, filepath.Join(dir, name+".png"), filepath.Join(dir, name+".svg")); err != nil {
		return err
	}
	if old == name {
		return nil
	}
	for _, ext := range []string{".png", ".svg"} {
		if err := os.Remove(filepath.Join(dir, old+ext)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	return nil
}

func hasCurve(runs []RunResult, m string) bool {
	for _, r := range runs {
		s, ok := r.Curves[m]
		if !ok {
			return false
		}
		for _, v := range s.Values {
			if v != 0 {
				return true
			}
		}
	}
	return false
}

// eachRun calls fn with the directory and config of every finished run
// under dir (a directory holding the config, the summary and file) in walk
// order.
func eachRun(dir, file string, fn func(p string, c config.Config) error) error {
	return filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || !d.IsDir() || !rundir.Has(p, rundir.ConfigFile, file, rundir.SummaryFile) {
			return err
		}
		text, err := rundir.ReadConfig(p)
		if err != nil {
			return err
		}
		c, err := config.Parse(text, filepath.Join(p, rundir.ConfigFile))
		if err != nil {
			return err
		}
		return fn(p, c)
	})
}

// collectRuns finds the finished runs under dir and the swept keys (other
// than the strategy's) that tell them apart.
func collectRuns(dir string) ([]RunResult, []string, error) {
	var runs []RunResult
	var cfgs []config.Config
	err := eachRun(dir, rundir.RoundsFile, func(p string, c config.Config) error {
		r, err := readRun(p, c)
		if err != nil {
			return err
		}
		runs, cfgs = append(runs, r), append(cfgs, c)
		return nil
	})
	if err != nil || len(runs) == 0 {
		return nil, nil, err
	}
	// Swept keys: every key whose value differs between runs, but the
	// seed, the name and the strategy's.
	values := make([]map[string]string, len(cfgs))
	for i, c := range cfgs {
		values[i] = config.Flatten(c)
	}
	// With explicit labels (sweep variants), a key that is constant within
	// each label is part of the method, not a sweep point.
	labeled := slices.ContainsFunc(cfgs, func(c config.Config) bool { return c.RunLabel != "" })
	if labeled && variantsSpanStrategies(cfgs) {
		// The variants are sweep points (e.g. one attack each, their keys
		// then swept keys) and the grid sweeps strategies: the strategy is
		// the method.
		labeled = false
		for i, c := range cfgs {
			c.RunLabel = ""
			runs[i].Label = c.Label()
		}
	}
	var keys []string
	for k, v := range values[0] {
		if k == "seed" || k == "name" || k == "label" || slices.Contains(config.LabelKeys(), k) || strings.HasPrefix(k, "run.") {
			continue
		}
		// Without explicit labels a strategy's options are in its label.
		if labeled && fixedPerLabel(runs, values, k) || !labeled && strings.HasPrefix(k, "strategy.options.") {
			continue
		}
		for _, other := range values[1:] {
			if other[k] != v {
				keys = append(keys, k)
				break
			}
		}
	}
	slices.Sort(keys)
	for i := range runs {
		runs[i].Fixed = values[i]
		for _, k := range keys {
			runs[i].Params[k] = values[i][k]
			delete(values[i], k)
		}
	}
	return runs, keys, nil
}

// shortKey is a swept key's last part ("lambda" for
// "strategy.options.lambda"), short enough for a plot title.
func shortKey(k string) string {
	if i := strings.LastIndexByte(k, '.'); i >= 0 {
		return k[i+1:]
	}
	return k
}

// variantsSpanStrategies reports whether some sweep variant holds runs of
// different strategies (different labels once the variant's is removed).
func variantsSpanStrategies(cfgs []config.Config) bool {
	seen := map[string]string{}
	for _, c := range cfgs {
		v := c.RunLabel
		c.RunLabel = ""
		if l, ok := seen[v]; ok && l != c.Label() {
			return true
		}
		seen[v] = c.Label()
	}
	return false
}

// fixedPerLabel reports whether key k has one value among the runs of each
// label.
func fixedPerLabel(runs []RunResult, values []map[string]string, k string) bool {
	seen := map[string]string{}
	for i, r := range runs {
		if v, ok := seen[r.Label]; ok && v != values[i][k] {
			return false
		}
		seen[r.Label] = values[i][k]
	}
	return true
}

// readRun loads one run's curves (evaluated rounds) and final metrics,
// after checking that its files are whole (rundir.Verify).
func readRun(dir string, c config.Config) (RunResult, error) {
	r := RunResult{Label: c.Label(), Strategy: c.Strategy.Name, Params: map[string]string{}, Seed: c.Seed,
		Curves: map[string]Series{}, Final: map[string]float64{}}
	// The readers stop quietly at a line that does not decode: a run cut
	// short or edited would otherwise be reported as if whole.
	if err := rundir.Verify(dir, c.Nodes, c.FinalRounds); err != nil {
		return r, err
	}
	recs, err := rundir.ReadRoundFields(dir)
	if err != nil {
		return r, err
	}
	curves := []string{"honest_local_acc", "honest_global_acc", "delta_max", "honest_local_acc_std"}
	for _, rec := range recs {
		round, _ := rec["round"].(float64)
		if dm, ok := rec["delta_max"].(float64); ok {
			r.Final["max_delta_max"] = max(r.Final["max_delta_max"], dm)
		}
		if tr, ok := rec["trust"].(map[string]any); ok {
			// DMTT's topology-trust diagnostics (metrics.TrustRound), every round.
			for _, k := range trustCurves {
				v, ok := tr[strings.TrimPrefix(k, "trust_")].(float64)
				if !ok {
					continue // no pair of that kind this round
				}
				s := r.Curves[k]
				s.Rounds = append(s.Rounds, int(round))
				s.Values = append(s.Values, v)
				r.Curves[k] = s
			}
		}
		if ev, _ := rec["evaluated"].(bool); !ev {
			continue
		}
		for _, m := range curves {
			v, _ := rec[m].(float64)
			s := r.Curves[m]
			s.Rounds = append(s.Rounds, int(round))
			s.Values = append(s.Values, v)
			r.Curves[m] = s
		}
	}
	// final_honest_local_acc_std: the spread of accuracy across honest
	// nodes, averaged like the other final metrics over the last
	// final_rounds evaluated rounds (it is not in summary.csv).
	if s := r.Curves["honest_local_acc_std"]; len(s.Values) > 0 {
		last := s.Values[max(0, len(s.Values)-c.FinalRounds):]
		var sum float64
		for _, v := range last {
			sum += v
		}
		r.Final["final_honest_local_acc_std"] = sum / float64(len(last))
	}
	for _, k := range trustCurves {
		if s := r.Curves[k]; len(s.Values) > 0 {
			last := s.Values[max(0, len(s.Values)-c.FinalRounds):]
			var sum float64
			for _, v := range last {
				sum += v
			}
			r.Final["final_"+k] = sum / float64(len(last))
		}
	}
	rows, err := rundir.ReadSummary(dir)
	if err != nil {
		return r, err
	}
	if len(rows) == 1 {
		for _, k := range rundir.FinalColumns() {
			if v, err := strconv.ParseFloat(rows[0][k], 64); err == nil && strings.HasPrefix(k, "final_") {
				r.Final[k] = v
			}
		}
	}
	return r, nil
}
