package config

import (
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/trellis-fl/trellis/configs"
)

// Source is where a config named on a command line came from.
type Source struct {
	// Ref is the file's absolute path, or the preset's name (without
	// ".toml").
	Ref string
	// Preset is true for a built-in preset (package configs).
	Preset bool
	// Text is the file's or the preset's TOML, as read.
	Text []byte
}

// Resolve reads the config that arg names: the file at that path when
// there is one, else the built-in preset of that name (".toml" optional).
// sets are `--set KEY=VALUE` overrides, applied in order (Set) and then
// checked as the keys of a file are (Validate, CheckSet).
func Resolve(arg string, sets []string) (Config, Source, error) {
	var src Source
	var cfg Config
	var err error
	if _, serr := os.Stat(arg); serr == nil {
		if src.Ref, err = filepath.Abs(arg); err != nil {
			return cfg, src, err
		}
		if src.Text, err = os.ReadFile(arg); err != nil {
			return cfg, src, fmt.Errorf("reading config: %w", err)
		}
		cfg, err = Parse(src.Text, arg)
	} else if b, ok := configs.Read(strings.TrimSuffix(arg, ".toml")); ok {
		src = Source{Ref: strings.TrimSuffix(arg, ".toml"), Preset: true, Text: b}
		cfg, err = Parse(b, "preset "+arg)
	} else {
		return cfg, src, fmt.Errorf("%q is neither a config file nor a preset: %s", arg, PresetHint(arg))
	}
	if err != nil || len(sets) == 0 {
		return cfg, src, err
	}
	var keys []string
	for _, s := range sets {
		k, v, ok := strings.Cut(s, "=")
		if !ok {
			return cfg, src, fmt.Errorf("--set %q: want KEY=VALUE", s)
		}
		if err := cfg.Set(strings.TrimSpace(k), strings.TrimSpace(v)); err != nil {
			return cfg, src, err
		}
		keys = append(keys, strings.TrimSpace(k))
	}
	if err := errors.Join(cfg.Validate(), cfg.CheckSet(keys)); err != nil {
		return cfg, src, fmt.Errorf("%s with --set: %w", arg, err)
	}
	return cfg, src, nil
}

// PresetHint names the presets closest to a name that is none (a typo, a
// family left out): "did you mean …?", or where the list is.
func PresetHint(name string) string {
	name = strings.TrimSuffix(name, ".toml")
	type near struct {
		name string
		d    int
	}
	var nears []near
	for _, n := range configs.Names() {
		d := min(editDistance(name, n), editDistance(name, path.Base(n)))
		if len(name) >= 4 && (strings.HasPrefix(n, name) || strings.HasPrefix(path.Base(n), name)) {
			d = min(d, 1) // the start of a name
		}
		if d <= max(2, len(name)/3) {
			nears = append(nears, near{n, d})
		}
	}
	slices.SortStableFunc(nears, func(a, b near) int { return a.d - b.d })
	if len(nears) == 0 {
		return "`trellis presets` lists the presets"
	}
	var names []string
	for _, n := range nears[:min(3, len(nears))] {
		if n.d <= nears[0].d+1 {
			names = append(names, strconv.Quote(n.name))
		}
	}
	return "did you mean " + strings.Join(names, " or ") + "? (`trellis presets` lists them all)"
}
