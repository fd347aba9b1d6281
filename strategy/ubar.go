package strategy

import (
	"errors"
	"fmt"
	"math"
)

var ubarRow = Row{
	Name:    "ubar",
	Summary: "keep the nearest neighbours, then those whose loss on a local batch is at most the own",
	Options: []Option{
		{Name: "rho", Default: UBARRho, Lo: 0, Hi: 1, LoOpen: true},
		{Name: "alpha", Default: UBARAlpha, Lo: 0, Hi: 1},
	},
	build: func(_ Params, o Values) (Strategy, error) {
		return &UBAR{Rho: o["rho"], Alpha: o["alpha"]}, nil
	},
}

// UBAR (Guo et al. 2021; docs/methods/toolbox.md, "Peer-side
// defences", UBAR) selects neighbors in two stages:
//
//  1. keep the ceil(ρ·|N|) neighbors nearest to x_0 in Euclidean distance
//     (|N| = the neighbors whose model arrived; ties by sender id);
//  2. of those, keep the ones whose loss on one local training batch
//     (View.BatchLoss) is ≤ the loss of x_0 on it; if none, keep the one
//     with the lowest loss (ties: nearer first);
//
// then x_0 ← α·x_0 + (1−α)·mean(kept). With no neighbor x_0 is kept; a NaN
// loss never passes stage 2 (and if every loss is NaN nothing is kept).
// Spec defaults (New("ubar", Params{})): ρ = 0.4, α = 0.5; fields are used
// as set. Kept senders get weight (1−α)/|kept|, the others 0. UBAR needs
// View.BatchLoss and fails clearly without it.
type UBAR struct {
	Rho, Alpha float64
	p          peerInputs
	loss       []float64
}

// Spec defaults of UBAR.
const (
	UBARRho   = 0.4
	UBARAlpha = 0.5
)

func (u *UBAR) Name() string { return "ubar" }

// Share sends the trained model to every out-neighbor.
func (u *UBAR) Share(v *View) []Outgoing { return shareModel(v) }

// Combine runs the distance and loss stages and averages.
func (u *UBAR) Combine(v *View, in []Incoming) (map[int]float64, error) {
	if !(u.Rho > 0 && u.Rho <= 1) || !(u.Alpha >= 0 && u.Alpha <= 1) {
		return nil, errors.New("ubar: need rho in (0, 1], alpha in [0, 1] (New(\"ubar\", Params{}) gives the defaults)")
	}
	if v.BatchLoss == nil {
		return nil, errors.New("ubar: View.BatchLoss is nil: the node must provide the loss of parameters on one local training batch")
	}
	w := v.Model.Params()
	if err := u.p.gather(in, len(w)); err != nil {
		return nil, err
	}
	k := len(u.p.xs)
	if k == 0 {
		return u.p.weights(), nil
	}
	u.p.distances(w)
	// Stage 1. The small margin keeps ρ·k = 2 from becoming 3 by rounding.
	m := min(k, int(math.Ceil(u.Rho*float64(k)-1e-9)))
	near := u.p.sortedIndex(k, func(i int) float64 { return u.p.dist[i] })[:m]
	// Stage 2: all losses are computed before x_0 changes.
	own, err := v.BatchLoss(w)
	if err != nil {
		return nil, fmt.Errorf("ubar: loss of own model: %w", err)
	}
	u.loss = resize(u.loss, m)
	kept, best := 0, -1
	for r, i := range near {
		l, err := v.BatchLoss(u.p.xs[i].Vector)
		if err != nil {
			return nil, fmt.Errorf("ubar: loss of the model from %d: %w", u.p.xs[i].From, err)
		}
		u.loss[r] = l
		if l <= own {
			kept++
		}
		if !math.IsNaN(l) && (best < 0 || l < u.loss[best]) {
			best = r
		}
	}
	if kept == 0 && best >= 0 {
		kept = 1
		u.p.coef[near[best]] = 1 - u.Alpha
	} else if kept > 0 {
		c := (1 - u.Alpha) / float64(kept)
		for r, i := range near {
			if u.loss[r] <= own {
				u.p.coef[i] = c
			}
		}
	}
	return u.p.apply(w), nil
}
