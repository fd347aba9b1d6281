package main

import (
	"flag"
	"os"
	"strings"
	"testing"

	"github.com/trellis-fl/trellis/internal/capture"
)

// A quick pass of the program the results page was printed by (one seed,
// 2 rounds, the two per-receiver attacks, without the mean over subsets):
// every setting's table, and safe_area, centerpoint_lp and
// tverberg never leave the honest inputs' hull under them.
func TestQuickPass(t *testing.T) {
	if testing.Short() {
		t.Skip("a quick pass of the benchmark program: about 7 s of CPU")
	}
	saved := os.Args
	defer func() { os.Args = saved }()
	os.Args = []string{saved[0], "-seeds", "1", "-T", "2", "-attacks", "2", "-mean=false"}
	flag.CommandLine = flag.NewFlagSet(saved[0], flag.ExitOnError) // main defines its flags again
	out := capture.Stdout(t, main)
	tables, rows := 0, 0
	var valid []int // the "out" columns of the rules that must stay in the hull
	for _, line := range strings.Split(out, "\n") {
		c := strings.Split(line, "|")
		if strings.HasPrefix(line, "| attack | safe_area out") {
			tables++
			valid = valid[:0]
			for i, h := range c {
				switch strings.TrimSpace(h) {
				case "safe_area out", "centerpoint_lp out", "tverberg out":
					valid = append(valid, i)
				}
			}
			if len(valid) != 3 {
				t.Errorf("header without the three rules: %s", line)
			}
			continue
		}
		if len(c) < 4 || !strings.HasPrefix(strings.TrimSpace(c[2]), "✓") && !strings.HasPrefix(strings.TrimSpace(c[2]), "✗") {
			continue
		}
		rows++
		for _, i := range valid {
			if i < len(c) && !strings.HasPrefix(strings.TrimSpace(c[i]), "✓") {
				t.Errorf("column %d left the honest hull (or failed): %s", i, line)
			}
		}
	}
	if tables < 7 || rows < 7*2 {
		t.Fatalf("%d tables, %d rows; want the 7 settings' tables of 2 attacks each:\n%s", tables, rows, out)
	}
}

// A quick pass of the -radon table (one seed, 2 rounds, every attack):
// the iterated Radon point stays in the honest inputs' hull in every
// setting, where tverberg and centerpoint_lp are refused in some.
func TestQuickPassRadon(t *testing.T) {
	if testing.Short() {
		t.Skip("a quick pass of the benchmark program's -radon table")
	}
	saved := os.Args
	defer func() { os.Args = saved }()
	os.Args = []string{saved[0], "-radon", "-seeds", "1", "-T", "2"}
	flag.CommandLine = flag.NewFlagSet(saved[0], flag.ExitOnError) // main defines its flags again
	out := capture.Stdout(t, main)
	rows := 0
	for _, line := range strings.Split(out, "\n") {
		c := strings.Split(line, "|")
		if len(c) < 4 || strings.HasPrefix(line, "| attack") || strings.HasPrefix(line, "|---") {
			continue
		}
		rows++
		if !strings.HasPrefix(strings.TrimSpace(c[2]), "✓") {
			t.Errorf("radon left the honest hull (or failed): %s", line)
		}
	}
	if rows < 4*6 {
		t.Fatalf("%d rows; want the 4 settings' tables of 6 attacks each:\n%s", rows, out)
	}
}
