package scale

import (
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/trellis-fl/trellis/config"
	"github.com/trellis-fl/trellis/experiment"
)

// DNSName makes any config name an object name Kubernetes accepts (checked
// with its own validator) and K8s takes, of at most 40 characters.
func TestDNSName(t *testing.T) {
	for in, want := range map[string]string{
		"quickstart":                   "quickstart",
		"My_Big.Run-2":                 "my-big-run-2",
		"--edge--":                     "edge",
		"!!!":                          "trellis",
		"":                             "trellis",
		"Ünïcode name":                 "n--code-name",          // byte by byte: a two-byte letter makes two -
		strings.Repeat("a", 39) + "-b": strings.Repeat("a", 39), // cut at 40, then the trailing - trimmed
		strings.Repeat("x", 50):        strings.Repeat("x", 40),
	} {
		got := DNSName(in)
		if got != want {
			t.Errorf("DNSName(%q) = %q, want %q", in, got, want)
		}
		if errs := validation.IsDNS1123Label(got); len(errs) > 0 || len(got) > 40 {
			t.Errorf("DNSName(%q) = %q: not a DNS label of at most 40 characters: %v", in, got, errs)
		}
		k := K8s{Name: got, Image: "i", Claim: "c", Config: []byte("x")}
		if err := k.check(); err != nil {
			t.Errorf("DNSName(%q) = %q refused: %v", in, got, err)
		}
	}
}

// The pods' memory requests are the estimates' expected peaks in whole MiB,
// rounded up: a sweep's largest run, a node process, the monitor.
func TestMemoryRequestsFromTheEstimate(t *testing.T) {
	mib := func(b int64) string { return fmt.Sprintf("%dMi", (b+(1<<20)-1)>>20) }
	c := config.Default()
	c.Nodes, c.Rounds = 4, 1
	c.Sweep.Grid = map[string][]any{"nodes": {4, 12, 8}}
	got, err := SweepMemoryRequest(c)
	if err != nil {
		t.Fatal(err)
	}
	var peak, live int64
	for _, n := range []int{4, 12, 8} {
		x := c
		x.Sweep = config.Sweep{}
		x.Nodes = n
		e, err := experiment.EstimateOf(x)
		if err != nil {
			t.Fatal(err)
		}
		if e.Live > live {
			live, peak = e.Live, e.Peak
		}
	}
	if got != mib(peak) {
		t.Errorf("sweep request %s, want %s (the 12-node run's peak)", got, mib(peak))
	}

	c.Sweep = config.Sweep{}
	node, err := experiment.EstimateNodeProcess(c, experiment.DataShape{Name: "MNIST", Train: 60000, Test: 10000, Shape: []int{1, 28, 28}, Classes: 10})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := NodeMemoryRequest(c); err != nil || got != mib(node.Peak) {
		t.Errorf("node request %s (%v), want %s", got, err, mib(node.Peak))
	}
	if got := MonitorMemoryRequest(c); got != mib(experiment.EstimateMonitor(c).Peak) {
		t.Errorf("monitor request %s, want %s", got, mib(experiment.EstimateMonitor(c).Peak))
	}
	c.Data.Dir = t.TempDir() // MNIST files that are not there: the shape is unknown
	if _, err := NodeMemoryRequest(c); err == nil {
		t.Error("a node request without a dataset to estimate from")
	}
}
