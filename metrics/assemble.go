package metrics

import (
	"fmt"
	"maps"
	"slices"

	"github.com/trellis-fl/trellis/node"
	"github.com/trellis-fl/trellis/topology"
	"github.com/trellis-fl/trellis/wire"
)

// Record completes a round's record from the nodes' Ready values (indexed
// by id) and the ground truth byz (who is Byzantine), over the round's
// graph g, then summarizes it: what every driver does after every round
// (the simulator, the cluster's monitor for nodes that run elsewhere), so
// that the same inputs give the same record. rec.Nodes must
// hold one record per node with Node, Byzantine, BytesSent and ClaimBytes
// filled in.
func Record(rec *Round, g *topology.Graph, byz []bool, ready []node.Ready) {
	n := len(rec.Nodes)
	trust := make([]*NodeTrust, n)
	live := &Live{In: make([][]int, n), Weights: make([]map[int]float64, n), Rejections: make([]map[string]int, n)}
	for i, rd := range ready {
		nr := &rec.Nodes[i]
		nr.TrainLoss, nr.Steps = rd.Train.MeanLoss, rd.Train.Steps
		nr.Rejected, nr.KeptOwn = rd.Rejected, rd.KeptOwn
		nr.Diverged = rd.Diverged
		nr.ByzWeight = byzWeight(rd.Weights, byz)
		if i < g.N() {
			live.In[i] = g.In(i)
		}
		live.Weights[i] = maps.Clone(rd.Weights)
		for _, rj := range rd.Rejections {
			if live.Rejections[i] == nil {
				live.Rejections[i] = map[string]int{}
			}
			live.Rejections[i][rj.Reason] += rj.Count
		}
		if ev := rd.Eval; ev != nil {
			nr.Evaluated = true
			nr.LocalAcc, nr.LocalLoss = ev.Local.Accuracy, ev.Local.Loss
			nr.GlobalAcc, nr.GlobalLoss = ev.Global.Accuracy, ev.Global.Loss
		}
		// Each layer's and the strategy's report fills its own fields.
		for _, r := range rd.Reports {
			switch r := r.(type) {
			case *node.SecAggReport:
				// The group mean's weights are the influence each sender
				// had (the strategy combined nothing it could see).
				nr.ByzWeight += byzWeight(r.Weights, byz)
				nr.SecAgg = &SecAggRound{Members: r.Members, Survivors: r.Survivors, Fallback: r.Fallback}
			case node.ScoresReport:
				for _, s := range r {
					b := s.From >= 0 && s.From < n && byz[s.From]
					nr.Scores = append(nr.Scores, Score{From: s.From, Byzantine: b, Kind: s.Kind, Value: s.Value})
				}
			case *node.DirectionReport:
				nr.Correction = &Correction{ClipFactor: r.ClipFactor, GdFactor: r.GdFactor, Prediction: r.Predicted, Empty: r.Empty}
			case *node.PrivacyReport:
				eps, delta := r.Epsilon, r.Delta
				nr.Epsilon, nr.Delta = &eps, &delta
				if r.Accountant != "rdp" || r.Fallback != "" {
					nr.Accountant, nr.AccountantFallback = r.Accountant, r.Fallback
				}
			case *node.TrustReport:
				trust[i] = &NodeTrust{Trust: r.Trust, Screened: r.Screened, Edges: r.Edges,
					ClaimsAccepted: r.ClaimsAccepted, ClaimsRejected: r.ClaimsRejected}
			}
		}
	}
	rec.Live = live
	rec.SummarizeTrust(g, trust)
	rec.Summarize()
}

// byzWeight sums the weights given to Byzantine senders in sender-id order,
// so the metric is bit-reproducible (map order is random); ids a strategy
// made up are ignored.
func byzWeight(w map[int]float64, byz []bool) float64 {
	ids := make([]int, 0, len(w))
	for id := range w {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	var s float64
	for _, id := range ids {
		if id >= 0 && id < len(byz) && byz[id] {
			s += w[id]
		}
	}
	return s
}

// Traffic is what node j's messages msgs put on the links of the round's
// graph g: the encoded size of every message once per link it is put on,
// dropped or not, and the part of it that carried topology claims (whole
// lists, or edge events in the events claim form).
func Traffic(g *topology.Graph, j int, msgs []*wire.Message) (bytes, claimBytes int, err error) {
	for _, m := range msgs {
		size, err := wire.EncodedSize(m)
		if err != nil {
			return 0, 0, fmt.Errorf("node %d: %w", j, err)
		}
		links := 1
		if m.To == wire.Broadcast {
			links = len(g.Out(j))
		}
		bytes += size * links
		if m.Kind == wire.KindClaim || m.Kind == wire.KindEvent { // edge events are claims too
			claimBytes += size * links
		}
	}
	return bytes, claimBytes, nil
}

// Evaluated reports whether a driver evaluates round (0-based) of rounds
// when it evaluates every every-th round: every every-th round and the
// last (every ≤ 1: every round).
func Evaluated(round, rounds, every int) bool {
	return every <= 1 || (round+1)%every == 0 || round == rounds-1
}
