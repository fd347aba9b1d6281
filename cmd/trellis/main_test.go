package main

import (
	"bytes"
	"strings"
	"testing"
)

func TestDemoTrainsAndReports(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a small federated experiment on MNIST")
	}
	var out, errb bytes.Buffer
	if err := run([]string{"demo", "-rounds", "3", "-samples", "3000"}, &out, &errb); err != nil {
		t.Fatalf("demo: %v\n%s", err, errb.String())
	}
	for _, want := range []string{"local-only", "fedavg", "median", "\n    3 ", "delta_max"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("demo output lacks %q:\n%s", want, out.String())
		}
	}
}

func TestBadArgumentsAreClearErrors(t *testing.T) {
	for _, args := range [][]string{{"nosuch"}, {"demo", "-nodes", "1"}, {"demo", "-rounds", "0"}, {"demo", "-byzantine", "1"}, {"demo", "-sigma", "-1"}, {"demo", "-samples", "5"}} {
		var out, errb bytes.Buffer
		if err := run(args, &out, &errb); err == nil {
			t.Errorf("%v accepted", args)
		}
	}
	var out bytes.Buffer
	if err := run(nil, &out, &out); err != nil || !strings.Contains(out.String(), "demo") {
		t.Errorf("usage: %v %q", err, out.String())
	}
}
