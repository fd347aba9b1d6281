package topology

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
)

// The torus random-walk mobility model of the DMTT paper, §V-C
// (paper Eqs. 19–20), with the paper's Table II values.
const (
	TorusSide    = 100.0 // A: side of the torus
	MaxStep      = 8.0   // vmax: largest displacement per axis per round
	ContactRange = 40.0  // r_c: an edge needs torus distance < r_c
)

// MobilityConfig describes a torus random-walk mobility model.
type MobilityConfig struct {
	N       int     // nodes, 1..MaxNodes
	Seed    uint64  // the shared seed every node rebuilds G^t from
	Side    float64 // A > 0
	MaxStep float64 // vmax >= 0
	Range   float64 // r_c >= 0
	Connect bool    // the optional connectivity guarantee (see TorusGraph)
}

// DefaultMobility is the DMTT paper's model for n nodes: A = 100, vmax = 8,
// r_c = 40, without the connectivity guarantee (the caller opts in).
func DefaultMobility(n int, seed uint64) MobilityConfig {
	return MobilityConfig{N: n, Seed: seed, Side: TorusSide, MaxStep: MaxStep, Range: ContactRange}
}

// checkpointEvery is the spacing, in rounds, of the saved states Mobility
// replays from when asked for an earlier round.
const checkpointEvery = 64

// Mobility is the seeded torus random walk (the DMTT paper, §V-C). It is
// a Dynamic: At(t) is the contact graph TorusGraph(positions at round t, A,
// r_c, Connect).
//
// The generator, part of the contract so any process can rebuild G^t from the
// seed alone: one PCG from math/rand/v2, seeded as
//
//	h   = splitmix64(splitmix64(splitmix64(Seed) ^ 4) ^ 0)
//	pcg = rand.NewPCG(h, splitmix64(h ^ 0x6a09e667f3bcc909))
//
// with splitmix64 the SplitMix64 finalizer, and read through
// rand.New(pcg).Float64() in this order only:
//
//	round 0:  for i = 0..N-1:  x_i = A·u, y_i = A·u            (u = next Float64)
//	round t:  for i = 0..N-1:  x_i = (x_i + vmax·(2u−1)) mod A, then the same for y_i
//
// so δ is uniform on [−vmax, vmax)² and positions stay in [0, A).
//
// Cost: positions are a sequential stream, so round t needs t steps of O(N)
// from round 0. Mobility keeps the latest state and a checkpoint every 64
// rounds (N·16 bytes each), so moving forward costs O(N) per round and going
// back at most 63 steps — negligible next to the O(N²) graph build. The last
// graph built is cached, so all nodes asking for the same round share it.
// Safe for concurrent use.
type Mobility struct {
	cfg MobilityConfig

	mu          sync.Mutex
	cur         mobilityState
	checkpoints []mobilityState // checkpoints[k] is round k·checkpointEvery
	scratch     []Edge
	lastRound   int
	last        *Graph
}

type mobilityState struct {
	round int
	pcg   rand.PCG
	pos   []Point
}

// NewMobility validates cfg and returns the model positioned at round 0.
func NewMobility(cfg MobilityConfig) (*Mobility, error) {
	if err := checkN("Mobility", cfg.N, 1); err != nil {
		return nil, err
	}
	finite := func(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
	if !finite(cfg.Side) || cfg.Side <= 0 {
		return nil, fmt.Errorf("topology: Mobility: Side = %v, want a finite side > 0", cfg.Side)
	}
	if !finite(cfg.MaxStep) || cfg.MaxStep < 0 {
		return nil, fmt.Errorf("topology: Mobility: MaxStep = %v, want a finite vmax >= 0", cfg.MaxStep)
	}
	if !finite(cfg.Range) || cfg.Range < 0 {
		return nil, fmt.Errorf("topology: Mobility: Range = %v, want a finite r_c >= 0", cfg.Range)
	}
	m := &Mobility{cfg: cfg, lastRound: -1}
	m.cur = mobilityState{pcg: pcgFor(cfg.Seed, purposeMobility, 0), pos: make([]Point, cfg.N)}
	r := rand.New(&m.cur.pcg)
	for i := range m.cur.pos {
		x := cfg.Side * r.Float64()
		y := cfg.Side * r.Float64()
		m.cur.pos[i] = Point{clampBelow(x, cfg.Side), clampBelow(y, cfg.Side)}
	}
	m.checkpoints = append(m.checkpoints, m.cur.clone())
	return m, nil
}

// clampBelow maps the one value A·u can round to, A itself, back to 0, so
// positions lie in [0, A) as the torus requires.
func clampBelow(x, side float64) float64 {
	if x >= side {
		return 0
	}
	return x
}

// N is the number of nodes.
func (m *Mobility) N() int { return m.cfg.N }

// Config returns the model's configuration.
func (m *Mobility) Config() MobilityConfig { return m.cfg }

// Positions returns a copy of every node's position at round >= 0.
func (m *Mobility) Positions(round int) []Point {
	checkRound(round)
	m.mu.Lock()
	defer m.mu.Unlock()
	m.seek(round)
	out := make([]Point, len(m.cur.pos))
	copy(out, m.cur.pos)
	return out
}

// At returns G^round, the contact graph of the positions at that round.
func (m *Mobility) At(round int) *Graph {
	checkRound(round)
	m.mu.Lock()
	defer m.mu.Unlock()
	if round == m.lastRound {
		return m.last
	}
	m.seek(round)
	g, scratch := torusGraph(m.cur.pos, m.cfg.Side, m.cfg.Range, m.cfg.Connect, m.scratch)
	m.scratch = scratch
	m.lastRound, m.last = round, g
	return g
}

// seek moves the current state to round, replaying from the latest checkpoint
// at or before it when round is behind the current state.
func (m *Mobility) seek(round int) {
	if round < m.cur.round {
		c := m.checkpoints[min(round/checkpointEvery, len(m.checkpoints)-1)]
		m.cur.round, m.cur.pcg = c.round, c.pcg
		copy(m.cur.pos, c.pos)
	}
	r := rand.New(&m.cur.pcg)
	side, v := m.cfg.Side, m.cfg.MaxStep
	for m.cur.round < round {
		for i := range m.cur.pos {
			p := &m.cur.pos[i]
			// float64(...) rounds the product before the addition in wrap
			// (no FMA fusion), so positions are the same on every platform.
			p.X = wrap(p.X, float64(v*(2*r.Float64()-1)), side)
			p.Y = wrap(p.Y, float64(v*(2*r.Float64()-1)), side)
		}
		m.cur.round++
		if m.cur.round%checkpointEvery == 0 && m.cur.round/checkpointEvery == len(m.checkpoints) {
			m.checkpoints = append(m.checkpoints, m.cur.clone())
		}
	}
}

func (s mobilityState) clone() mobilityState {
	s.pos = append([]Point(nil), s.pos...)
	return s
}
