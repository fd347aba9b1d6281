package trust

import (
	"errors"
	"fmt"
	"slices"

	"github.com/trellis-fl/trellis/wire"
)

// State is one node's topology-trust state (the DMTT paper,
// §III-D): direct neighbors and link reliability, the latest claim of every
// source, source trust, the trusted view. It is a pure state machine driven
// once per round:
//
//	BeginRound(t)
//	OwnClaim(neighbors)          -> broadcast to direct neighbors
//	Heard(j) for every authenticated message from j this round
//	Ingest(j, claim) for every claim j delivered (own, or forwarded)
//	EndRound()                   -> evidence, source trust, trusted view
//	Forwards()                   -> claims to forward to direct neighbors
//
// after which the queries (Trust, Screened, Edges, ...) describe the round.
// It is not safe for concurrent use; each node owns one.
type State struct {
	cfg   Config
	id    *wire.Identity
	self  uint32
	dir   *wire.Directory
	prior float64 // T_topo of a peer without evidence

	round   uint64
	started bool // BeginRound was called at least once
	open    bool // between BeginRound and EndRound
	version uint64

	peers map[uint32]*peer
	order []uint32 // ids of peers, increasing: every loop that matters runs in this order

	view     []Edge       // accepted edges between two other nodes, sorted
	evals    []EdgeStatus // this round's evaluation of every candidate edge, sorted
	forwards []wire.Claim
	stats    Stats

	// The node's own side of the events form (package doc, "Signed edge
	// events"); MarshalBinary refuses the events form.
	evo ownEvents
}

// ownEvents is the node's own neighbour list at its last OwnEvents
// (ownKnown once called), this round's own events, and the round of its
// last digest.
type ownEvents struct {
	own        []uint32
	ownKnown   bool
	pending    []wire.Event
	digested   bool
	lastDigest uint64
}

// peer is everything a node knows about one other node.
type peer struct {
	id uint32

	// Link (the DMTT paper, §III-D): direct is membership of N_dir.
	direct      bool
	silent      int // rounds since last heard
	heard       bool
	reliability float64

	// Source trust.
	beta   Beta
	trust  float64
	before float64  // trust when EndRound began (Rules' judgments use it)
	ev     Evidence // this round
	total  Evidence // since the start
	blamed [NumReasons]uint64

	// The source's latest accepted claim (has), its trust when accepted,
	// the highest version whose signature verified, the per-round budget,
	// and the claims accepted this round (for forwarding and evidence).
	has         bool
	claim       wire.Claim
	claimTrust  float64
	seen        uint64
	budgetRound uint64
	budgetUsed  int
	fresh       []wire.Claim

	// The known paths the current claim arrived by (Rules): a copy from
	// the source itself (hop 0), and the forwarders of its one-hop copies,
	// sorted.
	direct0 bool
	via     []uint32
	// hist holds the latest accepted claim of each of the source's last
	// MaxAge+1 rounds, oldest first, so claims of the same round can be
	// compared (Rules.Quorum).
	hist []wire.Claim

	// events is the source's record in the events form (nil otherwise).
	events *eventState
}

// EdgeStatus is the evaluation of one edge between two other nodes at the
// end of a round: its witness pools, confidence χ and whether it is in the
// trusted view.
type EdgeStatus struct {
	Edge       Edge
	Pools      Pools
	Confidence float64
	Accepted   bool
}

// Stats counts what a State did since it was made.
type Stats struct {
	Accepted  uint64             // claims taken into the pools
	Rejected  [NumReasons]uint64 // by reason (Accepted unused)
	Events    uint64             // edge events taken into the stances (events form)
	Forwarded uint64
	Refused   [NumForwardReasons]uint64 // forwarding refusals by reason (Forward unused)
	// Unattributed counts wire rejections reported through ObserveRejected
	// that are not topology evidence.
	Unattributed uint64
}

// Update is one source's trust update in a round.
type Update struct {
	Peer     uint32
	Evidence Evidence
	Trust    float64 // T_topo after the update
}

// Report summarizes EndRound.
type Report struct {
	Round   uint64
	Updates []Update // sources with new evidence, in id order
	// Edges between two other nodes: in the view after the round, and how
	// many entered and left it.
	Accepted, Added, Removed int
}

// New returns the state of node id, which verifies claims against dir and
// starts with the given direct neighbors (the topology at round 0). The
// directory must not change while the State uses it.
func New(id *wire.Identity, dir *wire.Directory, neighbors []uint32, cfg Config) (*State, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if id == nil || dir == nil {
		return nil, errors.New("trust: New needs an identity and a directory")
	}
	s := &State{cfg: cfg, id: id, self: id.ID(), dir: dir, peers: make(map[uint32]*peer)}
	s.prior = NewBeta().Trust(&s.cfg)
	for _, j := range neighbors {
		if j == s.self {
			return nil, fmt.Errorf("trust: node %d listed as its own neighbor", j)
		}
		if _, ok := dir.Key(j); !ok {
			return nil, fmt.Errorf("trust: neighbor %d not in the directory", j)
		}
		s.peer(j).direct = true
	}
	return s, nil
}

// peer returns id's record, creating it. Callers pass only ids of the
// directory, so records cannot grow beyond it.
func (s *State) peer(id uint32) *peer {
	if p := s.peers[id]; p != nil {
		return p
	}
	p := &peer{id: id, reliability: s.cfg.InitialReliability, beta: NewBeta(), trust: s.prior}
	s.peers[id] = p
	i, _ := slices.BinarySearch(s.order, id)
	s.order = slices.Insert(s.order, i, id)
	return p
}

// known reports whether id is a peer this node can hold a record for.
func (s *State) known(id uint32) bool {
	_, ok := s.dir.Key(id)
	return ok && id != s.self
}

// Self returns the node's id.
func (s *State) Self() uint32 { return s.self }

// Round returns the current (or last) round.
func (s *State) Round() uint64 { return s.round }

// Config returns the parameters.
func (s *State) Config() Config { return s.cfg }

// BeginRound starts round r, which must be later than the previous one; the
// previous round must have ended. It clears the per-round observations.
func (s *State) BeginRound(r uint64) error {
	if s.open {
		return fmt.Errorf("trust: round %d begun before round %d ended", r, s.round)
	}
	if s.started && r <= s.round {
		return fmt.Errorf("trust: round %d after round %d", r, s.round)
	}
	s.round, s.started, s.open = r, true, true
	for _, id := range s.order {
		p := s.peers[id]
		p.heard, p.ev, p.fresh = false, Evidence{}, p.fresh[:0]
		if p.events != nil {
			p.events.fresh = p.events.fresh[:0]
		}
	}
	s.forwards = s.forwards[:0]
	s.evo.pending = s.evo.pending[:0]
	return nil
}

func (s *State) checkOpen(what string) error {
	if !s.open {
		return fmt.Errorf("trust: %s outside a round (call BeginRound first)", what)
	}
	return nil
}

// OwnClaim returns this round's signed claim of the node's neighbor list
// (hop 0, the next version), to broadcast to its direct neighbors. The list
// is copied, sorted, deduplicated and stripped of the node itself; callers
// usually pass DirectNeighbors() or the shared topology's neighbors.
func (s *State) OwnClaim(neighbors []uint32) (wire.Claim, error) {
	if err := s.checkOpen("OwnClaim"); err != nil {
		return wire.Claim{}, err
	}
	nb, err := s.ownList(neighbors)
	if err != nil {
		return wire.Claim{}, err
	}
	c := wire.Claim{Source: s.self, Round: s.round, Version: s.version + 1, Neighbors: nb}
	if err := wire.SignClaim(&c, s.id); err != nil {
		return wire.Claim{}, err
	}
	s.version++
	s.evo.digested, s.evo.lastDigest = true, s.round
	return c, nil
}

// ownList returns the node's neighbour list as it signs it: copied,
// sorted, deduplicated, without the node, at most MaxNeighbors long.
func (s *State) ownList(neighbors []uint32) ([]uint32, error) {
	nb := slices.Clone(neighbors)
	slices.Sort(nb)
	nb = slices.Compact(nb)
	if i, ok := slices.BinarySearch(nb, s.self); ok {
		nb = slices.Delete(nb, i, i+1)
	}
	if len(nb) > s.cfg.MaxNeighbors {
		return nil, fmt.Errorf("trust: %d neighbors, limit %d", len(nb), s.cfg.MaxNeighbors)
	}
	return nb, nil
}

// Heard records that an authenticated message from j arrived this round: j
// is a direct neighbor, its link delivered, and the self-inclusion check
// applies to its claim for this round.
func (s *State) Heard(j uint32) error {
	if err := s.checkOpen("Heard"); err != nil {
		return err
	}
	if !s.known(j) {
		return fmt.Errorf("trust: heard from node %d, not a peer in the directory", j)
	}
	s.peer(j).heard = true
	return nil
}

// ObserveRejected turns a wire.Validator rejection of a claim message from
// `from` into evidence: a claim-content reason the sender provably signed
// (wire.Reason.Signed) is a q event against it, exactly as if Ingest had
// refused the claim. Other reasons are not topology evidence; it reports
// whether the event counted.
func (s *State) ObserveRejected(from uint32, r wire.Reason) bool {
	if !s.open || !s.known(from) || !r.Signed() {
		s.stats.Unattributed++
		return false
	}
	var tr Reason
	switch r {
	case wire.BadClaimSignature:
		tr = Forged
	case wire.BadHop:
		tr = BadHop
	case wire.UnknownSource, wire.SelfNeighbor, wire.DuplicateNeighbor, wire.UnsortedNeighbors:
		tr = Malformed
	default: // vector content: not about topology
		s.stats.Unattributed++
		return false
	}
	s.reject(tr, from, "")
	return true
}

// reject counts a rejection, charges a q event to blamed when the reason is
// evidence, and returns the error.
func (s *State) reject(r Reason, blamed uint32, detail string) error {
	s.stats.Rejected[r]++
	if r.Evidence() {
		p := s.peer(blamed)
		p.ev.Q++
		p.blamed[r]++
	}
	return &Rejection{Reason: r, Blamed: blamed, Detail: detail}
}
