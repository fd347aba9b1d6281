package strategy

import "fmt"

var scclipRow = Row{
	Name:     "scclip",
	Summary:  "self-centered clipping: move by the mean of the neighbours' differences clipped at the (f+1)-th largest",
	F:        true,
	DefaultF: SCClipF,
	build: func(p Params, _ Values) (Strategy, error) {
		return &SCClip{F: fOr(p, SCClipF)}, nil
	},
}

// SCClip is self-centered clipping (docs/methods/toolbox.md, "Peer-side
// defences", SCClip):
//
//	x_0 ← x_0 + mean_j Clip(x_j − x_0; τ)
//
// over the node's own model (a zero step) and its k neighbors, so the mean
// divides by k+1, with Clip(d; τ) = d·min(1, τ/||d||) and τ the (F+1)-th
// largest ||x_j − x_0||. The default is F = 1 (τ = the second largest
// distance), set by New("scclip", Params{}); the field is used as set. With
// F or fewer neighbors τ = 0 and the node keeps x_0 (any of them may be
// faulty). Sender j's weight is min(1, τ/||x_j − x_0||)/(k+1).
type SCClip struct {
	F       int
	p       peerInputs
	scratch []float64
}

// SCClipF is the default of SCClip.F.
const SCClipF = 1

func (s *SCClip) Name() string { return "scclip" }

// Share sends the trained model to every out-neighbor.
func (s *SCClip) Share(v *View) []Outgoing { return shareModel(v) }

// Combine moves x_0 by the mean of the clipped differences.
func (s *SCClip) Combine(v *View, in []Incoming) (map[int]float64, error) {
	if s.F < 0 {
		return nil, fmt.Errorf("scclip: f = %d, need f >= 0", s.F)
	}
	w := v.Model.Params()
	if err := s.p.gather(in, len(w)); err != nil {
		return nil, err
	}
	s.p.distances(w)
	tau := clipRadius(s.p.dist, s.F, &s.scratch)
	share := 1 / float64(len(s.p.xs)+1)
	for k, d := range s.p.dist {
		s.p.coef[k] = share * clipFactor(d, tau)
	}
	return s.p.apply(w), nil
}

var clippedGossipRow = Row{
	Name:      "clipped_gossip",
	Summary:   "gossip with clipped differences, clipping at most the f farthest",
	Weighting: true,
	F:         true,
	DefaultF:  SCClipF,
	build: func(p Params, _ Values) (Strategy, error) {
		return &ClippedGossip{F: fOr(p, SCClipF), Weighting: p.Weighting}, nil
	},
}

// ClippedGossip (He, Karimireddy and Jaggi 2022; docs/methods/toolbox.md,
// "Peer-side defences", ClippedGossip):
//
//	x_0 ← x_0 + Σ_j w_ij·Clip(x_j − x_0; τ_i)
//
// with w_ij from Weighting (uniform 1/(1+k), or Metropolis–Hastings
// 1/(1+max(deg_i, deg_j))) and τ_i the (F+1)-th largest neighbor distance,
// so at most the F farthest neighbors are clipped (ties at τ_i are not
// clipped); with F or fewer neighbors τ_i = 0 and x_0 is kept. The spec
// gives no default F; New("clipped_gossip", Params{}) uses 1, like SCClip.
// With uniform weights ClippedGossip coincides with SCClip. Sender j's
// weight is w_ij·min(1, τ_i/||x_j − x_0||).
type ClippedGossip struct {
	F         int
	Weighting Weighting
	p         peerInputs
	scratch   []float64
	ws        []float64
	from      []int
}

func (c *ClippedGossip) Name() string { return "clipped_gossip" }

// Share sends the trained model to every out-neighbor.
func (c *ClippedGossip) Share(v *View) []Outgoing { return shareModel(v) }

// Combine gossips with clipped differences.
func (c *ClippedGossip) Combine(v *View, in []Incoming) (map[int]float64, error) {
	if c.F < 0 {
		return nil, fmt.Errorf("clipped_gossip: f = %d, need f >= 0", c.F)
	}
	w := v.Model.Params()
	if err := c.p.gather(in, len(w)); err != nil {
		return nil, err
	}
	c.p.distances(w)
	tau := clipRadius(c.p.dist, c.F, &c.scratch)
	c.from = c.from[:0]
	for _, m := range c.p.xs {
		c.from = append(c.from, m.From)
	}
	_, c.ws = c.Weighting.weights(v, c.from, c.ws)
	for k, d := range c.p.dist {
		c.p.coef[k] = c.ws[k] * clipFactor(d, tau)
	}
	return c.p.apply(w), nil
}
