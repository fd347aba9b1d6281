package main

import (
	"strings"
	"testing"

	"github.com/trellis-fl/trellis/internal/capture"
)

// A quick pass of the program the results page was printed by: its main
// table for logistic regression, two targets a cell. Without protection
// the closed form gives one image back exactly, every label right.
func TestQuickPass(t *testing.T) {
	var err error
	out := capture.Stdout(t, func() { err = run(2, 20, "256,128", 0.05, 1, 2, "logreg", "main") })
	if err != nil {
		t.Fatal(err)
	}
	rows := 0
	for _, line := range strings.Split(out, "\n") {
		if !strings.HasPrefix(line, "| logreg |") {
			continue
		}
		rows++
		c := strings.Split(line, "|")
		if strings.TrimSpace(c[2]) == "none" && strings.TrimSpace(c[3]) == "1" {
			if label, mse := strings.TrimSpace(c[5]), strings.TrimSpace(c[6]); label != "100 %" || mse != "0.0000" {
				t.Errorf("no protection, one image: label recovery %s, MSE %s; want 100 %% and 0.0000\n%s", label, mse, out)
			}
		}
	}
	if rows != 12 {
		t.Fatalf("%d logreg rows, want 12 (6 protections × 2 batch sizes):\n%s", rows, out)
	}
}
