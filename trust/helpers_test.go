package trust

import (
	"errors"
	"math"
	"testing"

	"github.com/trellis-fl/trellis/wire"
)

// The fixture: eight simulated nodes of experiment seed 7. Node 0 observes.
const testSeed = 7

var testIDs, testDir = wire.SimIdentities(testSeed, 8)

func newState(t testing.TB, self uint32, neighbors ...uint32) *State {
	t.Helper()
	s, err := New(testIDs[self], testDir, neighbors, DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// signed returns source's claim for round r, version v, hop 0.
func signed(t testing.TB, source uint32, r, v uint64, neighbors ...uint32) *wire.Claim {
	t.Helper()
	c := &wire.Claim{Source: source, Round: r, Version: v, Neighbors: neighbors}
	if err := wire.SignClaim(c, testIDs[source]); err != nil {
		t.Fatal(err)
	}
	return c
}

// hop returns a copy of c as forwarded h times.
func hop(c *wire.Claim, h uint8) *wire.Claim {
	cp := *c
	cp.Hop = h
	return &cp
}

func begin(t testing.TB, s *State, r uint64) {
	t.Helper()
	if err := s.BeginRound(r); err != nil {
		t.Fatal(err)
	}
}

func end(t testing.TB, s *State) Report {
	t.Helper()
	rep, err := s.EndRound()
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func mustIngest(t testing.TB, s *State, from uint32, c *wire.Claim) {
	t.Helper()
	if err := s.Ingest(from, c); err != nil {
		t.Fatalf("ingest from %d: %v", from, err)
	}
}

func mustHear(t testing.TB, s *State, js ...uint32) {
	t.Helper()
	for _, j := range js {
		if err := s.Heard(j); err != nil {
			t.Fatal(err)
		}
	}
}

// rejected asserts that err is a Rejection for reason r blaming `blamed`
// (when r is evidence).
func rejected(t testing.TB, err error, r Reason, blamed uint32) {
	t.Helper()
	var rej *Rejection
	if !errors.As(err, &rej) {
		t.Fatalf("got %v, want a %s rejection", err, r)
	}
	if rej.Reason != r || (r.Evidence() && rej.Blamed != blamed) {
		t.Fatalf("got %v, want %s blamed on %d", err, r, blamed)
	}
}

func near(t testing.TB, what string, got, want, tol float64) {
	t.Helper()
	if math.Abs(got-want) > tol || math.IsNaN(got) {
		t.Errorf("%s = %.6f, want %.6f (±%g)", what, got, want, tol)
	}
}

// evidenceOf returns the evidence rep reports for peer j.
func evidenceOf(rep Report, j uint32) Evidence {
	for _, u := range rep.Updates {
		if u.Peer == j {
			return u.Evidence
		}
	}
	return Evidence{}
}
