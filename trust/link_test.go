package trust

import (
	"slices"
	"testing"
)

func TestReliabilityEMA(t *testing.T) {
	near(t, "ack", Reliability(0.5, 0.1, true), 0.55, 1e-12)
	near(t, "no ack", Reliability(0.5, 0.1, false), 0.45, 1e-12)
	p := 0.5
	for range 3 {
		p = Reliability(p, 0.1, true)
	}
	near(t, "three acks", p, 1-0.5*0.9*0.9*0.9, 1e-12) // 0.6355
}

// TestDirectNeighbors follows N_dir and p_ij through a few rounds: the
// initial neighbors are expected, a peer heard joins, a peer silent for
// Timeout = 3 rounds leaves.
func TestDirectNeighbors(t *testing.T) {
	s := newState(t, 0, 1, 2)
	begin(t, s, 1)
	mustHear(t, s, 1, 3) // 2 silent, 3 new
	end(t, s)
	if got := s.DirectNeighbors(); !slices.Equal(got, []uint32{1, 2, 3}) {
		t.Fatalf("N_dir = %v", got)
	}
	near(t, "p01", s.Reliability(1), 0.55, 1e-12)
	near(t, "p02", s.Reliability(2), 0.45, 1e-12)
	near(t, "p03", s.Reliability(3), 0.55, 1e-12)
	near(t, "p04 (never heard)", s.Reliability(4), 0.5, 0)
	for r := uint64(2); r <= 3; r++ {
		begin(t, s, r)
		mustHear(t, s, 1)
		end(t, s)
	}
	// 2 silent for rounds 1, 2, 3: dropped; 3 silent for 2, 3: kept.
	if got := s.DirectNeighbors(); !slices.Equal(got, []uint32{1, 3}) {
		t.Fatalf("N_dir after timeout = %v", got)
	}
	near(t, "p02 after 3 misses", s.Reliability(2), 0.5*0.9*0.9*0.9, 1e-12)
	begin(t, s, 4)
	end(t, s)
	near(t, "p02 not expected any more", s.Reliability(2), 0.5*0.9*0.9*0.9, 1e-12)

	// Screening: p >= 0.1 and T >= 0.25. Every neighbor has T = 0.5 here.
	if got := s.Screened(); !slices.Equal(got, []uint32{1}) {
		t.Fatalf("screened = %v, want [1] (3 left N_dir)", got)
	}
}

func TestRoundSequence(t *testing.T) {
	s := newState(t, 0, 1)
	if err := s.Ingest(1, signed(t, 1, 0, 1)); err == nil {
		t.Error("Ingest before BeginRound accepted")
	}
	if _, err := s.EndRound(); err == nil {
		t.Error("EndRound before BeginRound accepted")
	}
	begin(t, s, 5)
	if err := s.BeginRound(6); err == nil {
		t.Error("BeginRound inside a round accepted")
	}
	end(t, s)
	if err := s.BeginRound(5); err == nil {
		t.Error("repeated round accepted")
	}
	if _, err := New(testIDs[0], testDir, []uint32{0}, DefaultConfig()); err == nil {
		t.Error("self as neighbor accepted")
	}
	if _, err := New(testIDs[0], testDir, []uint32{99}, DefaultConfig()); err == nil {
		t.Error("unknown neighbor accepted")
	}
}

func TestOwnClaim(t *testing.T) {
	s := newState(t, 0, 1)
	begin(t, s, 3)
	c, err := s.OwnClaim([]uint32{5, 2, 0, 5})
	if err != nil {
		t.Fatal(err)
	}
	if c.Source != 0 || c.Round != 3 || c.Version != 1 || c.Hop != 0 || !slices.Equal(c.Neighbors, []uint32{2, 5}) {
		t.Fatalf("claim %+v", c)
	}
	// A peer accepts it.
	p := newState(t, 2, 0)
	begin(t, p, 3)
	mustIngest(t, p, 0, &c)
	c2, _ := s.OwnClaim(nil)
	if c2.Version != 2 {
		t.Errorf("second version %d", c2.Version)
	}
}
