package experiment

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/BurntSushi/toml"

	"github.com/trellis-fl/trellis/metrics"
)

// SweepRun is one run of a sweep: its swept values, its seed and its
// directory (relative to the sweep's).
type SweepRun struct {
	Params map[string]string
	Config Config
	Dir    string
}

// Expand lists the runs of c's sweep: the variants (by name) times the
// grid's cross product (keys in sorted order) times the seeds (or c.Seed
// alone). Without a sweep it is the single run c. The returned keys are
// the swept ones, "variant" first when there are variants.
func (c Config) Expand() ([]SweepRun, []string, error) {
	keys := make([]string, 0, len(c.Sweep.Grid))
	for k := range c.Sweep.Grid {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	variants := make([]string, 0, len(c.Sweep.Variants))
	for v := range c.Sweep.Variants {
		variants = append(variants, v)
	}
	slices.Sort(variants)
	if len(variants) == 0 {
		variants = []string{""}
	}
	seeds := c.Sweep.Seeds
	if len(seeds) == 0 {
		seeds = []uint64{c.Seed}
	}
	combos := []map[string]any{{}}
	for _, k := range keys {
		var next []map[string]any
		for _, base := range combos {
			for _, v := range c.Sweep.Grid[k] {
				m := make(map[string]any, len(base)+1)
				for bk, bv := range base {
					m[bk] = bv
				}
				m[k] = v
				next = append(next, m)
			}
		}
		combos = next
	}
	var runs []SweepRun
	for _, variant := range variants {
		for _, combo := range combos {
			more, err := c.expandOne(variant, keys, combo, seeds)
			if err != nil {
				return nil, nil, err
			}
			runs = append(runs, more...)
		}
	}
	if variants[0] != "" {
		keys = append([]string{"variant"}, keys...)
	}
	return runs, keys, nil
}

// expandOne lists the runs of one variant ("" for none) at one grid point.
func (c Config) expandOne(variant string, keys []string, combo map[string]any, seeds []uint64) ([]SweepRun, error) {
	rc := c
	rc.Sweep = SweepConfig{}
	// The decoder writes into maps in place: give the run its own.
	rc.Strategy.Options = maps.Clone(c.Strategy.Options)
	params := map[string]string{}
	var parts []string
	if variant != "" {
		set := c.Sweep.Variants[variant]
		vkeys := slices.Sorted(maps.Keys(set))
		if _, ok := set["label"]; !ok {
			rc.RunLabel = variant
		}
		for _, k := range vkeys {
			if err := rc.set(k, set[k]); err != nil {
				return nil, fmt.Errorf("sweep.variants.%s: %w", variant, err)
			}
		}
		params["variant"] = variant
		parts = append(parts, safeName("variant="+variant))
	}
	for _, k := range keys {
		if err := rc.set(k, combo[k]); err != nil {
			return nil, err
		}
		params[k] = gridValue(combo[k])
		parts = append(parts, safeName(k+"="+params[k]))
	}
	var runs []SweepRun
	for _, s := range seeds {
		r := rc
		r.Seed = s
		if err := r.Validate(); err != nil {
			return nil, fmt.Errorf("sweep run %v seed %d: %w", params, s, err)
		}
		dir := filepath.Join(append(parts, fmt.Sprintf("seed-%d", s))...)
		runs = append(runs, SweepRun{Params: params, Config: r, Dir: dir})
	}
	return runs, nil
}

// gridValue is a grid value as text: a table (a grid over whole sections,
// such as strategy = [{name = "ditto", options = {lambda = 0.5}}, ...]) as
// its dotted keys, sorted: "name=ditto,options.lambda=0.5".
func gridValue(v any) string {
	m, ok := v.(map[string]any)
	if !ok {
		return fmt.Sprint(v)
	}
	flat := flatten(m)
	keys := make([]string, 0, len(flat))
	for k := range flat {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + flat[k]
	}
	return strings.Join(parts, ",")
}

// set assigns a dotted key by decoding a one-key TOML document over c. A
// table value sets the keys it holds and leaves the others.
func (c *Config) set(key string, v any) error {
	// The options map is shared by the copies of a config: decode into a
	// fresh one.
	c.Strategy.Options = maps.Clone(c.Strategy.Options)
	doc := map[string]any{}
	cur := doc
	parts := strings.Split(key, ".")
	for _, p := range parts[:len(parts)-1] {
		next := map[string]any{}
		cur[p] = next
		cur = next
	}
	cur[parts[len(parts)-1]] = v
	var buf bytes.Buffer
	if err := toml.NewEncoder(&buf).Encode(doc); err != nil {
		return fmt.Errorf("sweep.grid %q = %v: %w", key, v, err)
	}
	if _, err := toml.Decode(buf.String(), c); err != nil {
		return fmt.Errorf("sweep.grid %q = %v: %w", key, v, err)
	}
	return nil
}

func safeName(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '=', r == '-', r == '_':
			return r
		}
		return '_'
	}, s)
}

// SweepProgress is told when a run starts and after each of its rounds.
type SweepProgress func(run, runs int, r SweepRun, round, rounds int)

// SweepResult is a finished sweep: every run with its final metrics.
type SweepResult struct {
	Keys []string
	Runs []SweepRun
	Fin  []Final
}

// RunSweep runs every run of c's sweep one after another into out, each in
// its own directory, skipping runs whose summary.csv exists (a sweep
// resumes where it stopped), then writes the sweep's summary.csv.
func RunSweep(ctx context.Context, c Config, out string, progress SweepProgress) (*SweepResult, error) {
	runs, keys, err := c.Expand()
	if err != nil {
		return nil, err
	}
	res := &SweepResult{Keys: keys, Runs: runs, Fin: make([]Final, len(runs))}
	var rows []summaryRow
	for i, r := range runs {
		dir := filepath.Join(out, r.Dir)
		if fin, ok := readFinal(dir); ok {
			res.Fin[i] = fin
			rows = append(rows, summaryRow{params: r.Params, c: r.Config, f: fin})
			continue
		}
		fin, err := RunToDir(ctx, r.Config, dir, func(rd *metrics.Round, rounds int) {
			if progress != nil {
				progress(i, len(runs), r, rd.Round+1, rounds)
			}
		})
		if err != nil {
			return res, fmt.Errorf("run %s: %w", r.Dir, err)
		}
		res.Fin[i] = fin
		rows = append(rows, summaryRow{params: r.Params, c: r.Config, f: fin})
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return res, err
	}
	return res, writeSummary(filepath.Join(out, SummaryFile), keys, rows)
}

// readFinal reads a finished run's final metrics from its summary.csv.
func readFinal(dir string) (Final, bool) {
	rows, err := ReadSummary(dir)
	if err != nil || len(rows) != 1 {
		return Final{}, false
	}
	vals := make([]float64, len(finalColumns))
	for i, k := range finalColumns {
		if _, err := fmt.Sscan(rows[0][k], &vals[i]); err != nil {
			return Final{}, false
		}
	}
	return Final{HonestLocalAcc: vals[0], HonestGlobalAcc: vals[1], AllAcc: vals[2], HonestLoss: vals[3],
		DeltaMax: vals[4], MeanByzWeight: vals[5], Rounds: int(vals[6]), Privacy: readPrivacy(rows[0])}, true
}

// SafeName is s made safe as a file name (what sweep directories and
// plots are named by).
func SafeName(s string) string { return safeName(s) }
