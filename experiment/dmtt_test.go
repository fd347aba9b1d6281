package experiment

import (
	"runtime"
	"testing"

	"github.com/trellis-fl/trellis/adversary"
	"github.com/trellis-fl/trellis/data"
	"github.com/trellis-fl/trellis/metrics"
	"github.com/trellis-fl/trellis/nn"
	"github.com/trellis-fl/trellis/sim"
	"github.com/trellis-fl/trellis/strategy"
	"github.com/trellis-fl/trellis/topology"
	"github.com/trellis-fl/trellis/trust"
)

// dmttSetup is a small DMTT experiment: n nodes on the spec's mobility
// graph (with the connectivity guarantee), 200 MNIST images per node, an
// evidential MLP 784-16-10, one local epoch, Gaussian σ = 10 by idle
// Byzantine nodes that also lie about topology.
func dmttSetup(t testing.TB, n, rounds int, byz float64, claims adversary.ClaimAttack, mk func() strategy.Strategy) Setup {
	tc := trust.DefaultConfig()
	return Setup{
		Data: loadMNIST(t), Pool: 200 * n, Nodes: n, Rounds: rounds, Seed: 42,
		Partition: data.PartitionConfig{Method: data.Dirichlet, Alpha: 0.5},
		Fractions: data.Fractions{Train: 0.7, Val: 0.1, Test: 0.2},
		Model:     nn.Spec{Kind: "mlp", Input: []int{1, 28, 28}, Hidden: []int{16}, Classes: 10, Head: "evidential"},
		Optimizer: nn.OptimizerSpec{Name: "sgd", LR: 0.01},
		Graph: func(n int, s uint64) (topology.Dynamic, error) {
			mc := topology.DefaultMobility(n, s)
			mc.Connect = true
			return topology.NewMobility(mc)
		},
		Strategy:          mk,
		ByzantineFraction: byz, Attack: gaussian(t, 10), SameForAll: true,
		Trust: &tc, ByzantineIdle: true, Claims: claims,
	}
}

func runSetup(t *testing.T, s Setup) []*metrics.Round {
	t.Helper()
	var rounds []*metrics.Round
	if err := s.Run(t.Context(), metrics.SinkFunc(func(r *metrics.Round) error { rounds = append(rounds, r); return nil })); err != nil {
		t.Fatal(err)
	}
	return rounds
}

func dmtt() strategy.Strategy { return strategy.NewDMTT() }

// TestClaimAttacksThroughTheSimulator: Byzantine nodes forge claims in an
// honest neighbor's name, replay their previous claim and flood beyond the
// budget; honest nodes refuse and count all three, and DMTT gives the
// Byzantine senders no weight.
func TestClaimAttacksThroughTheSimulator(t *testing.T) {
	rs := runSetup(t, dmttSetup(t, 12, 4, 0.25, adversary.ClaimAttack{Liar: adversary.LiarOmission, Forge: true, Replay: true, Flood: true}, dmtt))
	got := map[string]uint64{}
	for _, r := range rs {
		if r.Trust == nil {
			t.Fatalf("round %d: no trust diagnostics", r.Round)
		}
		for k, v := range r.Trust.ClaimsRejected {
			got[k] += v
		}
		if r.DeltaMax != 0 {
			t.Errorf("round %d: delta_max = %v", r.Round, r.DeltaMax)
		}
		if r.Trust.ClaimBytesPerNode <= 0 {
			t.Errorf("round %d: no claim bytes", r.Round)
		}
	}
	for _, reason := range []trust.Reason{trust.Forged, trust.Replay, trust.OverBudget} {
		if got[reason.String()] == 0 {
			t.Errorf("no %s claim refused (refusals: %v)", reason, got)
		}
	}
	l := last(rs).Trust
	if l.NeighborByzantine == nil || l.NeighborHonest == nil || *l.NeighborByzantine >= *l.NeighborHonest {
		t.Errorf("trust in Byzantine neighbors not below honest: %+v", l)
	}
}

// TestDMTTBitIdenticalAcrossWorkers: with the trust layer on, claims in
// flight and a shared verification cache, the metrics do not depend on
// GOMAXPROCS, the worker count or the wire round trip.
func TestDMTTBitIdenticalAcrossWorkers(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	var want string
	for _, c := range []struct {
		procs, workers int
		wire           bool
	}{{1, 1, false}, {4, 3, true}} {
		runtime.GOMAXPROCS(c.procs)
		s := dmttSetup(t, 10, 3, 0.2, adversary.ClaimAttack{Liar: adversary.LiarOmission, Flood: true}, dmtt)
		s.Workers, s.WireRoundTrip = c.workers, c.wire
		got := metricsJSON(t, runSetup(t, s))
		if want == "" {
			want = got
		} else if got != want {
			t.Fatalf("GOMAXPROCS=%d workers=%d wire=%v: metrics differ", c.procs, c.workers, c.wire)
		}
	}
}

// TestMemosChangeNoRecord: the simulator's shared memos (verification
// cache, digest memo) change no metric. FedAvg broadcasts its model (the
// digest memo's case), DMTT sends one vector per peer; Byzantine nodes'
// vectors are crafted per recipient and re-signed, and their claims flood.
// The records with the memos are those without them (that the memos are
// used is sim's TestMemosAreUsed).
func TestMemosChangeNoRecord(t *testing.T) {
	for name, mk := range map[string]func() strategy.Strategy{"fedavg": fedavg, "dmtt": dmtt} {
		var want string
		for _, off := range []bool{false, true} {
			s := dmttSetup(t, 10, 3, 0.2, adversary.ClaimAttack{Liar: adversary.LiarOmission, Flood: true}, mk)
			s.Workers = 3
			b, err := s.Build()
			if err != nil {
				t.Fatal(err)
			}
			b.Config.NoMemos = off
			var rs []*metrics.Round
			if err := sim.Run(t.Context(), b.Config, b.Nodes, metrics.SinkFunc(func(r *metrics.Round) error { rs = append(rs, r); return nil })); err != nil {
				t.Fatal(err)
			}
			got := metricsJSON(t, rs)
			if want == "" {
				want = got
			} else if got != want {
				t.Fatalf("%s: metrics differ with and without the memos", name)
			}
		}
	}
}

// TestOmissionLiarFallsBelowTheGate measures the topology screen: at
// 30 % Byzantine omission liars on 20 mobile nodes, the mean trust honest
// nodes hold in their Byzantine neighbors is below τ_trust = 0.25 within 10
// rounds, and the honest neighbors stay above it.
func TestOmissionLiarFallsBelowTheGate(t *testing.T) {
	s := dmttSetup(t, 20, 10, 0.3, adversary.ClaimAttack{Liar: adversary.LiarOmission}, func() strategy.Strategy { return strategy.Local{} })
	s.Pool = 20 * 40 // the strategy is local: the data barely matters
	rs := runSetup(t, s)
	for _, r := range rs {
		tr := r.Trust
		t.Logf("round %d: neighbors honest %.3f Byzantine %.3f, screened Byzantine %.3f", r.Round, *tr.NeighborHonest, *tr.NeighborByzantine, *tr.ScreenedByzantine)
	}
	l := last(rs).Trust
	if *l.NeighborByzantine >= 0.25 || *l.NeighborHonest < 0.25 {
		t.Errorf("round 10: trust in Byzantine neighbors %.3f, honest %.3f; want Byzantine < 0.25 <= honest", *l.NeighborByzantine, *l.NeighborHonest)
	}
}
