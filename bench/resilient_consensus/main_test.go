package main

import (
	"os"
	"strings"
	"testing"

	"github.com/trellis-fl/trellis/internal/capture"
)

// A quick pass of the program the results page was printed by (one seed,
// 3 rounds): every setting's table, and safe_area never leaves the honest
// inputs' hull, under every attack.
func TestQuickPass(t *testing.T) {
	if testing.Short() {
		t.Skip("a quick pass of the benchmark program: about 8 s")
	}
	saved := os.Args
	defer func() { os.Args = saved }()
	os.Args = []string{saved[0], "-seeds", "1", "-T", "3"}
	out := capture.Stdout(t, main)
	tables, rows := 0, 0
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "| attack | safe_area out") {
			tables++
		}
		c := strings.Split(line, "|")
		if len(c) < 4 || !strings.HasPrefix(strings.TrimSpace(c[2]), "✓") && !strings.HasPrefix(strings.TrimSpace(c[2]), "✗") {
			continue
		}
		rows++
		if cell := strings.TrimSpace(c[2]); !strings.HasPrefix(cell, "✓") {
			t.Errorf("safe_area left the honest hull: %s", line)
		}
	}
	if tables < 7 || rows < 7*6 {
		t.Fatalf("%d tables, %d rows; want the 7 settings' tables of 6 attacks each:\n%s", tables, rows, out)
	}
}
