package config

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/BurntSushi/toml"

	"github.com/trellis-fl/trellis/attack"
)

// WorstCase is the [worst_case] section: the defences `trellis
// worst-case` searches the strongest attack against, and how hard it
// searches (package worstcase runs it). A zero value means the default
// where there is one (WorstCaseDefaults, filled in by Parse).
type WorstCase struct {
	// Defences maps a defence's name to the dotted keys that make it, as
	// sweep variants do: "strategy.name", "strategy.rule",
	// "strategy.options.…". The search chooses the [adversary], so a
	// defence sets none of its keys.
	Defences map[string]map[string]any `toml:"defences"`
	// SearchRounds is the rounds of a search run (the grid and the
	// refinement); 0 means a fifth of rounds, at least 1. The confirmed
	// points run the config's rounds.
	SearchRounds int `toml:"search_rounds"`
	// SearchSeeds are the seeds of every search point, ConfirmSeeds those
	// of a confirmed one; empty means the config's seed.
	SearchSeeds  []uint64 `toml:"search_seeds"`
	ConfirmSeeds []uint64 `toml:"confirm_seeds"`
	// Grid is the number of values of each continuous attack parameter in
	// the coarse grid, spread evenly over its range (log-spaced for a
	// scale parameter).
	Grid int `toml:"grid"`
	// Tolerance stops a golden-section refinement once its bracket is
	// narrower than this fraction of the parameter's whole range.
	Tolerance float64 `toml:"tolerance"`
	// Refine is how many attack families are refined per defence, the
	// worst first (0: the grid alone).
	Refine int `toml:"refine"`
	// Confirm is how many of a defence's worst configurations (the worst
	// point of each family, worst first) run with the full rounds and
	// the confirm seeds, besides the run with no attack.
	Confirm int `toml:"confirm"`
	// Attacks limits the attack families searched (attack.Names(), the
	// paper aliases ana and sfa and "none" excepted); empty means every
	// attack usable with the defence.
	Attacks []string `toml:"attacks"`
	// Placements are the Byzantine placements searched (Placements);
	// empty means all of them.
	Placements []string `toml:"placements"`
}

// Placements are the ways the search places the Byzantine nodes:
// random (adversary.fraction's seeded draw), on the nodes of highest
// degree, around the honest node of lowest degree, and so that the
// neighbourhoods' Byzantine shares make the rules' robustness coefficient
// κ largest (package worstcase says how).
var Placements = []string{"random", "highest_degree", "around_lowest_degree", "kappa_max"}

// Defaults of [worst_case].
const (
	WorstCaseGrid      = 3
	WorstCaseTolerance = 0.05
	WorstCaseRefine    = 1
	WorstCaseConfirm   = 3
	// WorstCaseMaxGrid bounds the grid: 50 values of one parameter is
	// already a sweep, not a coarse grid.
	WorstCaseMaxGrid = 50
)

// fillWorstCase gives the keys of [worst_case] a file leaves out their
// defaults.
func (c *Config) fillWorstCase(md toml.MetaData) {
	w := c.WorstCase
	if w == nil {
		return
	}
	if !md.IsDefined("worst_case", "grid") {
		w.Grid = WorstCaseGrid
	}
	if !md.IsDefined("worst_case", "tolerance") {
		w.Tolerance = WorstCaseTolerance
	}
	if !md.IsDefined("worst_case", "refine") {
		w.Refine = WorstCaseRefine
	}
	if !md.IsDefined("worst_case", "confirm") {
		w.Confirm = WorstCaseConfirm
	}
}

// SearchRoundsOf is the rounds of a search run of c (WorstCase.SearchRounds).
func (c Config) SearchRoundsOf() int {
	if c.WorstCase != nil && c.WorstCase.SearchRounds > 0 {
		return c.WorstCase.SearchRounds
	}
	return max(1, c.Rounds/5)
}

// WorstCaseSeeds are the search and confirm seeds of c.
func (c Config) WorstCaseSeeds() (search, confirm []uint64) {
	search, confirm = []uint64{c.Seed}, []uint64{c.Seed}
	if w := c.WorstCase; w != nil {
		if len(w.SearchSeeds) > 0 {
			search = w.SearchSeeds
		}
		if len(w.ConfirmSeeds) > 0 {
			confirm = w.ConfirmSeeds
		}
	}
	return search, confirm
}

// SearchAttacks are the attack families a worst-case search may use: the
// catalogue without "none" (the search always runs the defence without
// attack, as its baseline) and the paper aliases ana (gaussian) and sfa
// (sign_flip), which would search the same attack twice.
func SearchAttacks() []string {
	return slices.DeleteFunc(attack.Names(), func(n string) bool { return n == "none" || n == "ana" || n == "sfa" })
}

// Defence is c with the defence name's keys set and no [worst_case]: the
// config every run of that defence starts from.
func (c Config) Defence(name string) (Config, error) {
	d := c
	d.WorstCase = nil
	if c.WorstCase == nil {
		return d, fmt.Errorf("no [worst_case] section, so no defence %q", name)
	}
	set, ok := c.WorstCase.Defences[name]
	if !ok {
		return d, fmt.Errorf("no defence %q in [worst_case.defences] (defences: %s)", name, strings.Join(slices.Sorted(maps.Keys(c.WorstCase.Defences)), ", "))
	}
	if err := d.SetKeys(set); err != nil {
		return d, fmt.Errorf("worst_case.defences.%s: %w", name, err)
	}
	return d, nil
}

// SetKeys assigns dotted keys (in sorted order) from decoded TOML values,
// as sweep variants do; each error names its key. Validate afterwards.
func (c *Config) SetKeys(set map[string]any) error {
	keys := configKeys()
	var errs []error
	for _, k := range slices.Sorted(maps.Keys(set)) {
		if !slices.Contains(keys, k) || strings.HasPrefix(k, "sweep") {
			errs = append(errs, errors.New(unknownKey(k)))
			continue
		}
		if err := c.set(k, set[k]); err != nil {
			errs = append(errs, fmt.Errorf("%s = %v: %w", k, set[k], errors.Unwrap(err)))
		}
	}
	return errors.Join(errs...)
}

// validateWorstCase checks [worst_case]: its values, and each defence as
// the config it makes.
func (c Config) validateWorstCase() []error {
	w := c.WorstCase
	if w == nil {
		return nil
	}
	var errs []error
	bad := func(key string, val any, allowed string) {
		errs = append(errs, fmt.Errorf("worst_case.%s = %v: %s", key, val, allowed))
	}
	if len(c.Sweep.Grid) > 0 || len(c.Sweep.Variants) > 0 || len(c.Sweep.Seeds) > 0 {
		errs = append(errs, errors.New("[sweep] and [worst_case] together: a worst-case search makes its own runs (its seeds are worst_case.search_seeds and confirm_seeds); remove [sweep]"))
	}
	if len(c.Adversary.IDs) > 0 {
		bad("placements", "adversary.ids", "the search places the Byzantine nodes itself; give their share as adversary.fraction instead of adversary.ids")
	} else if c.Adversary.Fraction <= 0 {
		errs = append(errs, fmt.Errorf("adversary.fraction = %v: a worst-case search needs Byzantine nodes to place; set adversary.fraction in (0, 1)", c.Adversary.Fraction))
	}
	if len(w.Defences) == 0 {
		errs = append(errs, errors.New(`[worst_case] names no defence: add one table per defence, e.g. [worst_case.defences.median] with "strategy.name" = "robust" and "strategy.rule" = "median"`))
	}
	if w.SearchRounds < 0 || w.SearchRounds > c.Rounds {
		bad("search_rounds", w.SearchRounds, fmt.Sprintf("allowed range [0, rounds = %d] (0: a fifth of rounds)", c.Rounds))
	}
	if w.Grid < 2 || w.Grid > WorstCaseMaxGrid {
		bad("grid", w.Grid, fmt.Sprintf("allowed range [2, %d]: a grid needs both ends of a parameter's range", WorstCaseMaxGrid))
	}
	if !(w.Tolerance >= 1e-3 && w.Tolerance <= 0.5) {
		bad("tolerance", w.Tolerance, "allowed range [0.001, 0.5] (a fraction of the parameter's range; the search rounds values to 4 significant digits)")
	}
	if w.Refine < 0 {
		bad("refine", w.Refine, "need ≥ 0 (0: the grid alone)")
	}
	if w.Confirm < 0 {
		bad("confirm", w.Confirm, "need ≥ 0 (0: confirm only the run without attack)")
	}
	for _, s := range []struct {
		key   string
		seeds []uint64
	}{{"search_seeds", w.SearchSeeds}, {"confirm_seeds", w.ConfirmSeeds}} {
		if len(slices.Compact(slices.Sorted(slices.Values(s.seeds)))) != len(s.seeds) {
			bad(s.key, s.seeds, "each seed once")
		}
	}
	searchable := SearchAttacks()
	for _, a := range w.Attacks {
		if !slices.Contains(searchable, a) {
			bad("attacks", fmt.Sprintf("%q", a), "want some of "+strings.Join(searchable, ", ")+" (the run without attack is always made)")
		}
	}
	for _, p := range w.Placements {
		if !slices.Contains(Placements, p) {
			bad("placements", fmt.Sprintf("%q", p), "want some of "+strings.Join(Placements, ", "))
		}
	}
	for _, name := range slices.Sorted(maps.Keys(w.Defences)) {
		set := w.Defences[name]
		if name == "" || SafeName(name) != name {
			bad("defences", fmt.Sprintf("%q", name), "a defence's name may use only letters, digits and . = - _")
		}
		for k := range set {
			if strings.HasPrefix(k, "adversary.") || strings.HasPrefix(k, "worst_case") {
				errs = append(errs, fmt.Errorf("worst_case.defences.%s: %s: the search chooses the attack and its placement; a defence sets the method (strategy.*, trust.*, …) only", name, k))
			}
		}
		d, err := c.Defence(name)
		if err == nil {
			err = d.Validate()
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("worst_case.defences.%s: %w", name, err))
		}
	}
	return errs
}
