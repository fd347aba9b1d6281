package main

import (
	"bytes"
	"strings"
	"testing"
)

func TestDemoTrainsAndReports(t *testing.T) {
	if testing.Short() {
		t.Skip("trains one epoch on MNIST")
	}
	var out, errb bytes.Buffer
	if err := run([]string{"demo"}, &out, &errb); err != nil {
		t.Fatalf("demo: %v\n%s", err, errb.String())
	}
	if !strings.Contains(out.String(), "epoch 1/1") || !strings.Contains(out.String(), "test accuracy 9") {
		t.Errorf("demo output lacks an epoch line with a 9x%% accuracy:\n%s", out.String())
	}
}

func TestBadArgumentsAreClearErrors(t *testing.T) {
	for _, args := range [][]string{{"nosuch"}, {"demo", "-model", "vgg"}, {"demo", "-epochs", "0"}} {
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
