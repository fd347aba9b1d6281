package trust

import (
	"math"
	"slices"
	"testing"

	"github.com/trellis-fl/trellis/wire"
)

func TestWitnessWeightAndConfidence(t *testing.T) {
	near(t, "ψ hop 0", WitnessWeight(0.8, 0.5, 0), 0.8, 1e-15)
	near(t, "ψ hop 1", WitnessWeight(0.8, 0.5, 1), 0.8*math.Exp(-0.5), 1e-15) // 0.485225
	near(t, "ψ hop 2", WitnessWeight(0.8, 0.5, 2), 0.8*math.Exp(-1), 1e-15)
	p := Pools{Support: 0.6, Oppose: 0.2, Supporters: 2, Opposers: 1}
	near(t, "χ", p.Confidence(1e-9), 0.75, 1e-8)
	near(t, "χ without witnesses", Pools{}.Confidence(1e-9), 0, 0)

	c := DefaultConfig()
	for _, tc := range []struct {
		name   string
		p      Pools
		inView bool
		want   bool
	}{
		{"add: χ=0.75, 2 witnesses", p, false, true},
		{"add: χ=0.75, 1 witness", Pools{Support: 0.6, Oppose: 0.2, Supporters: 1, Opposers: 1}, false, false},
		{"add: χ=0.5, 2 witnesses", Pools{Support: 0.5, Oppose: 0.5, Supporters: 2, Opposers: 2}, false, false},
		{"add: χ=0.6 exactly", Pools{Support: 0.6, Oppose: 0.4 - 1e-9, Supporters: 2, Opposers: 1}, false, true},
		{"keep: 1-χ=0.5", Pools{Support: 0.5, Oppose: 0.5, Supporters: 1, Opposers: 1}, true, true},
		{"keep: 1-χ=1, 1 opposer", Pools{Support: 0.001, Oppose: 0.8, Supporters: 1, Opposers: 1}, true, true},
		{"remove: 1-χ=1, 2 opposers", Pools{Oppose: 0.8, Opposers: 2}, true, false},
		{"remove: no supporter left", Pools{Oppose: 0.8, Opposers: 1}, true, false},
	} {
		if got := tc.p.Decide(tc.inView, &c); got != tc.want {
			t.Errorf("%s: in view %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestEdgeAcceptance runs node 0 through rounds of claims with hand-computed
// pools. Round 1, every trust at the prior 0.5:
//
//	1 (hop 0) lists {2, 3}; 2 (hop 0) lists {1}; 3 (hop 1, via 2) lists {}
//	4 (hop 1, via 1) lists {5}; 5 (hop 0) lists {}
//
// {1,2}: both endpoints attest, χ = 1: accepted.
// {1,3}: S+ = 0.5, S- = 0.5e^-0.5 = 0.303265, χ = 0.622459 >= 0.6 but a
// single witness: not accepted (accepted with m = 1).
// {4,5}: S+ = 0.303265, S- = 0.5, χ = 0.377541 < 0.4: a severe conflict (z
// for 4).
func TestEdgeAcceptance(t *testing.T) {
	for _, m := range []int{2, 1} {
		cfg := DefaultConfig()
		cfg.MinWitnesses = m
		s, err := New(testIDs[0], testDir, []uint32{1, 2, 5}, cfg)
		if err != nil {
			t.Fatal(err)
		}
		begin(t, s, 1)
		mustIngest(t, s, 1, signed(t, 1, 1, 1, 2, 3))
		mustIngest(t, s, 2, signed(t, 2, 1, 1, 1))
		mustIngest(t, s, 2, hop(signed(t, 3, 1, 1), 1))
		mustIngest(t, s, 1, hop(signed(t, 4, 1, 1, 5), 1))
		mustIngest(t, s, 5, signed(t, 5, 1, 1))
		rep := end(t, s)

		st, _ := s.EdgeStatus(2, 1)
		if !st.Accepted || st.Pools.Supporters != 2 || math.Abs(st.Confidence-1) > 1e-8 {
			t.Errorf("m=%d {1,2}: %+v", m, st)
		}
		st, _ = s.EdgeStatus(1, 3)
		near(t, "S+ {1,3}", st.Pools.Support, 0.5, 1e-15)
		near(t, "S- {1,3}", st.Pools.Oppose, 0.303265, 1e-6)
		near(t, "χ {1,3}", st.Confidence, 0.622459, 1e-6)
		if st.Accepted != (m == 1) {
			t.Errorf("m=%d: {1,3} accepted = %v with one witness", m, st.Accepted)
		}
		st, _ = s.EdgeStatus(4, 5)
		near(t, "χ {4,5}", st.Confidence, 0.377541, 1e-6)
		if st.Accepted {
			t.Errorf("m=%d: {4,5} accepted", m)
		}
		if m == 2 {
			// Evidence: f for every accepted claim but 4's, c for 1 and 2
			// (their edge is in the view and attested by its other end), z
			// and no f for 4, whose claim is in severe conflict.
			for j, want := range map[uint32]Evidence{1: {F: 1, C: 1}, 2: {F: 1, C: 1}, 3: {F: 1}, 4: {Z: 1}, 5: {F: 1}} {
				if got := evidenceOf(rep, j); got != want {
					t.Errorf("evidence of %d: %+v, want %+v", j, got, want)
				}
			}
			want := []Edge{{0, 1}, {0, 2}, {0, 5}, {1, 2}}
			if got := s.Edges(); !slices.Equal(got, want) {
				t.Errorf("view %v, want %v", got, want)
			}
			if rep.Accepted != 1 || rep.Added != 1 || rep.Removed != 0 {
				t.Errorf("report %+v", rep)
			}
		}
	}
}

// TestEdgeRemoval: {1,2} stays while one endpoint still attests it (χ = 0.5,
// 1-χ < τ_add), leaves once both omit it, and also leaves when every claim
// speaking of it has expired.
func TestEdgeRemoval(t *testing.T) {
	s := newState(t, 0, 1, 2)
	begin(t, s, 1)
	mustIngest(t, s, 1, signed(t, 1, 1, 1, 2))
	mustIngest(t, s, 2, signed(t, 2, 1, 1, 1))
	end(t, s)
	begin(t, s, 2)
	mustIngest(t, s, 1, signed(t, 1, 2, 2)) // 1 omits 2
	mustIngest(t, s, 2, signed(t, 2, 2, 2, 1))
	end(t, s)
	st, _ := s.EdgeStatus(1, 2)
	if !st.Accepted || st.Pools.Supporters != 1 || st.Pools.Opposers != 1 {
		t.Fatalf("round 2: %+v", st)
	}
	begin(t, s, 3)
	mustIngest(t, s, 1, signed(t, 1, 3, 3))
	mustIngest(t, s, 2, signed(t, 2, 3, 3))
	rep := end(t, s)
	if st, _ := s.EdgeStatus(1, 2); st.Accepted || rep.Removed != 1 {
		t.Fatalf("round 3: %+v, report %+v", st, rep)
	}

	// Expiry: accepted in round 1, then both sources fall silent. Claims of
	// round 1 count until round 1 + MaxAge = 3.
	s = newState(t, 0, 1, 2)
	begin(t, s, 1)
	mustIngest(t, s, 1, signed(t, 1, 1, 1, 2))
	mustIngest(t, s, 2, signed(t, 2, 1, 1, 1))
	end(t, s)
	for r := uint64(2); r <= 4; r++ {
		begin(t, s, r)
		end(t, s)
		_, ok := s.EdgeStatus(1, 2)
		inView := slices.Contains(s.Edges(), Edge{1, 2})
		if want := r <= 3; inView != want || (r > 4 && ok) {
			t.Errorf("round %d: {1,2} in view %v, want %v", r, inView, want)
		}
	}
}

// TestOrderIndependence: the same claims ingested in any order give the same
// view, pools and trust.
func TestOrderIndependence(t *testing.T) {
	claims := func() [][2]any {
		return [][2]any{
			{uint32(1), signed(t, 1, 1, 1, 2, 3)},
			{uint32(2), hop(signed(t, 1, 1, 1, 2, 3), 1)},
			{uint32(2), signed(t, 2, 1, 1, 1, 3)},
			{uint32(3), signed(t, 3, 1, 1, 2)},
			{uint32(3), hop(signed(t, 4, 1, 1, 3), 1)},
			{uint32(1), hop(signed(t, 4, 1, 2, 1, 3), 1)},
		}
	}
	run := func(perm []int) ([]EdgeStatus, []float64) {
		s := newState(t, 0, 1, 2, 3)
		begin(t, s, 1)
		cs := claims()
		for _, k := range perm {
			s.Ingest(cs[k][0].(uint32), cs[k][1].(*wire.Claim))
		}
		mustHear(t, s, 1, 2, 3)
		end(t, s)
		var ts []float64
		for j := uint32(1); j <= 4; j++ {
			ts = append(ts, s.Trust(j))
		}
		return slices.Clone(s.evals), ts
	}
	e0, t0 := run([]int{0, 1, 2, 3, 4, 5})
	for _, perm := range [][]int{{5, 4, 3, 2, 1, 0}, {1, 0, 3, 5, 2, 4}, {2, 5, 1, 4, 0, 3}} {
		e, ts := run(perm)
		if !slices.Equal(e, e0) || !slices.Equal(ts, t0) {
			t.Errorf("order %v: evals %+v trust %v\nwant %+v trust %v", perm, e, ts, e0, t0)
		}
	}
}
