package report

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/trellis-fl/trellis/experiment"
)

// Results reads every finished run under dir (a run directory, a sweep, or
// the demo's directory of runs), writes results.md (final metrics, mean ±
// std over seeds) and the plots — honest accuracy vs round per strategy,
// one figure per combination of the other swept values, and, when one
// numeric key was swept besides the strategy, the final accuracy vs that
// key — as PNG and SVG, and returns the Markdown table. The curves are of
// honest_global_acc when the runs measured it, else honest_local_acc.
func Results(dir string) (string, error) { return ResultsCurve(dir, "") }

// ResultsCurve is Results with the accuracy curves of the plots chosen:
// honest_local_acc (personalized accuracy, the headline of the
// personalized methods) or honest_global_acc; "" picks as Results does.
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
		return "", fmt.Errorf("%s: no finished runs (directories with %s, %s and %s)", dir, experiment.ConfigFile, experiment.RoundsFile, experiment.SummaryFile)
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
		fmt.Fprintf(&md, "\nfinal_honest_local_acc ± final_honest_local_acc_std (the spread across honest nodes), mean over seeds:\n\n")
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
	if err := WriteFile(filepath.Join(dir, "results.md"), func(w io.Writer) error { _, err := w.Write(md.Bytes()); return err }); err != nil {
		return "", err
	}
	if curve == "" {
		curve = "honest_global_acc"
	}
	if !hasCurve(runs, curve) {
		curve = "honest_local_acc"
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
	for _, combo := range combos {
		sel := Filter(runs, combo)
		if len(sel) == 0 {
			continue
		}
		name, title := plotName("accuracy", "Honest accuracy", keys, combo)
		ch, err := Curves(sel, curve, Figure{Title: title, XLabel: "round", YLabel: curve})
		if err != nil {
			return "", fmt.Errorf("plot %s: %w", name, err)
		}
		if err := ch.Save(0, 0, filepath.Join(dir, name+".png"), filepath.Join(dir, name+".svg")); err != nil {
			return "", err
		}
	}
	if err := trustPlots(dir, runs, combos, keys); err != nil {
		return "", err
	}
	if len(keys) == 1 {
		k := keys[0]
		ch, err := Sweep(runs, k, "final_"+curve, Figure{Title: "Final honest accuracy vs " + shortKey(k), XLabel: k, YLabel: "final_" + curve})
		if err == nil {
			if err := ch.Save(0, 0, filepath.Join(dir, "final-vs-"+experiment.SafeName(k)+".png"), filepath.Join(dir, "final-vs-"+experiment.SafeName(k)+".svg")); err != nil {
				return "", err
			}
		}
	}
	return md.String(), nil
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
func trustPlots(dir string, runs []RunResult, combos []map[string]string, keys []string) error {
	for _, combo := range combos {
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
		name, title := plotName("trust", "Trust in neighbors", keys, combo)
		ch, err := Curves(sel, "trust", Figure{Title: title, XLabel: "round", YLabel: "mean T_topo"})
		if err != nil {
			return fmt.Errorf("plot %s: %w", name, err)
		}
		if err := ch.Save(0, 0, filepath.Join(dir, name+".png"), filepath.Join(dir, name+".svg")); err != nil {
			return err
		}
	}
	return nil
}

// plotName appends a combination of swept values to a plot's file name
// and title.
func plotName(name, title string, keys []string, combo map[string]string) (string, string) {
	for _, k := range keys {
		name += "_" + experiment.SafeName(k+"="+combo[k])
		title += fmt.Sprintf(", %s = %s", shortKey(k), combo[k])
	}
	return name, title
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
func eachRun(dir, file string, fn func(p string, c experiment.Config) error) error {
	return filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		for _, f := range []string{experiment.ConfigFile, file, experiment.SummaryFile} {
			if _, err := os.Stat(filepath.Join(p, f)); err != nil {
				return nil
			}
		}
		c, err := experiment.LoadConfig(filepath.Join(p, experiment.ConfigFile))
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
	var cfgs []experiment.Config
	err := eachRun(dir, experiment.RoundsFile, func(p string, c experiment.Config) error {
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
		values[i] = experiment.Flatten(c)
	}
	// With explicit labels (sweep variants), a key that is constant within
	// each label is part of the method, not a sweep point.
	labeled := slices.ContainsFunc(cfgs, func(c experiment.Config) bool { return c.RunLabel != "" })
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
		if k == "seed" || k == "name" || k == "label" || slices.Contains(experiment.LabelKeys(), k) || strings.HasPrefix(k, "run.") {
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
		for _, k := range keys {
			runs[i].Params[k] = values[i][k]
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
func variantsSpanStrategies(cfgs []experiment.Config) bool {
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

// readRun loads one run's curves (evaluated rounds) and final metrics.
func readRun(dir string, c experiment.Config) (RunResult, error) {
	r := RunResult{Label: c.Label(), Params: map[string]string{}, Seed: c.Seed,
		Curves: map[string]Series{}, Final: map[string]float64{}}
	f, err := os.Open(filepath.Join(dir, experiment.RoundsFile))
	if err != nil {
		return r, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	curves := []string{"honest_local_acc", "honest_global_acc", "delta_max", "honest_local_acc_std"}
	for sc.Scan() {
		var rec map[string]any
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			break // an interrupted run's last line; the complete ones count
		}
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
	rows, err := experiment.ReadSummary(dir)
	if err != nil {
		return r, err
	}
	if len(rows) == 1 {
		for _, k := range experiment.FinalColumns() {
			if v, err := strconv.ParseFloat(rows[0][k], 64); err == nil && strings.HasPrefix(k, "final_") {
				r.Final[k] = v
			}
		}
	}
	return r, nil
}
