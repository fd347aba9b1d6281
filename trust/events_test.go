package trust

import (
	"math"
	"slices"
	"testing"

	"github.com/trellis-fl/trellis/topology"
	"github.com/trellis-fl/trellis/wire"
)

func eventsConfig() Config {
	cfg := DefaultConfig()
	cfg.Claims = ClaimsEvents
	return cfg
}

func newEventsState(t testing.TB, self uint32, neighbors ...uint32) *State {
	t.Helper()
	s, err := New(testIDs[self], testDir, neighbors, eventsConfig())
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// event returns source's signed event about peer (round r, version v),
// countersigned by peer when attested, as forwarded h times.
func event(t testing.TB, source, peer uint32, op uint8, r, v uint64, attested bool, h uint8) *wire.Event {
	t.Helper()
	e := &wire.Event{Source: source, Peer: peer, Op: op, Round: r, Version: v}
	if err := wire.SignEvent(e, testIDs[source]); err != nil {
		t.Fatal(err)
	}
	if attested {
		if err := wire.Countersign(e, testIDs[peer]); err != nil {
			t.Fatal(err)
		}
	}
	e.Hop = h
	return e
}

func mustEvent(t testing.TB, s *State, from uint32, e *wire.Event) {
	t.Helper()
	if err := s.IngestEvent(from, e); err != nil {
		t.Fatalf("event from %d: %v", from, err)
	}
}

// psi1 is the weight of a statement by a peer at the prior trust (Beta(1,
// 1): R = 1/2, U = 1/√12 ≈ 0.289 < τ_U, so T = 1/2) forwarded once.
var psi1 = 0.5 * math.Exp(-0.5)

// TestEventAttestedVsOneSided pins the two forms by hand: node 0 hears,
// through its neighbour 1, node 3's addition of the edge 3–4. Attested
// (countersigned by 4), it makes both endpoints witnesses at full weight:
// S+ = 2ψ = 2 · 0.5 e^-0.5, m = 2 reached, the edge enters. One-sided, it
// is one witness at half weight (OneSided = 1/2): S+ = ψ/2, one witness,
// the edge stays out. A mutation that credits a one-sided event like an
// attested one (the peer as a witness, or full weight) fails here.
func TestEventAttestedVsOneSided(t *testing.T) {
	for _, attested := range []bool{true, false} {
		s := newEventsState(t, 0, 1)
		begin(t, s, 0)
		mustHear(t, s, 1)
		mustEvent(t, s, 1, event(t, 3, 4, wire.EventAdd, 0, 1, attested, 1))
		end(t, s)
		st, ok := s.EdgeStatus(3, 4)
		if !ok {
			t.Fatalf("attested %v: edge 3–4 not evaluated", attested)
		}
		wantSup, wantN := psi1/2, 1
		if attested {
			wantSup, wantN = 2*psi1, 2
		}
		near(t, "S+", st.Pools.Support, wantSup, 1e-12)
		if st.Pools.Supporters != wantN || st.Pools.Opposers != 0 || st.Accepted != attested {
			t.Errorf("attested %v: pools %+v accepted %v, want %d supporters, accepted %v", attested, st.Pools, st.Accepted, wantN, attested)
		}
	}
}

// TestEventDispute: a one-sided addition against the other endpoint's
// digest omitting the edge (both one-sided, equal trust): χ = 1/2, below
// τ_add. With 4's countersignature instead (a later statement of 4, and
// bilateral), χ = 1.
func TestEventDispute(t *testing.T) {
	s := newEventsState(t, 0, 1)
	begin(t, s, 0)
	mustHear(t, s, 1)
	mustIngest(t, s, 1, hop(signed(t, 4, 0, 1, 5), 1)) // 4's digest: not 3
	mustEvent(t, s, 1, event(t, 3, 4, wire.EventAdd, 0, 1, false, 1))
	end(t, s)
	st, _ := s.EdgeStatus(3, 4)
	near(t, "χ one-sided vs digest", st.Confidence, 0.5, 1e-8)
	near(t, "S-", st.Pools.Oppose, psi1/2, 1e-12)
	if st.Accepted {
		t.Error("a disputed one-sided edge was accepted")
	}

	begin(t, s, 1)
	mustHear(t, s, 1)
	mustEvent(t, s, 1, event(t, 3, 4, wire.EventAdd, 1, 2, true, 1))
	end(t, s)
	st, _ = s.EdgeStatus(3, 4)
	near(t, "χ attested", st.Confidence, 1, 1e-8)
	if !st.Accepted || st.Pools.Supporters != 2 {
		t.Errorf("attested edge: %+v", st)
	}
}

// TestEventAddThenRemove: an attested addition (both endpoints' events)
// puts 3–4 in the view; 3's one-sided removal (weight ψ/2) does not outweigh
// 4's attested addition (ψ): χ = 2/3, the edge stays; once 4's removal
// arrives too no witness supports it and it leaves.
func TestEventAddThenRemove(t *testing.T) {
	s := newEventsState(t, 0, 1)
	begin(t, s, 0)
	mustHear(t, s, 1)
	mustEvent(t, s, 1, event(t, 3, 4, wire.EventAdd, 0, 1, true, 1))
	mustEvent(t, s, 1, event(t, 4, 3, wire.EventAdd, 0, 1, true, 1))
	end(t, s)
	if st, _ := s.EdgeStatus(3, 4); !st.Accepted {
		t.Fatalf("attested edge not accepted: %+v", st)
	}
	begin(t, s, 1)
	mustHear(t, s, 1)
	mustEvent(t, s, 1, event(t, 3, 4, wire.EventRemove, 1, 2, false, 1))
	end(t, s)
	st, _ := s.EdgeStatus(3, 4)
	// 4's support was accepted at round 0, at the prior trust; 3's removal
	// at 3's trust after round 0 (f and c: its edge entered, attested by 4).
	t3 := NewBeta().Update(Evidence{F: 1, C: 1}, &s.cfg).Trust(&s.cfg)
	wantChi := psi1 / (psi1 + t3*math.Exp(-0.5)/2)
	near(t, "χ after one removal", st.Confidence, wantChi, 1e-8)
	if !st.Accepted || st.Pools.Supporters != 1 || st.Pools.Opposers != 1 {
		t.Errorf("after 3's removal: %+v", st)
	}
	begin(t, s, 2)
	mustHear(t, s, 1)
	mustEvent(t, s, 1, event(t, 4, 3, wire.EventRemove, 2, 2, false, 1))
	end(t, s)
	if st, _ := s.EdgeStatus(3, 4); st.Accepted || st.Pools.Supporters != 0 {
		t.Errorf("after both removals: %+v", st)
	}
}

// TestEventRefusals: replays, duplicates, equivocation, forgeries, budget,
// inconsistency, freshness and form, each with whom it blames.
func TestEventRefusals(t *testing.T) {
	s := newEventsState(t, 0, 1, 3)
	begin(t, s, 0)
	mustHear(t, s, 1, 3)
	e := event(t, 3, 4, wire.EventAdd, 0, 5, false, 0)
	mustEvent(t, s, 3, e)
	rejected(t, s.IngestEvent(3, e), Duplicate, 0)
	fwd := *e
	fwd.Hop = 1
	rejected(t, s.IngestEvent(1, &fwd), Duplicate, 0)
	// Same version, another event: the source signed both.
	rejected(t, s.IngestEvent(3, event(t, 3, 5, wire.EventAdd, 0, 5, false, 0)), Equivocation, 3)
	// A second event about the same edge in the same round.
	rejected(t, s.IngestEvent(3, event(t, 3, 4, wire.EventRemove, 0, 6, false, 0)), OverBudget, 3)
	// Forged: signature of another event; countersignature not by the peer.
	bad := event(t, 3, 6, wire.EventAdd, 0, 7, false, 0)
	bad.Sig = e.Sig
	rejected(t, s.IngestEvent(3, bad), Forged, 3)
	bad = event(t, 2, 6, wire.EventAdd, 0, 7, false, 1)
	bad.Attested, bad.Counter = true, bad.Sig
	rejected(t, s.IngestEvent(1, bad), Forged, 1)
	// Form: hop 0 from a forwarder, about itself, a returned countersignature.
	rejected(t, s.IngestEvent(1, event(t, 3, 6, wire.EventAdd, 0, 8, false, 0)), BadHop, 1)
	self := &wire.Event{Source: 3, Peer: 3, Op: wire.EventAdd, Round: 0, Version: 9}
	rejected(t, s.IngestEvent(3, self), Malformed, 3)
	ret := event(t, 3, 0, wire.EventAdd, 0, 10, true, 0)
	ret.Return = true
	rejected(t, s.IngestEvent(3, ret), Malformed, 3)
	rejected(t, s.IngestEvent(3, event(t, 3, 6, wire.EventAdd, 1, 11, false, 0)), Future, 3)
	end(t, s)

	begin(t, s, 1)
	mustHear(t, s, 1, 3)
	// The source re-sending its event of round 0: a replay; a forward of it
	// within its freshness window is not evidence.
	rejected(t, s.IngestEvent(3, e), Replay, 3)
	rejected(t, s.IngestEvent(1, &fwd), Duplicate, 0)
	// A newer version for an older round than one held.
	mustEvent(t, s, 3, event(t, 3, 6, wire.EventAdd, 1, 20, false, 0))
	rejected(t, s.IngestEvent(3, event(t, 3, 7, wire.EventAdd, 0, 21, false, 0)), Inconsistent, 3)
	end(t, s)
	for r := uint64(2); r <= 4; r++ {
		begin(t, s, r)
		end(t, s)
	}
	begin(t, s, 5)
	rejected(t, s.IngestEvent(1, event(t, 3, 6, wire.EventRemove, 2, 30, false, 1)), Stale, 1)
	end(t, s)
}

// TestEventEquivocationAcrossForms: a node that countersigns the addition
// of an edge and signs its removal in the same round signed both: charged
// in either order, and the denial is kept.
func TestEventEquivocationAcrossForms(t *testing.T) {
	for _, order := range []bool{false, true} {
		s := newEventsState(t, 0, 1)
		begin(t, s, 0)
		mustHear(t, s, 1)
		add := event(t, 3, 4, wire.EventAdd, 0, 1, true, 1)    // 4 countersigns "3–4 added"
		rem := event(t, 4, 3, wire.EventRemove, 0, 1, true, 1) // 4 says "removed", 3 countersigns it
		rem.Attested, rem.Counter = false, [wire.SignatureSize]byte{}
		first, second := add, rem
		if order {
			first, second = rem, add
		}
		mustEvent(t, s, 1, first)
		rejected(t, s.IngestEvent(1, second), Equivocation, 4)
		end(t, s)
		if st := s.stanceOf(s.peers[4], 3); st == nil || st.listed {
			t.Errorf("order %v: 4's stance %+v, want the denial", order, st)
		}
	}
}

// TestCountersignRoundTrip: 3 and 4 both see their edge appear; each
// countersigns the other's proposal, and the attested events verify. A node
// that did not see the change refuses, and a forged countersignature is
// refused and blamed.
func TestCountersignRoundTrip(t *testing.T) {
	a, b, c := newEventsState(t, 3), newEventsState(t, 4), newEventsState(t, 5)
	for _, s := range []*State{a, b, c} {
		begin(t, s, 0)
		if _, err := s.OwnEvents(nil); err != nil {
			t.Fatal(err)
		}
		end(t, s)
		begin(t, s, 1)
	}
	pa, err := a.OwnEvents([]uint32{4, 5})
	if err != nil || len(pa) != 2 || pa[0].Peer != 4 || pa[0].Op != wire.EventAdd {
		t.Fatalf("3's events %+v (%v)", pa, err)
	}
	if _, err := b.OwnEvents([]uint32{3}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.OwnEvents(nil); err != nil { // 5 did not see 3
		t.Fatal(err)
	}
	cs, ok := b.Countersign(&pa[0])
	if !ok {
		t.Fatal("4 refused to countersign an edge it saw")
	}
	if _, ok := c.Countersign(&pa[1]); ok {
		t.Fatal("5 countersigned an edge it did not see")
	}
	forged := cs
	forged.Counter[0] ^= 1
	rejected(t, a.AcceptCountersign(4, &forged), Forged, 4)
	if err := a.AcceptCountersign(4, &cs); err != nil {
		t.Fatal(err)
	}
	out := a.OwnAttested()
	pub4, _ := testDir.Key(4)
	if !out[0].Attested || out[1].Attested || !wire.VerifyCounter(&out[0], pub4) {
		t.Errorf("attested events %+v", out)
	}
}

// eventNetwork drives one State per node in the events form over dyn the
// way bench/dmtttrust does: own events proposed to the other endpoint and
// countersigned by it when it saw the change, then own events, the digest
// when due and the forwards to every neighbour.
func eventNetworkStep(tb testing.TB, dyn topology.Dynamic, r int, states []*State, pending [][]wire.Claim, pendingEv [][]wire.Event) {
	tb.Helper()
	g := dyn.At(r)
	digests := make([]*wire.Claim, len(states))
	own := make([][]wire.Event, len(states))
	for i, s := range states {
		if err := s.BeginRound(uint64(r)); err != nil {
			tb.Fatal(err)
		}
		nb := u32(g.Out(i))
		if s.DigestDue() {
			c, err := s.OwnClaim(nb)
			if err != nil {
				tb.Fatal(err)
			}
			digests[i] = &c
		}
		var err error
		if own[i], err = s.OwnEvents(nb); err != nil {
			tb.Fatal(err)
		}
	}
	for i := range states {
		for k := range own[i] {
			e := &own[i][k]
			if !slices.Contains(g.Out(i), int(e.Peer)) {
				continue
			}
			if c, ok := states[e.Peer].Countersign(e); ok {
				if err := states[i].AcceptCountersign(e.Peer, &c); err != nil {
					tb.Fatal(err)
				}
			}
		}
	}
	for i := range states {
		batch := append(states[i].OwnAttested(), pendingEv[i]...)
		for _, j := range g.Out(i) {
			rcv := states[j]
			if err := rcv.Heard(uint32(i)); err != nil {
				tb.Fatal(err)
			}
			if digests[i] != nil {
				rcv.Ingest(uint32(i), digests[i])
			}
			for k := range pending[i] {
				rcv.Ingest(uint32(i), &pending[i][k])
			}
			for k := range batch {
				rcv.IngestEvent(uint32(i), &batch[k])
			}
		}
	}
	for i, s := range states {
		if _, err := s.EndRound(); err != nil {
			tb.Fatal(err)
		}
		pending[i] = s.Forwards()
		pendingEv[i] = s.EventForwards()
	}
}

// frozen is dyn up to round `until`, then that round's graph for ever.
type frozen struct {
	topology.Dynamic
	until int
}

func (f frozen) At(r int) *topology.Graph { return f.Dynamic.At(min(r, f.until)) }

// TestEventsReachTheListsView: 16 honest nodes on the paper's mobility graph
// for 5 rounds, then still for 4, trust only, under the paper's rules and
// the screen rules: the events form reaches, at every node, the trusted
// view the lists form reaches (under IndependentPaths it may hold more
// true edges, never a false one); no node charges another a contradiction or
// a spam event (x, q), and under the screen rules no severe conflict (z)
// either (under the paper's rules both forms charge honest nodes z on a
// mobile graph, package doc "Evidence rules").
func TestEventsReachTheListsView(t *testing.T) {
	mc := topology.DefaultMobility(16, 3)
	mc.Connect = true
	mob, err := topology.NewMobility(mc)
	if err != nil {
		t.Fatal(err)
	}
	dyn := frozen{mob, 5}
	const rounds = 10
	for _, rules := range []Rules{{}, ScreenRules()} {
		lcfg := DefaultConfig()
		lcfg.Rules = rules
		lists := newNetworkConfig(t, dyn, 3, make([]behavior, 16), lcfg)
		for range rounds {
			lists.step(t)
		}
		ecfg := eventsConfig()
		ecfg.Rules = rules
		ids, dir := wire.SimIdentities(3, 16)
		states := make([]*State, 16)
		g0 := dyn.At(0)
		for i := range states {
			if states[i], err = New(ids[i], dir, u32(g0.Out(i)), ecfg); err != nil {
				t.Fatal(err)
			}
		}
		pending, pendingEv := make([][]wire.Claim, 16), make([][]wire.Event, 16)
		for r := range rounds {
			eventNetworkStep(t, dyn, r, states, pending, pendingEv)
		}
		changed := 0
		truth := dyn.At(rounds)
		for i := range states {
			want, got := lists.states[i].Edges(), states[i].Edges()
			if !rules.IndependentPaths && !slices.Equal(got, want) {
				t.Errorf("rules %+v, node %d: events view %v, lists view %v", rules, i, got, want)
			}
			// Under IndependentPaths an event keeps every path its copies
			// came by over its freshness window, where a list claim is
			// replaced every round: the events view may hold true edges the
			// lists view still lacks, never a false one.
			for _, e := range want {
				if _, ok := slices.BinarySearchFunc(got, e, compareEdges); !ok {
					t.Errorf("rules %+v, node %d: events view lacks %v of the lists view", rules, i, e)
				}
			}
			for _, e := range got {
				if !slices.Contains(truth.Out(int(e.U)), int(e.V)) {
					t.Errorf("rules %+v, node %d: events view holds %v, not an edge", rules, i, e)
				}
			}
			for _, j := range states[i].Peers() {
				ev := states[i].Peer(j).Evidence
				if ev.X+ev.Q > 0 || (rules.Quorum && ev.Z > 0) {
					t.Errorf("rules %+v: node %d holds negative evidence against honest %d: %+v", rules, i, j, ev)
				}
			}
			changed += int(states[i].Stats().Events)
		}
		if changed == 0 {
			t.Fatal("no edge events: the graph never changed, the test shows nothing")
		}
	}
}

// FuzzIngestEvents drives node 0 in the events form through a program of
// operations: hear a peer, ingest an event with fuzzed source, peer, round,
// version, hop and op, validly signed or not, attested with a valid or a
// broken countersignature or not, ingest a digest, take a countersignature
// for one of its own events, end the round. Properties: no panic, every
// refusal a *Rejection, trust in [0, 1], event forwards still verifying.
//
//	go test ./trust -run '^$' -fuzz FuzzIngestEvents -fuzztime=100000x
func FuzzIngestEvents(f *testing.F) {
	f.Add([]byte{1, 1, 2, 3, 0, 1, 0, 0, 3, 1, 1, 3, 2, 1, 2, 1, 0, 1, 3})
	f.Add([]byte{1, 1, 1, 2, 0, 1, 0, 1, 4, 1, 1, 1, 2, 0, 1, 0, 1, 1, 2, 2, 1, 3, 3})
	f.Add([]byte{4, 1, 5, 1, 1, 1, 2, 0, 2, 0, 0, 3, 1, 2, 4, 2, 0, 5, 1, 2, 3})
	ids, dir := wire.SimIdentities(testSeed, 8)
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := New(ids[0], dir, []uint32{1, 2, 3}, eventsConfig())
		if err != nil {
			t.Fatal(err)
		}
		round := uint64(1)
		if err := s.BeginRound(round); err != nil {
			t.Fatal(err)
		}
		own, err := s.OwnEvents([]uint32{1, 2})
		if err != nil {
			t.Fatal(err)
		}
		for len(b) > 0 {
			op := b[0] % 6
			b = b[1:]
			switch op {
			case 0:
				if len(b) > 0 {
					s.Heard(uint32(b[0] % 10))
					b = b[1:]
				}
			case 1: // event: from, source, peer, round delta, version, hop, op, flags
				if len(b) < 8 {
					b = nil
					break
				}
				from, src, peer := uint32(b[0]%10), uint32(b[1]%10), uint32(b[2]%10)
				e := wire.Event{Source: src, Peer: peer, Round: round - uint64(b[3]%4) + 1, Version: uint64(b[4] % 8),
					Hop: b[5] % 4, Op: b[6] % 4}
				fl := b[7]
				if int(src) < len(ids) && fl&1 == 0 {
					wire.SignEvent(&e, ids[src])
				}
				if int(peer) < len(ids) && fl&2 != 0 {
					wire.Countersign(&e, ids[peer])
				}
				if fl&4 != 0 {
					e.Counter[1] ^= 1
				}
				e.Return = fl&8 != 0
				checkErr(t, s.IngestEvent(from, &e))
				b = b[8:]
			case 2: // digest of a source listing neighbour bits
				if len(b) < 2 {
					b = nil
					break
				}
				src := uint32(b[0] % 8)
				var nb []uint32
				for j := range uint32(8) {
					if b[1]&(1<<j) != 0 && j != src {
						nb = append(nb, j)
					}
				}
				checkErr(t, s.Ingest(src, signed(t, src, round, uint64(b[0]/8)+1, nb...)))
				b = b[2:]
			case 3: // end the round, check, begin the next
				if _, err := s.EndRound(); err != nil {
					t.Fatal(err)
				}
				check(t, s)
				for _, e := range s.EventForwards() {
					sk, _ := dir.Key(e.Source)
					pk, _ := dir.Key(e.Peer)
					if !wire.VerifyEvent(&e, sk) || (e.Attested && !wire.VerifyCounter(&e, pk)) || int(e.Hop) > s.cfg.HopLimit {
						t.Fatalf("event forward %+v", e)
					}
				}
				round++
				if err := s.BeginRound(round); err != nil {
					t.Fatal(err)
				}
				own, _ = s.OwnEvents([]uint32{uint32(round%3) + 1})
			case 4: // a countersignature for one of the node's own events
				if len(b) < 1 || len(own) == 0 {
					b = nil
					break
				}
				e := own[int(b[0])%len(own)]
				if e.Peer < uint32(len(ids)) {
					wire.Countersign(&e, ids[e.Peer])
				}
				if b[0]&0x80 != 0 {
					e.Counter[0] ^= 1
				}
				checkErr(t, s.AcceptCountersign(e.Peer, &e))
				b = b[1:]
			case 5: // a proposal to countersign
				if len(b) < 1 {
					b = nil
					break
				}
				src := uint32(b[0]%7) + 1
				e := wire.Event{Source: src, Peer: 0, Round: round, Version: 1, Op: b[0]%2 + 1}
				wire.SignEvent(&e, ids[src])
				s.Countersign(&e)
				b = b[1:]
			}
		}
		if _, err := s.EndRound(); err != nil {
			t.Fatal(err)
		}
		check(t, s)
	})
}
