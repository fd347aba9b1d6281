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

// A quick pass of the dynamic and directed reconstruction table (one
// seed): plain push-sum gives the target away to one out-neighbour, [166]
// does not, and gives it away to all in- and out-neighbours; [165] hides
// r_i(0) even from all neighbours but not r_i(T−1).
func TestQuickPassDynamic(t *testing.T) {
	out := capture.Stdout(t, func() { dynRecon(1) })
	row := func(prefix, secret string) []string {
		for _, line := range strings.Split(out, "\n") {
			c := strings.Split(line, "|")
			if len(c) > 2 && strings.TrimSpace(c[1]) == prefix && strings.TrimSpace(c[2]) == secret {
				for i := range c {
					c[i] = strings.TrimSpace(c[i])
				}
				return c
			}
		}
		t.Fatalf("no %q %q row:\n%s", prefix, secret, out)
		return nil
	}
	if c := row("push-sum (digraph)", "x_i(0)"); c[3] != "0 (100%)" {
		t.Errorf("push-sum, one colluder: %s, want 0 (100%%)", c[3])
	}
	if c := row("push-sum state decomposition [166] (digraph)", "x_i(0)"); !strings.HasSuffix(c[3], "(0%)") || !strings.HasSuffix(c[5], "(100%)") {
		t.Errorf("[166]: one colluder %s, all neighbours %s; want (0%%) and (100%%)", c[3], c[5])
	}
	if c := row("state decomposition [165]", "r_i(0)"); !strings.HasSuffix(c[5], "(0%)") {
		t.Errorf("[165], r_i(0), all neighbours: %s, want (0%%)", c[5])
	}
	if c := row("state decomposition [165]", "r_i(T−1)"); !strings.HasSuffix(c[5], "(100%)") {
		t.Errorf("[165], r_i(T−1), all neighbours: %s, want (100%%)", c[5])
	}
}
