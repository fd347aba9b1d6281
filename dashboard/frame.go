package dashboard

import (
	"math"
	"slices"
	"strconv"

	"github.com/trellis-fl/trellis/metrics"
)

// num is a float64 that encodes as JSON null when it is not finite (a
// diverged model's numbers must not break the stream).
type num float64

func (x num) MarshalJSON() ([]byte, error) {
	f := float64(x)
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return []byte("null"), nil
	}
	return strconv.AppendFloat(nil, f, 'g', 6, 64), nil
}

// spread is the mean, standard deviation, minimum and maximum of a value
// over the honest nodes.
type spread struct {
	Mean num `json:"mean"`
	Std  num `json:"std"`
	Min  num `json:"min"`
	Max  num `json:"max"`
}

func spreadOf(xs []float64) spread {
	if len(xs) == 0 {
		return spread{}
	}
	var s, s2 float64
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, x := range xs {
		s += x
		s2 += x * x
		lo, hi = min(lo, x), max(hi, x)
	}
	n := float64(len(xs))
	m := s / n
	return spread{Mean: num(m), Std: num(math.Sqrt(max(s2/n-m*m, 0))), Min: num(lo), Max: num(hi)}
}

// nodeFrame is one node's row of a round.
type nodeFrame struct {
	ID        int            `json:"id"`
	Byzantine bool           `json:"byz"`
	Evaluated bool           `json:"ev"`
	LocalAcc  num            `json:"local"`
	GlobalAcc num            `json:"global"`
	Loss      num            `json:"loss"`
	ByzWeight num            `json:"byzw"`
	InDegree  int            `json:"indeg"` // -1: unknown (a finished run's graph)
	Kept      int            `json:"kept"`  // in-neighbours given a positive weight (-1: unknown)
	Rejected  int            `json:"rejected"`
	Reasons   map[string]int `json:"reasons,omitempty"`
	Missing   bool           `json:"missing,omitempty"`
	Diverged  bool           `json:"diverged,omitempty"`
	Epsilon   *num           `json:"eps,omitempty"`
}

// edge is [from, to, weight the receiver gave the sender]; the weight is
// null when unknown (a finished run's graph).
type edge [3]any

// frame is one round of one run, as the page draws it.
type frame struct {
	Type      string                `json:"type"` // "round"
	Run       int                   `json:"run"`
	Round     int                   `json:"round"`
	Evaluated bool                  `json:"evaluated"`
	Local     spread                `json:"local"`
	Global    spread                `json:"global"`
	Loss      num                   `json:"loss"`
	DeltaMax  num                   `json:"delta_max"`
	ByzWeight num                   `json:"mean_byz_weight"`
	Diverged  int                   `json:"diverged,omitempty"`
	Trust     *trustFrame           `json:"trust,omitempty"`
	Privacy   *metrics.PrivacyRound `json:"privacy,omitempty"`
	// Scores are the agreement scores honest nodes gave honest and
	// Byzantine senders this round, by kind (LIGHTYEAR).
	Scores   map[string]*scoreFrame `json:"scores,omitempty"`
	Weighted bool                   `json:"weighted"` // edges carry weights
	// Time is, in an asynchronous run (read from disk, or live with its
	// step records), the virtual time at the window's end, Steps the mean
	// number of steps per node by then, Staleness the window's inputs
	// (absent in rounds).
	Time      *num            `json:"time,omitempty"`
	Steps     *num            `json:"steps,omitempty"`
	Staleness *stalenessFrame `json:"staleness,omitempty"`
	Nodes     []nodeFrame     `json:"nodes"`
	Edges     []edge          `json:"edges"`
}

// scoreFrame is one kind of agreement score's distribution over the
// (honest receiver, sender) pairs of a round, by the sender's side.
type scoreFrame struct {
	Honest    *spread `json:"honest,omitempty"` // nil: no such sender
	Byzantine *spread `json:"byzantine,omitempty"`
}

// trustFrame is the part of metrics.TrustRound the page plots.
type trustFrame struct {
	NeighborHonest    *num `json:"neighbor_honest,omitempty"`
	NeighborByzantine *num `json:"neighbor_byzantine,omitempty"`
	ScreenedHonest    *num `json:"screened_honest,omitempty"`
	ScreenedByzantine *num `json:"screened_byzantine,omitempty"`
}

func numPtr(p *float64) *num {
	if p == nil {
		return nil
	}
	v := num(*p)
	return &v
}

// newFrame turns a round's record into the page's frame. in gives the
// round's in-neighbours when r.Live does not (nil: no edges).
func newFrame(run int, r *metrics.Round, in func(i int) []int) *frame {
	f := &frame{Type: "round", Run: run, Round: r.Round, Evaluated: r.Evaluated, Loss: num(r.HonestLoss),
		DeltaMax: num(r.DeltaMax), ByzWeight: num(r.MeanByzWeight), Diverged: r.Diverged, Privacy: r.Privacy,
		Nodes: make([]nodeFrame, len(r.Nodes)), Edges: []edge{}}
	if t := r.Trust; t != nil {
		f.Trust = &trustFrame{NeighborHonest: numPtr(t.NeighborHonest), NeighborByzantine: numPtr(t.NeighborByzantine),
			ScreenedHonest: numPtr(t.ScreenedHonest), ScreenedByzantine: numPtr(t.ScreenedByzantine)}
	}
	live := r.Live
	if live != nil {
		f.Weighted = true
		in = func(i int) []int {
			if i < len(live.In) {
				return live.In[i]
			}
			return nil
		}
	}
	var local, global []float64
	for i, n := range r.Nodes {
		nf := nodeFrame{ID: n.Node, Byzantine: n.Byzantine, Evaluated: n.Evaluated, LocalAcc: num(n.LocalAcc),
			GlobalAcc: num(n.GlobalAcc), Loss: num(n.LocalLoss), ByzWeight: num(n.ByzWeight), Rejected: n.Rejected,
			Missing: n.Missing, Diverged: n.Diverged, Epsilon: numPtr(n.Epsilon), Kept: -1, InDegree: -1}
		if n.Evaluated && !n.Byzantine && !n.Missing {
			local, global = append(local, n.LocalAcc), append(global, n.GlobalAcc)
		}
		var w map[int]float64
		if live != nil {
			if i < len(live.Weights) {
				w = live.Weights[i]
			}
			if i < len(live.Rejections) && len(live.Rejections[i]) > 0 {
				nf.Reasons = live.Rejections[i]
			}
			nf.Kept = 0
		}
		if in != nil {
			nf.InDegree = 0
			ins := slices.Clone(in(i))
			slices.Sort(ins)
			for _, j := range ins {
				if j == i {
					continue
				}
				nf.InDegree++
				if live == nil {
					f.Edges = append(f.Edges, edge{j, i, nil})
					continue
				}
				wt := w[j]
				if wt > 0 {
					nf.Kept++
				}
				f.Edges = append(f.Edges, edge{j, i, num(wt)})
			}
		}
		f.Nodes[i] = nf
	}
	f.Local, f.Global = spreadOf(local), spreadOf(global)
	f.Scores = scoresOf(r.Nodes)
	return f
}

// scoresOf summarizes the agreement scores honest nodes gave, per kind
// and sender side (nil when no node reports scores).
func scoresOf(nodes []metrics.NodeRound) map[string]*scoreFrame {
	type sides struct{ h, b []float64 }
	by := map[string]*sides{}
	for _, n := range nodes {
		if n.Byzantine || n.Missing {
			continue
		}
		for _, sc := range n.Scores {
			if math.IsNaN(sc.Value) || math.IsInf(sc.Value, 0) {
				continue
			}
			sd := by[sc.Kind]
			if sd == nil {
				sd = &sides{}
				by[sc.Kind] = sd
			}
			if sc.Byzantine {
				sd.b = append(sd.b, sc.Value)
			} else {
				sd.h = append(sd.h, sc.Value)
			}
		}
	}
	if len(by) == 0 {
		return nil
	}
	out := make(map[string]*scoreFrame, len(by))
	for k, sd := range by {
		sf := &scoreFrame{}
		if len(sd.h) > 0 {
			h := spreadOf(sd.h)
			sf.Honest = &h
		}
		if len(sd.b) > 0 {
			b := spreadOf(sd.b)
			sf.Byzantine = &b
		}
		out[k] = sf
	}
	return out
}
