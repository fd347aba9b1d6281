package report

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/trellis-fl/trellis/config"
)

// CompareValues orders labels and parameter values: numerically when both
// parse as numbers (so "0.05" < "0.3" < "1e1"), numbers before other
// strings, and strings bytewise. Equal numbers spelled differently ("0.3",
// "0.30") are ordered bytewise, so the order is total.
func CompareValues(a, b string) int {
	x, errA := strconv.ParseFloat(a, 64)
	y, errB := strconv.ParseFloat(b, 64)
	switch {
	case errA == nil && errB == nil:
		if c := cmp.Compare(x, y); c != 0 {
			return c
		}
	case errA == nil:
		return -1
	case errB == nil:
		return 1
	}
	return strings.Compare(a, b)
}

// Values returns the distinct values runs take for key (RunResult.Value),
// sorted with CompareValues; runs without the key are skipped.
func Values(runs []RunResult, key string) []string {
	var vs []string
	for _, r := range runs {
		if v, ok := r.Value(key); ok {
			vs = append(vs, v)
		}
	}
	slices.SortFunc(vs, CompareValues)
	return slices.Compact(vs)
}

// Filter returns the runs whose config values (RunResult.Value) include
// every key and value of params, in their input order.
func Filter(runs []RunResult, params map[string]string) []RunResult {
	var out []RunResult
next:
	for _, r := range runs {
		for k, v := range params {
			if got, ok := r.Value(k); !ok || got != v {
				continue next
			}
		}
		out = append(out, r)
	}
	return out
}

// paramKeys returns every parameter key of runs, sorted.
func paramKeys(runs []RunResult) []string {
	var keys []string
	for _, r := range runs {
		for k := range r.Params {
			keys = append(keys, k)
		}
	}
	slices.SortFunc(keys, CompareValues)
	return slices.Compact(keys)
}

// metricKeys returns every final-metric name of runs, sorted.
func metricKeys(runs []RunResult) []string {
	var keys []string
	for _, r := range runs {
		for k := range r.Final {
			keys = append(keys, k)
		}
	}
	slices.SortFunc(keys, CompareValues)
	return slices.Compact(keys)
}

// compareRuns orders runs by label, then by the values of keys in order,
// then by seed.
func compareRuns(a, b RunResult, keys []string) int {
	if c := CompareValues(a.Label, b.Label); c != 0 {
		return c
	}
	for _, k := range keys {
		if c := CompareValues(a.Params[k], b.Params[k]); c != 0 {
			return c
		}
	}
	return cmp.Compare(a.Seed, b.Seed)
}

// sortRuns returns a copy of runs sorted with compareRuns.
func sortRuns(runs []RunResult, keys []string) []RunResult {
	s := slices.Clone(runs)
	slices.SortStableFunc(s, func(a, b RunResult) int { return compareRuns(a, b, keys) })
	return s
}

// checkDistinct returns an error when two of the sorted runs agree on
// label, seed and the values of keys. When they differ in another
// parameter, the error names it: the caller mixed sweep points in a plot
// that shows one.
func checkDistinct(sorted []RunResult, keys []string) error {
	for i := 1; i < len(sorted); i++ {
		a, b := sorted[i-1], sorted[i]
		if compareRuns(a, b, keys) != 0 {
			continue
		}
		if diff := differingKeys(a.Params, b.Params); len(diff) > 0 {
			return fmt.Errorf("report: runs of %q with seed %d differ in %s (%s vs %s); pass the runs of one value (report.Filter)",
				a.Label, a.Seed, strings.Join(diff, ", "), config.ParamsText(a.Params), config.ParamsText(b.Params))
		}
		return fmt.Errorf("report: run of %q with seed %d and params {%s} appears twice", a.Label, a.Seed, config.ParamsText(a.Params))
	}
	return nil
}

// differingKeys returns the sorted keys whose values differ between a and b
// (including keys present in one only).
func differingKeys(a, b map[string]string) []string {
	var diff []string
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			diff = append(diff, k)
		}
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			diff = append(diff, k)
		}
	}
	slices.Sort(diff)
	return diff
}
