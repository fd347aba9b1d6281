package metrics

// TrustRound is the topology-trust diagnostics of a round (the DMTT paper,
// §IV-E), over the honest nodes that run a trust layer,
// after they closed the round. A mean over no pair is absent.
type TrustRound struct {
	// Mean T_topo honest nodes hold in honest and in Byzantine peers among
	// their current neighbors (the round's in-neighbors: where the gate
	// τ_trust applies), and over every other node.
	NeighborHonest    *float64 `json:"neighbor_honest,omitempty"`
	NeighborByzantine *float64 `json:"neighbor_byzantine,omitempty"`
	AllHonest         *float64 `json:"all_honest,omitempty"`
	AllByzantine      *float64 `json:"all_byzantine,omitempty"`
	// ScreenedByzantine is the fraction of (honest node, Byzantine current
	// neighbor) pairs in which the neighbor passes the topology screen;
	// ScreenedHonest likewise for honest neighbors.
	ScreenedHonest    *float64 `json:"screened_honest,omitempty"`
	ScreenedByzantine *float64 `json:"screened_byzantine,omitempty"`
	// Trusted views, mean per honest node: edges in the view, how many of
	// them are edges of the round's true graph, and the true graph's edges.
	ViewEdges     float64 `json:"view_edges"`
	ViewTrueEdges float64 `json:"view_true_edges"`
	TrueEdges     int     `json:"true_edges"`
	// Claims honest nodes took into their pools this round, and refused as
	// evidence against someone, by reason.
	ClaimsAccepted uint64            `json:"claims_accepted"`
	ClaimsRejected map[string]uint64 `json:"claims_rejected,omitempty"`
	// ClaimBytesPerNode is the mean bytes of claims a node sent (one
	// count per link).
	ClaimBytesPerNode float64 `json:"claim_bytes_per_node"`
}

// NodeTrust is one node's topology-trust state at the end of a round, as
// the node reports it (node.TrustReport).
type NodeTrust struct {
	// Trust is T_topo by peer id (0 past the end).
	Trust    []float64
	Screened []int
	// Edges is the node's trusted view of the graph.
	Edges [][2]int
	// ClaimsAccepted and ClaimsRejected (evidence reasons only) count this
	// round's claims.
	ClaimsAccepted uint64
	ClaimsRejected map[string]uint64
}

func (t *NodeTrust) trust(j int) float64 {
	if j < 0 || j >= len(t.Trust) {
		return 0
	}
	return t.Trust[j]
}

// Graph is what the trust summary needs of the round's true graph
// (*topology.Graph has it).
type Graph interface {
	In(i int) []int
	HasEdge(u, v int) bool
	NumEdges() int
}

type mean struct {
	sum float64
	n   int
}

func (m *mean) add(x float64) { m.sum += x; m.n++ }
func (m *mean) ptr() *float64 {
	if m.n == 0 {
		return nil
	}
	v := m.sum / float64(m.n)
	return &v
}

// SummarizeTrust computes a round's trust diagnostics in node-id order from
// each node's report (nil for a node without a trust layer), the ground
// truth and the round's graph, into r.Trust, unless no honest node runs a
// trust layer (leaving Trust nil). Call it with the node records filled
// in (it reads their ClaimBytes).
func (r *Round) SummarizeTrust(g Graph, nodes []*NodeTrust) {
	tr := &TrustRound{TrueEdges: g.NumEdges()}
	var nh, nb, ah, ab, sh, sb mean
	byz := func(j int) bool { return j >= 0 && j < len(r.Nodes) && r.Nodes[j].Byzantine }
	honest := 0
	for i, ts := range nodes {
		if ts == nil || byz(i) {
			continue
		}
		honest++
		screened := map[int]bool{}
		for _, j := range ts.Screened {
			screened[j] = true
		}
		for _, j := range g.In(i) {
			t := ts.trust(j)
			s := 0.0
			if screened[j] {
				s = 1
			}
			if byz(j) {
				nb.add(t)
				sb.add(s)
			} else {
				nh.add(t)
				sh.add(s)
			}
		}
		for j := range nodes {
			if j == i {
				continue
			}
			if byz(j) {
				ab.add(ts.trust(j))
			} else {
				ah.add(ts.trust(j))
			}
		}
		tr.ViewEdges += float64(len(ts.Edges))
		for _, e := range ts.Edges {
			if e[0] < len(nodes) && e[1] < len(nodes) && g.HasEdge(e[0], e[1]) {
				tr.ViewTrueEdges++
			}
		}
		tr.ClaimsAccepted += ts.ClaimsAccepted
		for reason, c := range ts.ClaimsRejected {
			if c > 0 {
				if tr.ClaimsRejected == nil {
					tr.ClaimsRejected = map[string]uint64{}
				}
				tr.ClaimsRejected[reason] += c
			}
		}
	}
	if honest == 0 {
		return
	}
	tr.NeighborHonest, tr.NeighborByzantine = nh.ptr(), nb.ptr()
	tr.AllHonest, tr.AllByzantine = ah.ptr(), ab.ptr()
	tr.ScreenedHonest, tr.ScreenedByzantine = sh.ptr(), sb.ptr()
	tr.ViewEdges /= float64(honest)
	tr.ViewTrueEdges /= float64(honest)
	var cb int
	for _, n := range r.Nodes {
		cb += n.ClaimBytes
	}
	tr.ClaimBytesPerNode = float64(cb) / float64(len(r.Nodes))
	r.Trust = tr
}
