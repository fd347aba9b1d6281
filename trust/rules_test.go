package trust

import "testing"

// withRules returns node self's state with the given rules.
func withRules(t *testing.T, r Rules, self uint32, neighbors ...uint32) *State {
	t.Helper()
	cfg := DefaultConfig()
	cfg.Rules = r
	s, err := New(testIDs[self], testDir, neighbors, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestConflictRule: node 3 delivers to 0 but its claim omits 0 (x): under
// Rules.Conflict it is no witness, so the edge 3–4 it attests with 4 (4's
// claim forwarded by 1) lacks the second witness and stays out of the view,
// and 3 earns no f. Under the paper's rules the edge enters (χ = 1, m = 2).
func TestConflictRule(t *testing.T) {
	for _, conflict := range []bool{false, true} {
		s := withRules(t, Rules{Conflict: conflict}, 0, 1, 3)
		begin(t, s, 0)
		mustHear(t, s, 1, 3)
		mustIngest(t, s, 1, signed(t, 1, 0, 1, 0, 4))
		mustIngest(t, s, 3, signed(t, 3, 0, 1, 4)) // omits 0
		mustIngest(t, s, 1, hop(signed(t, 4, 0, 1, 1, 3), 1))
		rep := end(t, s)
		st, ok := s.EdgeStatus(3, 4)
		if !ok {
			t.Fatal("edge 3–4 not evaluated")
		}
		if st.Accepted == conflict {
			t.Errorf("conflict rule %v: edge 3–4 accepted %v (pools %+v)", conflict, st.Accepted, st.Pools)
		}
		if ev := evidenceOf(rep, 3); ev.X != 1 || ev.F != 0 || ev.C != 0 {
			t.Errorf("conflict rule %v: evidence of 3 %+v, want x = 1 only", conflict, ev)
		}
	}
}

// TestIndependentPaths: 4's claim about the edge 3–4 counts as a witness
// only by a path avoiding 3 (Rules.IndependentPaths): delivered by 3 it
// does not, and the edge lacks its second witness; delivered by 1 it does.
func TestIndependentPaths(t *testing.T) {
	for _, via := range []uint32{3, 1} {
		s := withRules(t, Rules{IndependentPaths: true}, 0, 1, 3)
		begin(t, s, 0)
		mustHear(t, s, 1, 3)
		mustIngest(t, s, 1, signed(t, 1, 0, 1, 0))
		mustIngest(t, s, 3, signed(t, 3, 0, 1, 0, 4))
		mustIngest(t, s, via, hop(signed(t, 4, 0, 1, 3), 1))
		end(t, s)
		st, _ := s.EdgeStatus(3, 4)
		if want := via == 1; st.Accepted != want || st.Pools.Supporters != map[bool]int{false: 1, true: 2}[want] {
			t.Errorf("4's claim via %d: accepted %v, pools %+v", via, st.Accepted, st.Pools)
		}
	}
}

// TestQuorumContradiction: node 1 confirms node 0 in rounds 0 and 1
// (d and f each round: T_1 = 0.797) and in round 2 lists 5; 5's claim of the same round
// (forwarded by 1) omits 1, and 1 outweighs 5 (0.797 / (0.797 + 0.5) >=
// τ_add). Under Rules.Quorum 5's claim is contradicted by a trusted quorum
// (z, β = 0.9 + 1, T = 0.9/2.8); under the paper's rules it earns f. A claim
// of 1 from another round is no contradiction (the edge may have formed
// between the rounds). With Rules.Unhopped the dispute goes by trust
// alone: a witness that does not outweigh 5 (1 confirmed only once:
// T_1 = 0.705, 0.705 / 1.205 < 0.6) contradicts nothing. (By the pools,
// 5's copy forwarded by 1 is no witness of the edge 1–5: χ = 1.)
func TestQuorumContradiction(t *testing.T) {
	unhopped := ScreenRules()
	unhopped.Unhopped = true
	for _, c := range []struct {
		rules   Rules
		round1  uint64 // round of 1's claim in round 2
		from    uint64 // first round 1 confirms 0
		want    Evidence
		wantT   float64
		explain string
	}{
		{Rules{}, 2, 0, Evidence{F: 1}, 1.15 / 2.05, "spec rules"},
		{ScreenRules(), 2, 0, Evidence{Z: 1}, 0.9 / 2.8, "same round"},
		{ScreenRules(), 1, 0, Evidence{F: 1}, 1.15 / 2.05, "1's claim of round 1"},
		{unhopped, 2, 0, Evidence{Z: 1}, 0.9 / 2.8, "unhopped"},
		{unhopped, 2, 1, Evidence{F: 1}, 1.15 / 2.05, "unhopped, 1 confirmed once"},
	} {
		s := withRules(t, c.rules, 0, 1)
		for r := c.from; r < 2; r++ {
			begin(t, s, r)
			mustHear(t, s, 1)
			mustIngest(t, s, 1, signed(t, 1, r, r+1, 0))
			end(t, s)
		}
		begin(t, s, 2)
		mustHear(t, s, 1)
		mustIngest(t, s, 1, signed(t, 1, c.round1, 3, 0, 5))
		mustIngest(t, s, 1, hop(signed(t, 5, 2, 1, 6), 1))
		rep := end(t, s)
		if got := evidenceOf(rep, 5); got != c.want {
			t.Errorf("%s: evidence of 5 %+v, want %+v", c.explain, got, c.want)
		}
		near(t, c.explain+": T(5)", s.Trust(5), c.wantT, 1e-9)
	}
}

// TestDisjointPaths: in high-assurance mode with k = 1 the edge 3–4 needs
// support through 2 internally node-disjoint paths. 3's claim comes
// directly (one path) and 4's through forwarder 1: two paths. Through 3
// alone (the endpoint) 4's copy is no separate path and the edge stays out.
func TestDisjointPaths(t *testing.T) {
	for _, c := range []struct {
		via   []uint32
		paths int
		want  bool
	}{{[]uint32{1}, 2, true}, {[]uint32{1, 2}, 3, true}} {
		s := withRules(t, Rules{DisjointPaths: 1}, 0, 1, 2, 3)
		begin(t, s, 0)
		mustHear(t, s, 1, 2, 3)
		mustIngest(t, s, 3, signed(t, 3, 0, 1, 0, 4))
		c4 := signed(t, 4, 0, 1, 3)
		for k, f := range c.via {
			if k == 0 {
				mustIngest(t, s, f, hop(c4, 1))
			} else {
				rejected(t, s.Ingest(f, hop(c4, 1)), Duplicate, 0)
			}
		}
		end(t, s)
		st, _ := s.EdgeStatus(3, 4)
		if st.Pools.Paths != c.paths || st.Accepted != c.want {
			t.Errorf("via %v: %d paths, accepted %v; want %d, %v", c.via, st.Pools.Paths, st.Accepted, c.paths, c.want)
		}
	}
	// Only 3's direct copy: one path, short of k + 1 = 2, though both
	// endpoints support the edge (4's copy relayed at hop 2 is no known path).
	s := withRules(t, Rules{DisjointPaths: 1}, 0, 1, 3)
	begin(t, s, 0)
	mustHear(t, s, 1, 3)
	mustIngest(t, s, 3, signed(t, 3, 0, 1, 0, 4))
	mustIngest(t, s, 1, hop(signed(t, 4, 0, 1, 3), 2))
	end(t, s)
	if st, _ := s.EdgeStatus(3, 4); st.Pools.Paths != 1 || st.Accepted {
		t.Errorf("one path: pools %+v, accepted %v", st.Pools, st.Accepted)
	}
	cfg := DefaultConfig()
	cfg.Rules.DisjointPaths = -1
	if cfg.Validate() == nil {
		t.Error("Rules.DisjointPaths = -1 accepted")
	}
}
