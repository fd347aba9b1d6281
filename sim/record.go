package sim

import (
	"maps"

	"github.com/trellis-fl/trellis/metrics"
	"github.com/trellis-fl/trellis/node"
	"github.com/trellis-fl/trellis/topology"
)

// Record completes a round's record from the nodes' Ready values (indexed
// by id) and the ground truth byz (who is Byzantine), over the round's
// graph g, then summarizes it: what the simulator does after every round,
// exported so that a driver whose nodes run elsewhere (the cluster's
// monitor) builds the same record from the same inputs. rec.Nodes must
// hold one record per node with Node, Byzantine, BytesSent and ClaimBytes
// filled in.
func Record(rec *metrics.Round, g *topology.Graph, byz []bool, ready []node.Ready) {
	n := len(rec.Nodes)
	trust := make([]*metrics.NodeTrust, n)
	live := &metrics.Live{In: make([][]int, n), Weights: make([]map[int]float64, n), Rejections: make([]map[string]int, n)}
	for i, rd := range ready {
		nr := &rec.Nodes[i]
		nr.TrainLoss, nr.Steps = rd.Train.MeanLoss, rd.Train.Steps
		nr.Rejected = rd.Rejected
		nr.Diverged = rd.Diverged
		nr.ByzWeight = byzWeight(rd.Weights, byz)
		if sa := rd.SecAgg; sa != nil {
			// The group mean's weights are the influence each sender had
			// (the strategy combined nothing it could see).
			nr.ByzWeight += byzWeight(sa.Weights, byz)
			nr.SecAgg = &metrics.SecAggRound{Members: sa.Members, Survivors: sa.Survivors, Fallback: sa.Fallback}
		}
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
		for _, s := range rd.Scores {
			b := s.From >= 0 && s.From < n && byz[s.From]
			nr.Scores = append(nr.Scores, metrics.Score{From: s.From, Byzantine: b, Kind: s.Kind, Value: s.Value})
		}
		if ev := rd.Eval; ev != nil {
			nr.Evaluated = true
			nr.LocalAcc, nr.LocalLoss = ev.Local.Accuracy, ev.Local.Loss
			nr.GlobalAcc, nr.GlobalLoss = ev.Global.Accuracy, ev.Global.Loss
		}
		if d := rd.Direction; d != nil {
			nr.Correction = &metrics.Correction{ClipFactor: d.ClipFactor, GdFactor: d.GdFactor, Prediction: d.Predicted, Empty: d.Empty}
		}
		if p := rd.Privacy; p != nil {
			eps, delta := p.Epsilon, p.Delta
			nr.Epsilon, nr.Delta = &eps, &delta
		}
		if t := rd.Trust; t != nil {
			trust[i] = &metrics.NodeTrust{Trust: t.Trust, Screened: t.Screened, Edges: t.Edges,
				ClaimsAccepted: t.ClaimsAccepted, ClaimsRejected: t.ClaimsRejected}
		}
	}
	rec.Live = live
	rec.SummarizeTrust(g, trust)
	rec.Summarize()
}
