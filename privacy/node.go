package privacy

import (
	"fmt"
	"math"
)

// NodeDP is everything node-level DP keeps for one node: the Gaussian
// mechanism its round updates go through, the noise source, the accountant
// and the δ at which its ε is reported. A node.Layer holds one and calls
// Release once per round on the update it is about to send and Epsilon
// when the round ends. Not safe for concurrent use.
type NodeDP struct {
	mech   *Gaussian
	src    Source
	acct   *Accountant
	delta  float64
	method Method
}

// NewNodeDP checks the settings (clip > 0, noise multiplier > 0, δ in
// (0, 1), a source) and returns the node's DP state over the spec's order
// grid. Errors name the setting, its value and the allowed range.
func NewNodeDP(clip, multiplier, delta float64, src Source) (*NodeDP, error) {
	g, err := NewGaussian(clip, multiplier)
	if err != nil {
		return nil, err
	}
	if !(delta > 0 && delta < 1) {
		return nil, fmt.Errorf("node-level DP: delta = %v, allowed range (0, 1)", delta)
	}
	if src == nil {
		return nil, fmt.Errorf("node-level DP: no noise source")
	}
	acct, err := NewAccountant(nil)
	if err != nil {
		return nil, err
	}
	return &NodeDP{mech: g, src: src, acct: acct, delta: delta, method: MethodRDP}, nil
}

// UseAccountant makes Epsilon report ε under m (MethodRDP by default). The
// RDP accountant keeps counting the releases either way: every release is
// the same Gaussian event, so the PLD of the composition is that event's
// n-fold one.
func (n *NodeDP) UseAccountant(m Method) error {
	if _, err := ParseMethod(string(m)); err != nil {
		return fmt.Errorf("node-level DP: %w", err)
	}
	n.method = m
	return nil
}

// UseOrders makes the accountant compute ε over orders (DenseOrders, say)
// instead of the default grid; only before the first release.
func (n *NodeDP) UseOrders(orders []float64) error {
	if n.acct.Steps() > 0 {
		return fmt.Errorf("node-level DP: the order grid changed after %d releases", n.acct.Steps())
	}
	a, err := NewAccountant(orders)
	if err != nil {
		return err
	}
	n.acct = a
	return nil
}

// Release clips update in place to the clip norm, adds the noise and
// charges one release (no amplification: the node releases every round
// from all of its data).
func (n *NodeDP) Release(update []float32) (Released, error) {
	rel, err := n.mech.Release(update, n.src)
	if err != nil {
		return rel, err
	}
	return rel, n.acct.Compose(rel.Event, 1)
}

// Epsilon is the node's ε at its δ after the releases so far (0 before
// the first), under its accountant.
func (n *NodeDP) Epsilon() float64 { return n.Reading().Epsilon }

// Reading is Epsilon with the accountant that gave it: PLD's when asked
// for and it succeeded, RDP's otherwise (with the reason PLD failed).
func (n *NodeDP) Reading() Reading {
	r, err := n.acct.Reading(n.method, n.mech.ev, n.delta)
	if err != nil {
		// δ was checked at construction and RDP values are never NaN or
		// negative; report no guarantee rather than a wrong one.
		r.Epsilon = math.Inf(1)
	}
	return r
}

// Clip is the L2 bound of the released update; Multiplier is z.
func (n *NodeDP) Clip() float64       { return n.mech.Clip() }
func (n *NodeDP) Multiplier() float64 { return n.mech.Multiplier() }

// Delta is the δ the node's ε is reported at.
func (n *NodeDP) Delta() float64 { return n.delta }

// Releases is the number of releases charged.
func (n *NodeDP) Releases() int { return n.acct.Steps() }

// Accountant is the node's accountant, for charging other releases (e.g.
// the DP-SGD steps of sample-level DP with GaussianEvent{z, Poisson(q)}).
func (n *NodeDP) Accountant() *Accountant { return n.acct }

// DefaultDelta is the default δ for a node holding n records:
// 1/n rounded down to a power of ten (n = 600 → 1e-3, n = 60000 → 1e-5),
// and at most 0.1 so that it is a valid δ even for n = 1.
func DefaultDelta(n int) float64 {
	k := 0
	for p := 1; p < n; p *= 10 {
		k++
	}
	return math.Pow(10, -float64(max(k, 1)))
}
