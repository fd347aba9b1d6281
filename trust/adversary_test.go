package trust

import (
	"testing"

	"github.com/trellis-fl/trellis/wire"
)

// TestForgedClaim: node 3 forwards a claim in node 5's name that 5 never
// signed. It is refused, charged to 3 (q = 1: from (1,1), α = 0.9,
// β = 1.9, T = 0.9/2.8 = 0.321429), and 5 is untouched.
func TestForgedClaim(t *testing.T) {
	s := newState(t, 0, 3)
	begin(t, s, 1)
	forged := &wire.Claim{Source: 5, Round: 1, Version: 1, Neighbors: []uint32{0}, Hop: 1}
	if err := wire.SignClaim(forged, testIDs[3]); err == nil {
		t.Fatal("wire signed a claim in another node's name")
	}
	copy(forged.Sig[:], signed(t, 3, 1, 1, 0).Sig[:]) // 3's own signature, wrong key
	rejected(t, s.Ingest(3, forged), Forged, 3)
	rep := end(t, s)
	if got := evidenceOf(rep, 3); got != (Evidence{Q: 1}) {
		t.Errorf("forger's evidence %+v", got)
	}
	near(t, "T(forger)", s.Trust(3), 0.321429, 1e-6)
	near(t, "T(5)", s.Trust(5), 0.5, 0)
	if s.Peer(3).Blamed[Forged] != 1 {
		t.Errorf("blamed %+v", s.Peer(3).Blamed)
	}
	if _, ok := s.EdgeStatus(0, 5); ok || len(s.Forwards()) != 0 {
		t.Error("a forged claim reached the pools or the forwards")
	}
}

// TestReplay: a claim replayed by its source, or by a forwarder outside its
// freshness window, is refused and charged; within the window a forwarded
// older version is merely Superseded (not evidence: delayed forwarding
// does that to honest nodes).
func TestReplay(t *testing.T) {
	s := newState(t, 0, 1, 2)
	v1 := signed(t, 1, 1, 1, 0)
	begin(t, s, 1)
	mustIngest(t, s, 1, v1)
	end(t, s)
	begin(t, s, 2)
	mustIngest(t, s, 1, signed(t, 1, 2, 2, 0))
	rejected(t, s.Ingest(2, hop(v1, 1)), Superseded, 0)
	rejected(t, s.Ingest(1, v1), Replay, 1) // the source re-sends version 1
	rep := end(t, s)
	if got := evidenceOf(rep, 1); got.Q != 1 {
		t.Errorf("replaying source's evidence %+v", got)
	}
	if got := evidenceOf(rep, 2); !got.Empty() {
		t.Errorf("forwarder of a superseded claim charged %+v", got)
	}
	begin(t, s, 4)
	rejected(t, s.Ingest(2, hop(v1, 1)), Stale, 2) // round 1 claim in round 4, max age 2
	rejected(t, s.Ingest(1, signed(t, 1, 5, 9, 0)), Future, 1)
	rep = end(t, s)
	if got := evidenceOf(rep, 2); got != (Evidence{Q: 1}) {
		t.Errorf("stale forwarder's evidence %+v", got)
	}
	if fw := s.Forwards(); len(fw) != 0 {
		t.Errorf("stale or future claims forwarded: %+v", fw)
	}
	st := s.Stats()
	if st.Rejected[Replay] != 1 || st.Rejected[Stale] != 1 || st.Rejected[Superseded] != 1 || st.Rejected[Future] != 1 {
		t.Errorf("stats %+v", st.Rejected)
	}
}

// TestFlooding: a source sending five claims in a round gets two accepted
// (the budget) and three refused as OverBudget, charged to it. Its
// evidence f = 1, q = 3 gives α = 1.15, β = 3.9, T = 1.15/5.05 = 0.227723,
// below τ_trust; an honest source with f = 1 has T = 1.15/2.05 = 0.560976.
func TestFlooding(t *testing.T) {
	s := newState(t, 0, 1, 2)
	begin(t, s, 1)
	mustIngest(t, s, 2, signed(t, 2, 1, 1))
	for v := uint64(1); v <= 5; v++ {
		err := s.Ingest(1, signed(t, 1, 1, v))
		if v <= 2 && err != nil {
			t.Fatalf("version %d: %v", v, err)
		}
		if v > 2 {
			rejected(t, err, OverBudget, 1)
		}
	}
	// Replaying an over-budget claim through a forwarder is not charged to
	// the source again (its version was seen).
	rejected(t, s.Ingest(2, hop(signed(t, 1, 1, 5), 1)), Superseded, 0)
	rep := end(t, s)
	if got := evidenceOf(rep, 1); got != (Evidence{F: 1, Q: 3}) {
		t.Errorf("flooder's evidence %+v", got)
	}
	near(t, "T(flooder)", s.Trust(1), 0.227723, 1e-6)
	near(t, "T(honest)", s.Trust(2), 0.560976, 1e-6)
	if s.Peer(1).Blamed[OverBudget] != 3 {
		t.Errorf("blamed %+v", s.Peer(1).Blamed)
	}
	// The next round the budget is fresh.
	begin(t, s, 2)
	mustIngest(t, s, 1, signed(t, 1, 2, 6))
	end(t, s)
}

// TestEquivocationAndInconsistency: two different claims under one version,
// or a newer version for an older round, are charged to the source.
func TestEquivocationAndInconsistency(t *testing.T) {
	s := newState(t, 0, 1, 2)
	begin(t, s, 2)
	mustIngest(t, s, 1, signed(t, 1, 2, 7, 0))
	rejected(t, s.Ingest(2, hop(signed(t, 1, 2, 7, 0, 2), 1)), Equivocation, 1)
	rejected(t, s.Ingest(1, signed(t, 1, 2, 7, 2)), Equivocation, 1)
	rejected(t, s.Ingest(1, signed(t, 1, 1, 8, 0)), Inconsistent, 1)
	// A bad signature under the current version is a forgery by the sender.
	fake := hop(signed(t, 1, 2, 7, 0), 1)
	fake.Neighbors = []uint32{0, 3}
	rejected(t, s.Ingest(2, fake), Forged, 2)
	rep := end(t, s)
	if got := evidenceOf(rep, 1); got.Q != 3 {
		t.Errorf("equivocating source's evidence %+v", got)
	}
	if got := evidenceOf(rep, 2); got.Q != 1 {
		t.Errorf("forger's evidence %+v", got)
	}
}

// TestMalformed: every structural fault is refused and charged to the peer
// that delivered the claim; nothing reaches the pools.
func TestMalformed(t *testing.T) {
	s := newState(t, 0, 1, 2)
	begin(t, s, 1)
	good := func() *wire.Claim { return signed(t, 1, 1, 1, 0, 3) }
	cases := []struct {
		name   string
		from   uint32
		c      *wire.Claim
		reason Reason
	}{
		{"nil", 2, nil, Malformed},
		{"unknown source", 2, &wire.Claim{Source: 99, Round: 1, Version: 1, Hop: 1}, Malformed},
		{"unsorted", 1, &wire.Claim{Source: 1, Round: 1, Version: 1, Neighbors: []uint32{3, 0}}, Malformed},
		{"repeated", 1, &wire.Claim{Source: 1, Round: 1, Version: 1, Neighbors: []uint32{3, 3}}, Malformed},
		{"self", 1, &wire.Claim{Source: 1, Round: 1, Version: 1, Neighbors: []uint32{1}}, Malformed},
		{"unknown neighbor", 1, &wire.Claim{Source: 1, Round: 1, Version: 1, Neighbors: []uint32{0, 1000}}, Malformed},
		{"hop 0 from a forwarder", 2, good(), BadHop},
		{"hop 1 from the source", 1, hop(good(), 1), BadHop},
		{"hop beyond H", 2, hop(good(), 3), BadHop},
	}
	for _, tc := range cases {
		rejected(t, s.Ingest(tc.from, tc.c), tc.reason, tc.from)
	}
	// Not evidence: unknown sender, the node's own claim coming back.
	rejected(t, s.Ingest(77, good()), UnknownSender, 0)
	own, err := s.OwnClaim([]uint32{1})
	if err != nil {
		t.Fatal(err)
	}
	rejected(t, s.Ingest(1, hop(&own, 1)), Duplicate, 0)
	rep := end(t, s)
	if got := evidenceOf(rep, 1).Q + evidenceOf(rep, 2).Q; got != len(cases) {
		t.Errorf("q events %d, want %d", got, len(cases))
	}
	if len(s.evals) != 0 || s.Stats().Accepted != 0 {
		t.Errorf("malformed claims reached the pools: %+v", s.evals)
	}
}

// TestDuplicatePaths: an honest claim arriving directly and through
// forwarders is accepted once, charges nobody, and weighs as its shortest
// path whichever copy came first.
func TestDuplicatePaths(t *testing.T) {
	s := newState(t, 0, 1, 2, 3)
	c := signed(t, 1, 1, 1, 0, 4)
	begin(t, s, 1)
	mustIngest(t, s, 2, hop(c, 2))
	rejected(t, s.Ingest(3, hop(c, 1)), Duplicate, 0)
	rejected(t, s.Ingest(1, c), Duplicate, 0)
	rejected(t, s.Ingest(2, hop(c, 1)), Duplicate, 0)
	rep := end(t, s)
	st, _ := s.EdgeStatus(1, 4)
	near(t, "ψ with the shortest path", st.Pools.Support, 0.5, 0)
	for _, u := range rep.Updates {
		if u.Evidence.Q != 0 {
			t.Errorf("peer %d charged %+v", u.Peer, u.Evidence)
		}
	}
	if fw := s.Forwards(); len(fw) != 1 || fw[0].Hop != 1 {
		t.Errorf("forwards %+v", fw)
	}
}

// TestObserveRejected: a wire.Validator rejection the sender provably
// signed, about a claim, is q evidence; other reasons are not.
func TestObserveRejected(t *testing.T) {
	s := newState(t, 0, 1)
	begin(t, s, 1)
	if !s.ObserveRejected(1, wire.BadClaimSignature) || !s.ObserveRejected(1, wire.UnsortedNeighbors) {
		t.Error("signed claim rejection not counted")
	}
	for _, r := range []wire.Reason{wire.BadSignature, wire.Replay, wire.NonFinite, wire.StaleRound} {
		if s.ObserveRejected(1, r) {
			t.Errorf("%s counted as topology evidence", r)
		}
	}
	if s.ObserveRejected(99, wire.BadClaimSignature) {
		t.Error("unknown sender counted")
	}
	rep := end(t, s)
	if got := evidenceOf(rep, 1); got != (Evidence{Q: 2}) {
		t.Errorf("evidence %+v", got)
	}
}
