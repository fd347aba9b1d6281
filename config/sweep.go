package config

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/BurntSushi/toml"
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
	// Every run is validated, and every invalid one reported at once.
	var errs []error
	for _, variant := range variants {
		for _, combo := range combos {
			more, err := c.expandOne(variant, keys, combo, seeds)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			runs = append(runs, more...)
		}
	}
	if len(errs) > 0 {
		return nil, nil, errors.Join(errs...)
	}
	if variants[0] != "" {
		keys = append([]string{"variant"}, keys...)
	}
	return runs, keys, nil
}

// expandOne lists the runs of one variant ("" for none) at one grid point.
func (c Config) expandOne(variant string, keys []string, combo map[string]any, seeds []uint64) ([]SweepRun, error) {
	rc := c
	rc.Sweep = Sweep{}
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
		parts = append(parts, SafeName("variant="+variant))
	}
	for _, k := range keys {
		if err := rc.set(k, combo[k]); err != nil {
			return nil, err
		}
		params[k] = gridValue(combo[k])
		parts = append(parts, SafeName(k+"="+params[k]))
	}
	var runs []SweepRun
	for _, s := range seeds {
		r := rc
		r.Seed = s
		if err := r.Validate(); err != nil {
			return nil, fmt.Errorf("sweep run %s seed %d: %w", ParamsText(params), s, err)
		}
		dir := filepath.Join(append(parts, fmt.Sprintf("seed-%d", s))...)
		runs = append(runs, SweepRun{Params: params, Config: r, Dir: dir})
	}
	return runs, nil
}

// ParamsText is a run's swept values as key=value pairs in key order
// ("k1=v1, k2=v2"), not Go's map syntax.
func ParamsText(params map[string]string) string {
	keys := slices.Sorted(maps.Keys(params))
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + params[k]
	}
	return strings.Join(parts, ", ")
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

// Set assigns a dotted key from its value as text, as `--set key=value`
// gives it: a TOML value (3, 0.5, true, [1, 2], "auto") or, when the text
// is not one, a string (median). Validate the config afterwards.
func (c *Config) Set(key, text string) error {
	keys := configKeys()
	table := slices.ContainsFunc(keys, func(k string) bool { return strings.HasPrefix(k, key+".") })
	if key == "sweep" || strings.HasPrefix(key, "sweep.") {
		// --set changes every run of a sweep alike; the sweep itself is
		// the config's to say.
		return fmt.Errorf("--set %s=%s: --set cannot change the [sweep] table (it sets a key of every run): edit the config's [sweep], or set one run's seed with --set seed=N", key, text)
	}
	if !slices.Contains(keys, key) || table {
		return fmt.Errorf("--set %s=%s: %s", key, text, unknownKey(key))
	}
	var doc map[string]any
	var v any = text
	if _, err := toml.Decode("v = "+text, &doc); err == nil {
		v = doc["v"]
	}
	if err := c.set(key, v); err != nil {
		return fmt.Errorf("--set %s=%s: %w", key, text, errors.Unwrap(err))
	}
	return nil
}

// set assigns a dotted key by decoding a one-key TOML document over c. A
// table value sets the keys it holds and leaves the others.
func (c *Config) set(key string, v any) error {
	// The options map is shared by the copies of a config: decode into a
	// fresh one.
	c.Strategy.Options = maps.Clone(c.Strategy.Options)
	// So are the pointers: the decoder writes through them.
	c.Strategy.F = clonePtr(c.Strategy.F)
	c.Strategy.Prediction = clonePtr(c.Strategy.Prediction)
	c.Strategy.Clipping = clonePtr(c.Strategy.Clipping)
	c.Consensus = clonePtr(c.Consensus)
	if c.Consensus == nil && strings.HasPrefix(key, "consensus.") {
		d := ConsensusDefault() // a sweep that makes a run consensus gives it the defaults
		c.Consensus = &d
	}
	c.Timing = clonePtr(c.Timing)
	if c.Timing == nil && strings.HasPrefix(key, "timing.") {
		d := TimingDefault() // likewise a sweep that gives a run a timing
		c.Timing = &d
	}
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

func clonePtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

// SafeName is s made safe as a file name (what sweep directories and
// plots are named by).
func SafeName(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '=', r == '-', r == '_':
			return r
		}
		return '_'
	}, s)
}
