package trust

import (
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/trellis-fl/trellis/wire"
)

// FuzzIngest drives node 0 through rounds of arbitrary input: the bytes are
// read both as one encoded wire message (whose claim, if it decodes, is
// ingested as delivered by its header's sender) and as a program of
// operations — hear a peer, ingest a claim with fuzzed source, round,
// version, hop, neighbors and a valid or broken signature, report a wire
// rejection, end the round — so the fuzzer reaches acceptance, budgets,
// equivocation and forwarding, not only the form checks. Properties: no
// panic, every error a *Rejection or a sequencing error, trust in [0, 1],
// α and β finite and at least the floor, forwards still verifying.
//
//	go test ./trust -run '^$' -fuzz FuzzIngest -fuzztime=100000x
func FuzzIngest(f *testing.F) {
	ids, dir := wire.SimIdentities(testSeed, 8) // own copies: fuzz workers run in parallel
	c := wire.Claim{Source: 1, Round: 1, Version: 1, Neighbors: []uint32{0, 2}}
	if err := wire.SignClaim(&c, ids[1]); err != nil {
		f.Fatal(err)
	}
	m := wire.Message{Header: wire.Header{Kind: wire.KindClaim, From: 1, To: 0, Round: 1, Seq: 1}, Claim: c}
	if err := wire.Sign(&m, ids[1]); err != nil {
		f.Fatal(err)
	}
	b, err := wire.AppendEncode(nil, &m)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	f.Add([]byte{0, 1, 1, 1, 1, 0, 0x06, 1, 2, 1, 1, 1, 0, 0x0a, 3, 9, 1, 1, 2, 1, 1, 0x03})
	f.Add([]byte{1, 2, 1, 1, 2, 0, 0x05, 1, 2, 1, 1, 3, 0, 0x05, 1, 2, 1, 1, 4, 0, 0x05, 3, 1, 1, 2, 1, 2, 0, 0x10})
	f.Fuzz(func(t *testing.T, b []byte) { runProgram(t, ids, dir, b) })
}

// runProgram runs the fuzz program b on node 0 and returns its state.
func runProgram(t *testing.T, ids []*wire.Identity, dir *wire.Directory, b []byte) *State {
	s, err := New(ids[0], dir, []uint32{1, 2, 3}, DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	round := uint64(1)
	if err := s.BeginRound(round); err != nil {
		t.Fatal(err)
	}
	var m wire.Message
	if wire.DecodeLimited(b, &m, wire.Limits{MaxFloats: 64, MaxNeighbors: 64}) == nil && m.Kind == wire.KindClaim {
		checkErr(t, s.Ingest(m.From, &m.Claim))
	}
	for len(b) > 0 {
		op := b[0] % 4
		b = b[1:]
		switch op {
		case 0: // hear
			if len(b) > 0 {
				s.Heard(uint32(b[0] % 10))
				b = b[1:]
			}
		case 1: // ingest: from, source, round delta, version, hop, flags, neighbor bits
			if len(b) < 7 {
				b = nil
				break
			}
			from, src := uint32(b[0]%10), uint32(b[1]%10)
			c := wire.Claim{Source: src, Round: round - uint64(b[2]%4) + 1, Version: uint64(b[3] % 8), Hop: b[4] % 4}
			for j := range uint32(8) {
				if b[6]&(1<<j) != 0 {
					c.Neighbors = append(c.Neighbors, j)
				}
			}
			if b[5]&1 == 1 { // unsorted
				slices.Reverse(c.Neighbors)
			}
			if int(src) < len(ids) && b[5]&2 == 0 {
				wire.SignClaim(&c, ids[src]) // may refuse (self-listing is allowed to sign)
			}
			if b[5]&4 != 0 {
				c.Sig[0] ^= 1
			}
			checkErr(t, s.Ingest(from, &c))
			b = b[7:]
		case 2: // a wire rejection
			if len(b) > 0 {
				s.ObserveRejected(uint32(b[0]%10), wire.Reason(b[0]/10%uint8(wire.NumReasons+1)))
				b = b[1:]
			}
		case 3: // end the round, check, begin the next
			if _, err := s.EndRound(); err != nil {
				t.Fatal(err)
			}
			check(t, s)
			round++
			if err := s.BeginRound(round); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, err := s.EndRound(); err != nil {
		t.Fatal(err)
	}
	check(t, s)
	return s
}

func checkErr(t *testing.T, err error) {
	t.Helper()
	if err == nil {
		return
	}
	if _, ok := err.(*Rejection); !ok {
		t.Fatalf("ingest error %v is not a Rejection", err)
	}
}

func check(t *testing.T, s *State) {
	t.Helper()
	for _, id := range s.Peers() {
		p := s.Peer(id)
		if !(p.Trust >= 0 && p.Trust <= 1) || math.IsInf(p.Beta.Alpha, 0) || math.IsInf(p.Beta.Beta, 0) ||
			p.Beta.Alpha < s.cfg.Floor || p.Beta.Beta < s.cfg.Floor || !(p.Reliability >= 0 && p.Reliability <= 1) {
			t.Fatalf("peer %d: %+v", id, p)
		}
	}
	if !slices.IsSortedFunc(s.evals, func(a, b EdgeStatus) int { return compareEdges(a.Edge, b.Edge) }) {
		t.Fatal("evaluations not sorted")
	}
	for _, c := range s.Forwards() {
		pub, _ := s.dir.Key(c.Source)
		if !wire.VerifyClaim(&c, pub) || int(c.Hop) > s.cfg.HopLimit {
			t.Fatalf("forward %+v", c)
		}
	}
}

// TestFuzzSeeds checks that the committed seeds of FuzzIngest
// (testdata/fuzz/FuzzIngest) reach the paths they are named for, so the
// fuzzer starts from acceptance, budgets, replays and forgeries rather than
// from the form checks alone.
func TestFuzzSeeds(t *testing.T) {
	want := map[string]func(Stats) bool{
		"accept_corroborate_forward": func(st Stats) bool { return st.Accepted >= 3 && st.Forwarded >= 2 },
		"flood":                      func(st Stats) bool { return st.Rejected[OverBudget] == 3 },
		"forged_forward":             func(st Stats) bool { return st.Rejected[Forged] == 1 },
		"replay_next_round":          func(st Stats) bool { return st.Rejected[Replay] == 1 && st.Rejected[Superseded] == 1 },
		"equivocation":               func(st Stats) bool { return st.Rejected[Equivocation] == 2 },
		"malformed": func(st Stats) bool {
			return st.Rejected[Malformed] == 2 && st.Rejected[UnknownSender] == 1 && st.Rejected[Forged] == 1 && st.Unattributed == 2
		},
	}
	for name, ok := range want {
		raw, err := os.ReadFile(filepath.Join("testdata", "fuzz", "FuzzIngest", name))
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSpace(string(raw)), "\n")
		lit := strings.TrimSuffix(strings.TrimPrefix(lines[len(lines)-1], "[]byte("), ")")
		b, err := strconv.Unquote(lit)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		ids, dir := wire.SimIdentities(testSeed, 8)
		if st := runProgram(t, ids, dir, []byte(b)).Stats(); !ok(st) {
			t.Errorf("seed %s: stats %+v", name, st)
		}
	}
}
