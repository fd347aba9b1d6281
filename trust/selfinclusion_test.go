package trust

import "testing"

// TestSelfInclusion: node 0 hears 1, 2, 3 this round.
//
//	1's claim for this round lists 0          -> d = 1
//	2's claim for this round omits 0          -> x = 1
//	3 sent no claim                           -> no self-inclusion evidence
//	4 (not heard) lists 0                     -> not evidence either way
//	5 (heard) has only a claim of last round  -> no self-inclusion evidence
//
// Each accepted claim not contradicted is also fresh (f = 1); 2's is not.
func TestSelfInclusion(t *testing.T) {
	s := newState(t, 0, 1, 2, 3, 5)
	begin(t, s, 1)
	mustIngest(t, s, 5, signed(t, 5, 0, 1, 0))
	end(t, s)

	begin(t, s, 2)
	mustHear(t, s, 1, 2, 3, 5)
	mustIngest(t, s, 1, signed(t, 1, 2, 1, 0, 2))
	mustIngest(t, s, 2, signed(t, 2, 2, 1, 3))
	mustIngest(t, s, 1, hop(signed(t, 4, 2, 1, 0), 1))
	rep := end(t, s)
	for j, want := range map[uint32]Evidence{1: {D: 1, F: 1}, 2: {X: 1}, 3: {}, 4: {F: 1}, 5: {}} {
		if got := evidenceOf(rep, j); got != want {
			t.Errorf("evidence of %d: %+v, want %+v", j, got, want)
		}
	}
	// Beta: 1 from (1,1) with d=1, f=1: α = 0.9+1+0.25 = 2.15, β = 0.9.
	near(t, "T(1)", s.Trust(1), NewBeta().Update(Evidence{D: 1, F: 1}, &s.cfg).Trust(&s.cfg), 0)
	near(t, "α(1)", s.Peer(1).Beta.Alpha, 2.15, 1e-12)
	near(t, "β(2)", s.Peer(2).Beta.Beta, 1.9, 1e-12)
	near(t, "T(3) untouched", s.Trust(3), 0.5, 0)
}

// TestOmissionLiarFallsBelowGate: a direct neighbor that delivers every
// round but never lists node 0 (the omission liar) gets x = 1, f = 1 each
// round, and no f for its contradicted claim; its trust falls below
// τ_trust = 0.25 in round 2, while an honest neighbor's rises. Hand values:
// (α, β) = (0.9, 1.9), T = 0.9/2.8 = 0.321429; then (0.81, 2.71),
// T = 0.81/3.52 = 0.230114.
func TestOmissionLiarFallsBelowGate(t *testing.T) {
	s := newState(t, 0, 1, 2)
	below := 0
	for r := uint64(1); r <= 10; r++ {
		begin(t, s, r)
		mustHear(t, s, 1, 2)
		mustIngest(t, s, 1, signed(t, 1, r, r, 0))
		mustIngest(t, s, 2, signed(t, 2, r, r, 3)) // the liar omits 0
		end(t, s)
		switch r {
		case 1:
			near(t, "T liar round 1", s.Trust(2), 0.321429, 1e-6)
		case 2:
			near(t, "T liar round 2", s.Trust(2), 0.230114, 1e-6)
		}
		if below == 0 && s.Trust(2) < s.cfg.TauTrust {
			below = int(r)
		}
	}
	if below != 2 {
		t.Fatalf("liar trust %.4f after 10 rounds, gate %.2f", s.Trust(2), s.cfg.TauTrust)
	}
	if s.Trust(1) < 0.9 {
		t.Errorf("honest trust %.4f after 10 rounds", s.Trust(1))
	}
	t.Logf("liar below the gate in round %d; after 10 rounds T(honest) = %.4f, T(liar) = %.4f", below, s.Trust(1), s.Trust(2))
	if got := s.Screened(); len(got) != 1 || got[0] != 1 {
		t.Errorf("screened %v, want [1]", got)
	}
}
