package trust

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
)

// drive runs rounds [from, to) of node 0 with neighbors 1, 2, 3 hearing
// and relaying a fixed script of claims.
func drive(t *testing.T, s *State, from, to uint64) {
	t.Helper()
	for r := from; r < to; r++ {
		begin(t, s, r)
		if _, err := s.OwnClaim([]uint32{1, 2, 3}); err != nil {
			t.Fatal(err)
		}
		mustHear(t, s, 1, 2)
		if r%3 != 2 {
			mustHear(t, s, 3)
		}
		_ = s.Ingest(1, signed(t, 1, r, r+1, 0, 2, 4))
		_ = s.Ingest(2, signed(t, 2, r, r+1, 0, 1, 5))
		_ = s.Ingest(3, signed(t, 3, r, r+1, 0, 6))
		_ = s.Ingest(1, hop(signed(t, 4, r, r+1, 1, 7), 1))
		if r%2 == 1 { // a liar: 5 claims an edge to 0 that 0 does not have
			_ = s.Ingest(2, hop(signed(t, 5, r, r+1, 0, 2), 1))
		}
		end(t, s)
		s.Forwards()
	}
}

func TestSnapshotRoundTrip(t *testing.T) {
	a := newState(t, 0, 1, 2, 3)
	drive(t, a, 0, 6)
	snap, err := a.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	b, err := Restore(testIDs[0], testDir, DefaultConfig(), snap)
	if err != nil {
		t.Fatal(err)
	}
	again, err := b.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(snap, again) {
		t.Fatal("a restored state's snapshot differs from the one it was restored from")
	}
	// The two go on identically.
	drive(t, a, 6, 12)
	drive(t, b, 6, 12)
	sa, _ := a.MarshalBinary()
	sb, _ := b.MarshalBinary()
	if !bytes.Equal(sa, sb) {
		t.Fatal("the restored state and the original diverge after six more rounds")
	}
	for j := uint32(1); j < 8; j++ {
		if a.Trust(j) != b.Trust(j) || a.Reliability(j) != b.Reliability(j) {
			t.Errorf("peer %d: trust %v/%v reliability %v/%v", j, a.Trust(j), b.Trust(j), a.Reliability(j), b.Reliability(j))
		}
	}
	if !reflect.DeepEqual(a.Edges(), b.Edges()) || !reflect.DeepEqual(a.Stats(), b.Stats()) {
		t.Error("edges or stats differ")
	}
}

func TestSnapshotRefusesDamage(t *testing.T) {
	a := newState(t, 0, 1, 2, 3)
	drive(t, a, 0, 4)
	snap, _ := a.MarshalBinary()
	for n := 0; n < len(snap); n++ {
		if _, err := Restore(testIDs[0], testDir, DefaultConfig(), snap[:n]); err == nil {
			t.Fatalf("a snapshot truncated to %d of %d bytes was accepted", n, len(snap))
		}
	}
	if _, err := Restore(testIDs[0], testDir, DefaultConfig(), append(snap, 0)); err == nil || !strings.Contains(err.Error(), "trailing") {
		t.Errorf("trailing byte: %v", err)
	}
	if _, err := Restore(testIDs[1], testDir, DefaultConfig(), snap); err == nil || !strings.Contains(err.Error(), "node 0 given to node 1") {
		t.Errorf("another node's snapshot: %v", err)
	}
	bad := bytes.Clone(snap)
	bad[len(snapshotMagic)] = 9
	if _, err := Restore(testIDs[0], testDir, DefaultConfig(), bad); err == nil || !strings.Contains(err.Error(), "format 9") {
		t.Errorf("unknown format: %v", err)
	}
	// Every single-byte change is refused or restores some state; none panics.
	for k := range snap {
		bad := bytes.Clone(snap)
		bad[k] ^= 0xFF
		_, _ = Restore(testIDs[0], testDir, DefaultConfig(), bad)
	}
	begin(t, a, 4)
	if _, err := a.MarshalBinary(); err == nil {
		t.Error("a snapshot of an open round was taken")
	}
}

// TestSnapshotCoversState fails when State or peer gains a field: the
// snapshot (snapshot.go) must then be extended, or a restarted node
// silently loses it.
func TestSnapshotCoversState(t *testing.T) {
	// State: cfg, id, self, dir, prior (rebuilt by Restore) and 10 saved (open is false between rounds),
	// plus evo, the events form's, which MarshalBinary refuses;
	// peer: 21 fields, all saved, plus events (the events form's).
	if n := reflect.TypeFor[State]().NumField(); n != 16 {
		t.Errorf("trust.State has %d fields, the snapshot knows 16: extend snapshot.go", n)
	}
	if n := reflect.TypeFor[peer]().NumField(); n != 22 {
		t.Errorf("trust.peer has %d fields, the snapshot knows 22: extend snapshot.go", n)
	}
}

// Under the evidence rules a peer also carries the paths its claim came by
// and the claims of past rounds (format 2): they survive a round trip, and
// the restored state goes on as the original does.
func TestSnapshotRoundTripWithRules(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Rules = ScreenRules()
	a, err := New(testIDs[0], testDir, []uint32{1, 2, 3}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	drive(t, a, 0, 6)
	if p := a.peers[4]; p == nil || len(p.via) == 0 || len(p.hist) == 0 {
		t.Fatal("the script gave peer 4 no relayed path or history: the test would not cover them")
	}
	snap, err := a.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	b, err := Restore(testIDs[0], testDir, cfg, snap)
	if err != nil {
		t.Fatal(err)
	}
	drive(t, a, 6, 12)
	drive(t, b, 6, 12)
	sa, _ := a.MarshalBinary()
	sb, _ := b.MarshalBinary()
	if !bytes.Equal(sa, sb) {
		t.Fatal("under the evidence rules, the restored state and the original diverge")
	}
}
