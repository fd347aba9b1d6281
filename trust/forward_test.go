package trust

import (
	"testing"

	"github.com/trellis-fl/trellis/wire"
)

func TestForwardDecision(t *testing.T) {
	c := DefaultConfig() // τ_fwd = 0.3, budget 2, H = 2
	for _, tc := range []struct {
		hop   uint8
		trust float64
		used  int
		want  ForwardReason
	}{
		{0, 0.5, 0, Forward},
		{1, 0.3, 1, Forward},
		{1, 0.2999, 0, LowTrust},
		{0, 0.9, 2, BudgetSpent},
		{2, 0.9, 0, HopLimit},
		{1, 0.9, 0, Forward},
	} {
		if got := ForwardDecision(tc.hop, tc.trust, tc.used, &c); got != tc.want {
			t.Errorf("hop %d trust %v used %d: %s, want %s", tc.hop, tc.trust, tc.used, got, tc.want)
		}
	}
}

// TestForwards: what node 0 forwards after a round, every source at the
// prior trust 0.5 >= τ_fwd.
func TestForwards(t *testing.T) {
	s := newState(t, 0, 1, 2, 3)
	begin(t, s, 1)
	// 1 and 4 attest each other (no conflict, so 4 keeps T >= τ_fwd even
	// after its over-budget claim: f = c = q = 1 gives T = 1.65/3.55).
	mustIngest(t, s, 1, signed(t, 1, 1, 1, 0, 4))      // hop 0: forwarded at hop 1
	mustIngest(t, s, 3, hop(signed(t, 2, 1, 1, 3), 2)) // hop 2 = H: not forwarded
	mustIngest(t, s, 1, hop(signed(t, 4, 1, 1, 1), 1)) // two versions of 4 this round:
	mustIngest(t, s, 1, hop(signed(t, 4, 1, 2, 1), 1)) // both forwarded (budget 2)
	err := s.Ingest(1, hop(signed(t, 4, 1, 3, 1), 1))  // a third is over budget
	rejected(t, err, OverBudget, 4)
	forged := hop(signed(t, 5, 1, 1, 3), 1)
	forged.Neighbors = []uint32{2, 3} // the signature no longer covers the list
	rejected(t, s.Ingest(3, forged), Forged, 3)
	if s.Forwards() != nil {
		t.Error("forwards while the round is open")
	}
	end(t, s)
	near(t, "T(4)", s.Trust(4), 1.65/3.55, 1e-12)
	fw := s.Forwards()
	type key struct {
		src uint32
		ver uint64
		hop uint8
	}
	var got []key
	for _, c := range fw {
		got = append(got, key{c.Source, c.Version, c.Hop})
		if !wire.VerifyClaim(&c, testIDs[c.Source].Public()) {
			t.Errorf("forwarded claim of %d no longer verifies", c.Source)
		}
	}
	want := []key{{1, 1, 1}, {4, 1, 2}, {4, 2, 2}}
	if len(got) != len(want) {
		t.Fatalf("forwards %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("forwards %v, want %v", got, want)
		}
	}
	st := s.Stats()
	if st.Refused[HopLimit] != 1 || st.Forwarded != 3 || st.Rejected[OverBudget] != 1 || st.Rejected[Forged] != 1 {
		t.Errorf("stats %+v", st)
	}
}

// TestForwardLowTrust: a source contradicted by direct observation every
// round (x = 1) is forwarded while T >= 0.3 and refused once its trust is
// below: T = 0.9/2.8 = 0.321429, then 0.230114 (the decision uses the trust
// after the round's update).
func TestForwardLowTrust(t *testing.T) {
	s := newState(t, 0, 6)
	b := NewBeta()
	for r := uint64(1); r <= 3; r++ {
		begin(t, s, r)
		mustHear(t, s, 6)
		mustIngest(t, s, 6, signed(t, 6, r, r, 2))
		end(t, s)
		b = b.Update(Evidence{X: 1}, &s.cfg)
		near(t, "T", s.Trust(6), b.Trust(&s.cfg), 0)
		n := len(s.Forwards())
		if want := b.Trust(&s.cfg) >= 0.3; (n == 1) != want {
			t.Errorf("round %d: T = %.4f, %d forwards", r, s.Trust(6), n)
		}
	}
	near(t, "T round 1", NewBeta().Update(Evidence{X: 1}, &s.cfg).Trust(&s.cfg), 0.321429, 1e-6)
	if s.Stats().Refused[LowTrust] != 2 || s.Stats().Forwarded != 1 {
		t.Errorf("stats %+v", s.Stats())
	}
}
