package main

import (
	"strconv"
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

// A quick pass of the rounds and local tables for logistic regression,
// one target a cell, 5 DLG iterations. The closed form and iDLG are exact
// for one image at any parameters, so every trained model's one-image row
// shows 100 % and MSE 0; training raises the test accuracy; and at E = 1
// the unrolled attack is the baseline, so their rows agree (the same
// dummies start both).
func TestQuickPassLater(t *testing.T) {
	var err error
	out := capture.Stdout(t, func() { err = run(1, 5, "256,128", 0.05, 1, 2, "logreg", "rounds,local") })
	if err != nil {
		t.Fatal(err)
	}
	var rounds, local int
	var acc []float64
	var e1 []string
	for _, line := range strings.Split(out, "\n") {
		if !strings.HasPrefix(line, "| logreg |") {
			continue
		}
		c := strings.Split(line, "|")
		for i := range c {
			c[i] = strings.TrimSpace(c[i])
		}
		switch {
		case c[3] == "distinct" || c[3] == "one": // | model | E | batches | attack | labels | mse | …
			local++
			if c[2] == "1" {
				e1 = append(e1, strings.Join(c[5:11], "|"))
			}
		default: // | model | rounds | test acc. | batch | inversion | labels | mse | …
			rounds++
			if c[4] != "1" {
				continue
			}
			a, err := strconv.ParseFloat(strings.TrimSuffix(c[3], " %"), 64)
			if err != nil {
				t.Fatalf("test accuracy %q: %v", c[3], err)
			}
			acc = append(acc, a)
			if c[6] != "100 %" || c[7] != "0.0000" {
				t.Errorf("%s rounds, one image: label recovery %s, MSE %s; want 100 %% and 0.0000", c[2], c[6], c[7])
			}
		}
	}
	if rounds != 9 || local != 20 {
		t.Fatalf("%d rounds rows (want 9: 3 rounds × (2 batch sizes + the batch with true labels)), %d local rows (want 20: 5 settings × 4 attacks):\n%s", rounds, local, out)
	}
	if len(acc) != 3 || acc[0] >= acc[2] {
		t.Errorf("test accuracy over 0, 5, 20 rounds: %v; want it to rise", acc)
	}
	if len(e1) != 4 || e1[0] != e1[1] || e1[2] != e1[3] {
		t.Errorf("E = 1, baseline and unrolled, with recovered and with true labels: %q; want the same numbers in pairs", e1)
	}
}
