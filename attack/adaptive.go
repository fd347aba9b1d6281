package attack

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// Adaptive is R-DPFL's defense-aware attack (the R-DPFL paper,
// its experiments): the attackers predict the receiver's trend as the
// previous round's honest mean, pred = mean(G^{t−1}), and send
//
//	pred − e·||pred||·mean(G^t)/||mean(G^t)||,
//
// close to what a history-based prediction expects, yet pulled against
// the current honest direction. It assumes full knowledge of the honest
// payloads of this round and of the previous one (View.Previous); in the
// first round, with no history, pred is the current mean. When the current
// mean is zero the message is pred.
type Adaptive struct {
	// E is e, in (0, MaxScale]; 0 means DefaultEpsilon (default 0.1).
	E float64
}

// Name implements Attack.
func (Adaptive) Name() string { return "adaptive" }

func (a Adaptive) e() float64 {
	if a.E == 0 {
		return DefaultEpsilon
	}
	return a.E
}

func (a Adaptive) check() error {
	if !(a.E >= 0 && a.E <= MaxScale) {
		return fmt.Errorf("attack adaptive: epsilon = %v, allowed range (0, %g] (0 means %g)", a.E, float64(MaxScale), DefaultEpsilon)
	}
	return nil
}

// usesPrevious tells the driver to keep the previous round's View.
func (Adaptive) usesPrevious() bool { return true }

// Craft implements Attack.
func (a Adaptive) Craft(dst []float32, v *View, honest []float32, _, _ int, _ *rand.Rand) error {
	if err := a.check(); err != nil {
		return err
	}
	if err := checkLen("adaptive", dst, honest); err != nil {
		return err
	}
	g, err := honestOf("adaptive", v, len(dst))
	if err != nil {
		return err
	}
	return memoVector(v, fmt.Sprintf("%#v", a), dst, func(out []float32) error {
		cur := momentsOf(v, g).mean
		pred := cur
		if p := v.Previous; p != nil && p.settled != nil && len(p.settled.mean) == len(cur) {
			pred = p.settled.mean
		}
		pullAgainst(out, pred, cur, a.e())
		return nil
	})
}

// pullAgainst writes pred − e·||pred||·cur/||cur|| into out (pred when cur
// is zero): close to the prediction, pulled against the current direction.
func pullAgainst(out []float32, pred, cur []float64, e float64) {
	var pn, cn float64
	for j := range cur {
		pn += pred[j] * pred[j]
		cn += cur[j] * cur[j]
	}
	k := 0.0
	if cn > 0 {
		k = e * math.Sqrt(pn) / math.Sqrt(cn)
	}
	for j := range out {
		out[j] = float32(pred[j] - k*cur[j])
	}
}

// UsesPrevious reports whether a reads View.Previous, so the driver must
// Settle each round's View and pass it on.
func UsesPrevious(a Attack) bool {
	h, ok := a.(interface{ usesPrevious() bool })
	return ok && h.usesPrevious()
}

// Settle keeps the statistics of Honest that history-using attacks read
// next round and drops the payloads (the driver reuses their buffers) and
// the link to the round before. Call it after the round's last Craft.
func (v *View) Settle() {
	if len(v.Honest) > 0 {
		v.settled = momentsOf(v, v.Honest)
	}
	v.Honest, v.Previous, v.From, v.In = nil, nil, nil, nil
}
