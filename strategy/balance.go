package strategy

import (
	"errors"
	"math"

	"github.com/trellis-fl/trellis/vec"
)

var balanceRow = Row{
	Name:    "balance",
	Summary: "accept a neighbour's model within a shrinking radius of the own model, then mix",
	// Async: the test compares each input with the node's own model only,
	// never inputs with each other, so inputs of other steps change
	// nothing in it; t is the node's own step (View.Round). A stale input
	// is farther from the own model and so more often refused, never
	// more often accepted for being stale.
	Async: true,
	Options: []Option{
		{Name: "gamma", Default: BalanceGamma, Lo: 0, Hi: math.Inf(1), LoOpen: true, HiOpen: true},
		{Name: "kappa", Default: BalanceKappa, Lo: 0, Hi: math.Inf(1), HiOpen: true},
		{Name: "alpha", Default: BalanceAlpha, Lo: 0, Hi: 1},
	},
	build: func(_ Params, o Values) (Strategy, error) {
		return &BALANCE{Gamma: o["gamma"], Kappa: o["kappa"], Alpha: o["alpha"]}, nil
	},
}

// BALANCE (Fang et al., CCS 2024; docs/methods/toolbox.md, "Peer-side
// defences", BALANCE): node i accepts neighbor model x_j when
//
//	||x_0 − x_j|| ≤ γ·exp(−κ·t/T)·||x_0||
//
// with t = View.Round and T = View.Rounds, then sets
// x_0 ← α·x_0 + (1−α)·mean(accepted); when nothing is accepted it keeps x_0.
// Spec defaults: γ = 0.3, κ = 1, α = 0.5 (New("balance", Params{}) sets
// them; fields are used as set). Accepted senders get weight (1−α)/|A|,
// rejected ones 0.
type BALANCE struct {
	Gamma, Kappa, Alpha float64
	p                   peerInputs
}

// Spec defaults of BALANCE.
const (
	BalanceGamma = 0.3
	BalanceKappa = 1.0
	BalanceAlpha = 0.5
)

func (b *BALANCE) Name() string { return "balance" }

// AsyncInputs: BALANCE is defined for asynchronous inputs (its row's Async).
func (b *BALANCE) AsyncInputs() bool { return true }

// Share sends the trained model to every out-neighbor.
func (b *BALANCE) Share(v *View) []Outgoing { return shareModel(v) }

// Combine accepts the neighbors within the shrinking radius and averages.
func (b *BALANCE) Combine(v *View, in []Incoming) (map[int]float64, error) {
	if !(b.Gamma > 0) || !(b.Kappa >= 0) || !(b.Alpha >= 0 && b.Alpha <= 1) {
		return nil, errors.New("balance: need gamma > 0, kappa >= 0, alpha in [0, 1] (New(\"balance\", Params{}) gives the defaults)")
	}
	if v.Rounds <= 0 {
		return nil, errors.New("balance: View.Rounds must be > 0 (the threshold decays with t/T)")
	}
	w := v.Model.Params()
	if err := b.p.gather(in, len(w)); err != nil {
		return nil, err
	}
	b.p.distances(w)
	radius := b.Gamma * math.Exp(-b.Kappa*float64(v.Round)/float64(v.Rounds)) * vec.Norm(w)
	accepted := 0
	for _, d := range b.p.dist {
		if d <= radius {
			accepted++
		}
	}
	if accepted > 0 {
		c := (1 - b.Alpha) / float64(accepted)
		for k, d := range b.p.dist {
			if d <= radius {
				b.p.coef[k] = c
			}
		}
	}
	return b.p.apply(w), nil
}
