package report

import (
	"slices"
	"testing"
)

func TestCompareValues(t *testing.T) {
	got := []string{"10", "abc", "9", "0.5", "Abc", "-1", "1e-3", "0.50"}
	slices.SortFunc(got, CompareValues)
	want := []string{"-1", "1e-3", "0.5", "0.50", "9", "10", "Abc", "abc"}
	if !slices.Equal(got, want) {
		t.Errorf("sorted = %q, want %q", got, want)
	}
}

func TestValuesAndFilter(t *testing.T) {
	runs := []RunResult{
		{Label: "x", Params: map[string]string{"f": "0.3", "n": "10"}, Seed: 1},
		{Label: "x", Params: map[string]string{"f": "0.05", "n": "9"}, Seed: 1},
		{Label: "y", Params: map[string]string{"f": "0.3", "n": "9"}, Seed: 2},
		{Label: "y", Params: map[string]string{"n": "9"}, Seed: 3},
	}
	if got, want := Values(runs, "f"), []string{"0.05", "0.3"}; !slices.Equal(got, want) {
		t.Errorf("Values(f) = %q, want %q", got, want)
	}
	if got, want := Values(runs, "n"), []string{"9", "10"}; !slices.Equal(got, want) {
		t.Errorf("Values(n) = %q, want %q", got, want)
	}
	got := Filter(runs, map[string]string{"f": "0.3", "n": "9"})
	if len(got) != 1 || got[0].Seed != 2 {
		t.Errorf("Filter(f=0.3, n=9) = %+v, want the run with seed 2", got)
	}
	if got := Filter(runs, nil); len(got) != len(runs) {
		t.Errorf("Filter(nil) kept %d of %d runs", len(got), len(runs))
	}
}
