package main

import (
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/trellis-fl/trellis/internal/capture"
)

// A quick pass of the program the methods page's table was printed by
// (2 synchronous rounds): a table of virtual times in which each of the
// three runs (synchronous, bounded and unbounded asynchronous) has an
// accuracy in (0, 1] somewhere.
func TestQuickPass(t *testing.T) {
	if testing.Short() {
		t.Skip("a quick pass of the benchmark program: three short runs")
	}
	saved := os.Args
	defer func() { os.Args = saved }()
	os.Args = []string{saved[0], "-rounds", "2"}
	out := capture.Stdout(t, main)
	seen := make([]bool, 3)
	for _, line := range strings.Split(out, "\n") {
		c := strings.Split(line, "|")
		if len(c) != 7 {
			continue
		}
		for k := range 3 {
			a, err := strconv.ParseFloat(strings.TrimSpace(c[3+k]), 64)
			if err == nil && a > 0 && a <= 1 {
				seen[k] = true
			}
		}
	}
	for k, ok := range seen {
		if !ok {
			t.Errorf("run %d has no accuracy in the table:\n%s", k, out)
		}
	}
}

// -rules picks the study's rows by key, in the study's order, and the
// default is the four rows the results page's first tables show.
func TestChosenRules(t *testing.T) {
	names := func(ks []int) string {
		var out []string
		for _, k := range ks {
			out = append(out, studyRules[k].key)
		}
		return strings.Join(out, ",")
	}
	if got := names(chosenRules("lightyear,median")); got != "median,lightyear" {
		t.Errorf("-rules lightyear,median: %s", got)
	}
	if got := names(chosenRules("mean,median,trimmed_mean,balance")); got != "mean,median,trimmed_mean,balance" {
		t.Errorf("the default rows: %s", got)
	}
}
