package sim

import (
	"github.com/trellis-fl/trellis/topology"
	"github.com/trellis-fl/trellis/trust"
)

// TrustRound is the topology-trust diagnostics of a round (spec/dmtt.md,
// "Learning step" item 7), over the honest nodes that run a trust layer,
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
	// neighbor) pairs in which the neighbor passes the topology screen
	// (trust.State.Screened); ScreenedHonest likewise for honest neighbors.
	ScreenedHonest    *float64 `json:"screened_honest,omitempty"`
	ScreenedByzantine *float64 `json:"screened_byzantine,omitempty"`
	// Trusted views, mean per honest node: edges in the view, how many of
	// them are edges of the round's true graph, and the true graph's edges.
	ViewEdges     float64 `json:"view_edges"`
	ViewTrueEdges float64 `json:"view_true_edges"`
	TrueEdges     int     `json:"true_edges"`
	// Claims honest nodes took into their pools this round, and refused as
	// evidence against someone, by reason (trust.Reason).
	ClaimsAccepted uint64            `json:"claims_accepted"`
	ClaimsRejected map[string]uint64 `json:"claims_rejected,omitempty"`
	// ClaimBytesPerNode is the mean bytes of claims a node sent (one
	// count per link).
	ClaimBytesPerNode float64 `json:"claim_bytes_per_node"`
}

// trustStats snapshots every node's trust counters (zero without a layer).
func (r *runner) trustStats() []trust.Stats {
	out := make([]trust.Stats, len(r.nodes))
	for i, nd := range r.nodes {
		if ts := nd.Trust(); ts != nil {
			out[i] = ts.Stats()
		}
	}
	return out
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

// trustRound computes the round's diagnostics in node-id order, or nil
// when no honest node runs a trust layer.
func (r *runner) trustRound(g *topology.Graph, before []trust.Stats, rec *Round) *TrustRound {
	tr := &TrustRound{TrueEdges: g.NumEdges()}
	var nh, nb, ah, ab, sh, sb mean
	honest := 0
	for i, nd := range r.nodes {
		ts := nd.Trust()
		if ts == nil || r.byz[i] {
			continue
		}
		honest++
		screened := map[uint32]bool{}
		for _, j := range ts.Screened() {
			screened[j] = true
		}
		for _, j := range g.In(i) {
			t := ts.Trust(uint32(j))
			s := 0.0
			if screened[uint32(j)] {
				s = 1
			}
			if r.byz[j] {
				nb.add(t)
				sb.add(s)
			} else {
				nh.add(t)
				sh.add(s)
			}
		}
		for j := range r.nodes {
			if j == i {
				continue
			}
			if r.byz[j] {
				ab.add(ts.Trust(uint32(j)))
			} else {
				ah.add(ts.Trust(uint32(j)))
			}
		}
		edges := ts.Edges()
		tr.ViewEdges += float64(len(edges))
		for _, e := range edges {
			if int(e.U) < len(r.nodes) && int(e.V) < len(r.nodes) && g.HasEdge(int(e.U), int(e.V)) {
				tr.ViewTrueEdges++
			}
		}
		st := ts.Stats()
		tr.ClaimsAccepted += st.Accepted - before[i].Accepted
		for reason, c := range st.Rejected {
			d := c - before[i].Rejected[reason]
			if d > 0 && trust.Reason(reason).Evidence() {
				if tr.ClaimsRejected == nil {
					tr.ClaimsRejected = map[string]uint64{}
				}
				tr.ClaimsRejected[trust.Reason(reason).String()] += d
			}
		}
	}
	if honest == 0 {
		return nil
	}
	tr.NeighborHonest, tr.NeighborByzantine = nh.ptr(), nb.ptr()
	tr.AllHonest, tr.AllByzantine = ah.ptr(), ab.ptr()
	tr.ScreenedHonest, tr.ScreenedByzantine = sh.ptr(), sb.ptr()
	tr.ViewEdges /= float64(honest)
	tr.ViewTrueEdges /= float64(honest)
	var cb int
	for _, n := range rec.Nodes {
		cb += n.ClaimBytes
	}
	tr.ClaimBytesPerNode = float64(cb) / float64(len(rec.Nodes))
	return tr
}
