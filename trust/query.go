package trust

import "slices"

// PeerInfo is what a node knows about one peer, for the strategy and for
// diagnostics.
type PeerInfo struct {
	ID          uint32
	Direct      bool    // in N_dir
	Reliability float64 // p_ij
	Beta        Beta
	Reputation  float64  // R
	Uncertainty float64  // U
	Trust       float64  // T_topo
	Evidence    Evidence // cumulative
	// Blamed counts the rejections charged to this peer, by reason.
	Blamed [NumReasons]uint64
}

// Peer returns what the node knows about j. A peer of the directory the
// node has no record of has the priors (p = InitialReliability, Beta(1,1));
// an id outside the directory has trust and reliability 0.
func (s *State) Peer(j uint32) PeerInfo {
	p := s.peers[j]
	if p == nil {
		if !s.known(j) {
			return PeerInfo{ID: j}
		}
		p = &peer{id: j, reliability: s.cfg.InitialReliability, beta: NewBeta(), trust: s.prior}
	}
	return PeerInfo{
		ID: j, Direct: p.direct, Reliability: p.reliability,
		Beta: p.beta, Reputation: p.beta.Reputation(), Uncertainty: p.beta.Uncertainty(), Trust: p.trust,
		Evidence: p.total, Blamed: p.blamed,
	}
}

// Trust returns T_topo of j (0.5 for a peer without evidence, 0 for an id
// outside the directory).
func (s *State) Trust(j uint32) float64 {
	if p := s.peers[j]; p != nil {
		return p.trust
	}
	if s.known(j) {
		return s.prior
	}
	return 0
}

// Reliability returns p_ij (InitialReliability for a peer never heard, 0
// for an id outside the directory).
func (s *State) Reliability(j uint32) float64 { return s.Peer(j).Reliability }

// Peers returns, in increasing order, the ids the node holds a record of.
func (s *State) Peers() []uint32 { return slices.Clone(s.order) }

// DirectNeighbors returns N_dir in increasing order.
func (s *State) DirectNeighbors() []uint32 {
	var out []uint32
	for _, id := range s.order {
		if s.peers[id].direct {
			out = append(out, id)
		}
	}
	return out
}

// Screened returns, in increasing order, the reachable topology-screened
// neighbors (§IV-E step 2): direct neighbors with p_ij >= MinReliability and
// T_topo >= TauTrust.
func (s *State) Screened() []uint32 {
	var out []uint32
	for _, id := range s.order {
		p := s.peers[id]
		if p.direct && p.reliability >= s.cfg.MinReliability && p.trust >= s.cfg.TauTrust {
			out = append(out, id)
		}
	}
	return out
}

// Edges returns the trusted view Ĝ_i: the node's direct edges and the
// accepted edges between other nodes, in (U, V) order.
func (s *State) Edges() []Edge {
	out := slices.Clone(s.view)
	for _, j := range s.DirectNeighbors() {
		out = append(out, MakeEdge(s.self, j))
	}
	slices.SortFunc(out, compareEdges)
	return slices.Compact(out)
}

// EdgeStatus returns the last evaluation of the edge between u and v (two
// nodes other than this one); false if no current claim spoke of it.
func (s *State) EdgeStatus(u, v uint32) (EdgeStatus, bool) {
	return s.status(MakeEdge(u, v))
}

// Stats returns the node's counters.
func (s *State) Stats() Stats { return s.stats }
