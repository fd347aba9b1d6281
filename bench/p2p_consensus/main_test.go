package main

import (
	"strings"
	"testing"

	"github.com/trellis-fl/trellis/internal/capture"
)

// A quick pass of the reconstruction table the results page was printed
// by (2 seeds, one for the encrypted method): plain consensus gives the
// target away to one colluder, state decomposition does not, and gives it
// away to all four neighbours.
func TestQuickPass(t *testing.T) {
	out := capture.Stdout(t, func() { reconTable(2, 1) })
	row := func(prefix string) []string {
		for _, line := range strings.Split(out, "\n") {
			if strings.HasPrefix(line, "| "+prefix) {
				c := strings.Split(line, "|")
				for i := range c {
					c[i] = strings.TrimSpace(c[i])
				}
				return c
			}
		}
		t.Fatalf("no %q row:\n%s", prefix, out)
		return nil
	}
	if c := row("plain"); c[3] != "0 (100%)" {
		t.Errorf("plain consensus, one colluder: %s, want exact recovery, 0 (100%%)", c[3])
	}
	if c := row("state decomposition"); !strings.HasSuffix(c[3], "(0%)") || !strings.HasSuffix(c[5], "(100%)") {
		t.Errorf("state decomposition: one colluder %s, all neighbours %s; want (0%%) and (100%%)", c[3], c[5])
	}
}
