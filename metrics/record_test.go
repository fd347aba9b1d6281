package metrics

import (
	"math"
	"testing"
)

func TestSummarizeHonestAggregates(t *testing.T) {
	r := &Round{Evaluated: true, Nodes: []NodeRound{
		{Node: 0, LocalAcc: 0.8, GlobalAcc: 0.7, LocalLoss: 1, ByzWeight: 0.25, BytesSent: 10},
		{Node: 1, LocalAcc: 0.6, GlobalAcc: 0.5, LocalLoss: 3, ByzWeight: 0.5, BytesSent: 10},
		{Node: 2, Byzantine: true, LocalAcc: 0.1, LocalLoss: 9, ByzWeight: 1, BytesSent: 5},
	}}
	r.Summarize()
	near := func(what string, got, want float64) {
		if math.Abs(got-want) > 1e-12 {
			t.Errorf("%s = %v, want %v", what, got, want)
		}
	}
	near("honest local acc", r.HonestLocalAcc, 0.7)
	near("honest local acc std", r.HonestLocalAccStd, 0.1)
	near("honest global acc", r.HonestGlobalAcc, 0.6)
	near("all acc", r.AllAcc, 0.5)
	near("honest loss", r.HonestLoss, 2)
	near("delta_max (honest nodes only)", r.DeltaMax, 0.5)
	near("mean byzantine weight", r.MeanByzWeight, 0.375)
	if r.BytesSent != 25 {
		t.Errorf("bytes %d, want 25", r.BytesSent)
	}
}
