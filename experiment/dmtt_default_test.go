package experiment

import (
	"testing"

	"github.com/trellis-fl/trellis/config"
	"github.com/trellis-fl/trellis/metrics"
)

// TestDMTTDefaultScreensOmissionLiars: a DMTT config that sets nothing
// about the trust layer screens omission liars. 30 nodes on the mobility
// graph, 30 % Byzantine nodes claiming only their coalition, 15 rounds:
// at the end honest nodes' mean topology trust in their Byzantine
// neighbours is at most 0.05, in their honest neighbours at least 0.8,
// and no Byzantine neighbour passes the screen. The paper's rules as
// written (trust.rules = "spec") hold about 0.16, and a fifth of the
// Byzantine neighbours pass. The models barely matter (the liars are
// idle, the trust layer reads claims only): a small MLP on 40 images a
// node keeps the run short.
func TestDMTTDefaultScreensOmissionLiars(t *testing.T) {
	if testing.Short() {
		t.Skip("a 15-round DMTT run of 30 nodes")
	}
	const text = `
nodes = 30
rounds = 15
final_rounds = 1
seed = 42

[data]
samples = 1200

[model]
hidden = [16]
head = "evidential"

[topology]
kind = "mobility"

[evaluation]
global_test = 0

[adversary]
fraction = 0.3
liar = "omission"
idle = true

[strategy]
name = "dmtt"
`
	c, err := config.Parse([]byte(text), "dmtt-default")
	if err != nil {
		t.Fatal(err)
	}
	s, err := SetupOf(c, loadMNIST(t))
	if err != nil {
		t.Fatal(err)
	}
	var final *metrics.Round
	if err := s.Run(t.Context(), metrics.SinkFunc(func(r *metrics.Round) error { final = r; return nil })); err != nil {
		t.Fatal(err)
	}
	tr := final.Trust
	if tr == nil || tr.NeighborHonest == nil || tr.NeighborByzantine == nil || tr.ScreenedByzantine == nil {
		t.Fatalf("round %d: no trust diagnostics over honest and Byzantine neighbours: %+v", final.Round, tr)
	}
	t.Logf("round %d: trust in honest neighbours %.3f, in Byzantine neighbours %.3f; Byzantine neighbours passing the screen %.3f",
		final.Round, *tr.NeighborHonest, *tr.NeighborByzantine, *tr.ScreenedByzantine)
	if *tr.NeighborByzantine > 0.05 {
		t.Errorf("mean trust in Byzantine neighbours %.3f, want ≤ 0.05", *tr.NeighborByzantine)
	}
	if *tr.NeighborHonest < 0.8 {
		t.Errorf("mean trust in honest neighbours %.3f, want ≥ 0.8", *tr.NeighborHonest)
	}
	if *tr.ScreenedByzantine != 0 {
		t.Errorf("%.3f of (honest node, Byzantine neighbour) pairs pass the screen, want none", *tr.ScreenedByzantine)
	}
}
