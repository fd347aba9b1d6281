package trust

import (
	"testing"

	"github.com/trellis-fl/trellis/topology"
	"github.com/trellis-fl/trellis/wire"
)

// behavior is what a node claims about its neighbors.
type behavior int

const (
	honest    behavior = iota
	omission           // claims only the coalition (the DMTT paper, §V-E: the self-inclusion check fires)
	inflation          // claims its true neighbors, the coalition and every other node (fabricated links)
)

// network drives one State per node over a dynamic graph the way a node
// would: claims go to the current neighbors with the forwards of the
// previous round (one round per hop), every delivery is heard.
type network struct {
	dyn       topology.Dynamic
	ids       []*wire.Identity
	states    []*State
	behave    []behavior
	coalition []uint32
	pending   [][]wire.Claim
	round     uint64
}

func newNetwork(tb testing.TB, dyn topology.Dynamic, seed uint64, behave []behavior) *network {
	tb.Helper()
	return newNetworkConfig(tb, dyn, seed, behave, DefaultConfig())
}

func newNetworkConfig(tb testing.TB, dyn topology.Dynamic, seed uint64, behave []behavior, cfg Config) *network {
	tb.Helper()
	n := dyn.N()
	ids, dir := wire.SimIdentities(seed, n)
	nw := &network{dyn: dyn, ids: ids, behave: behave, pending: make([][]wire.Claim, n)}
	g0 := dyn.At(0)
	for i := range n {
		s, err := New(ids[i], dir, u32(g0.Out(i)), cfg)
		if err != nil {
			tb.Fatal(err)
		}
		nw.states = append(nw.states, s)
		if behave[i] != honest {
			nw.coalition = append(nw.coalition, uint32(i))
		}
	}
	return nw
}

func u32(xs []int) []uint32 {
	out := make([]uint32, len(xs))
	for k, x := range xs {
		out[k] = uint32(x)
	}
	return out
}

// claimed is the neighbor list node i claims in a round whose true
// neighbors are nb.
func (nw *network) claimed(i int, nb []uint32) []uint32 {
	switch nw.behave[i] {
	case omission:
		return nw.coalition
	case inflation:
		all := make([]uint32, len(nw.states))
		for k := range all {
			all[k] = uint32(k)
		}
		return all // OwnClaim drops i itself
	}
	return nb
}

// step runs one round and fails on any driver-side error.
func (nw *network) step(tb testing.TB) {
	tb.Helper()
	g := nw.dyn.At(int(nw.round))
	claims := make([]wire.Claim, len(nw.states))
	for i, s := range nw.states {
		if err := s.BeginRound(nw.round); err != nil {
			tb.Fatal(err)
		}
		c, err := s.OwnClaim(nw.claimed(i, u32(g.Out(i))))
		if err != nil {
			tb.Fatal(err)
		}
		claims[i] = c
	}
	for i := range nw.states {
		for _, j := range g.Out(i) {
			r := nw.states[j]
			if err := r.Heard(uint32(i)); err != nil {
				tb.Fatal(err)
			}
			r.Ingest(uint32(i), &claims[i])
			for k := range nw.pending[i] {
				r.Ingest(uint32(i), &nw.pending[i][k])
			}
		}
	}
	for i, s := range nw.states {
		if _, err := s.EndRound(); err != nil {
			tb.Fatal(err)
		}
		nw.pending[i] = s.Forwards()
	}
	nw.round++
}

// meanTrust returns the mean T_topo honest nodes hold in honest peers and
// in the liars, over all pairs.
func (nw *network) meanTrust() (inHonest, inLiars float64) {
	all := make([]int, len(nw.states))
	for k := range all {
		all[k] = k
	}
	return nw.trustSplit(func(int) []int { return all })
}

// neighborTrust is meanTrust restricted to the pairs the gate judges: an
// honest node and a neighbor it has this round.
func (nw *network) neighborTrust() (inHonest, inLiars float64) {
	g := nw.dyn.At(int(nw.round) - 1)
	return nw.trustSplit(g.Out)
}

// trustSplit averages the trust each honest node i holds in the peers
// peersOf(i), separately for honest peers and liars.
func (nw *network) trustSplit(peersOf func(i int) []int) (inHonest, inLiars float64) {
	var sum [2]float64
	var n [2]int
	for i, s := range nw.states {
		if nw.behave[i] != honest {
			continue
		}
		for _, j := range peersOf(i) {
			if j == i {
				continue
			}
			k := 0
			if nw.behave[j] != honest {
				k = 1
			}
			sum[k] += s.Trust(uint32(j))
			n[k]++
		}
	}
	return sum[0] / float64(max(n[0], 1)), sum[1] / float64(max(n[1], 1))
}

func mobility(tb testing.TB, n int, seed uint64) topology.Dynamic {
	tb.Helper()
	cfg := topology.DefaultMobility(n, seed)
	cfg.Connect = true
	m, err := topology.NewMobility(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	return m
}

// TestLiarsAtThirtyPercent: on a 10-node mobility
// graph with 3 omission liars, the mean trust honest nodes hold in the
// liars among their current neighbors — the peers the gate judges — falls
// below τ_trust = 0.25 within 10 rounds, while their trust in honest
// neighbors stays high. (Trust in non-adjacent peers rests on forwarded
// claims only, which a liar keeps consistent: see the package example.)
func TestLiarsAtThirtyPercent(t *testing.T) {
	behave := make([]behavior, 10)
	behave[2], behave[5], behave[7] = omission, omission, omission
	nw := newNetwork(t, mobility(t, 10, 42), 42, behave)
	below := -1
	for r := range 10 {
		nw.step(t)
		h, l := nw.neighborTrust()
		ah, al := nw.meanTrust()
		t.Logf("round %d: neighbors: honest %.3f liars %.3f; all pairs: honest %.3f liars %.3f", r, h, l, ah, al)
		if below < 0 && l < DefaultConfig().TauTrust {
			below = r
		}
	}
	h, l := nw.neighborTrust()
	if below < 0 || l >= DefaultConfig().TauTrust {
		t.Fatalf("liars' mean trust %.3f after 10 rounds, gate %.2f", l, DefaultConfig().TauTrust)
	}
	if h < 0.8 {
		t.Errorf("honest neighbors' mean trust %.3f after 10 rounds", h)
	}
}
