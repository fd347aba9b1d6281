package attack

import (
	"fmt"
	"math/rand/v2"
)

// FangTrim is Fang et al.'s attack on the trimmed mean (USENIX Security
// 2020, full knowledge; spec: "fang_trim"). Per coordinate j, with s_j
// the direction the honest nodes move that coordinate and max_j, min_j the
// extremes of the honest values, it sends a value drawn uniformly beyond
// the honest extreme on the side opposite to s_j:
//
//	s_j < 0: [max_j, b·max_j] if max_j > 0, else [max_j, max_j/b]
//	s_j > 0: [min_j/b, min_j] if min_j > 0, else [b·min_j, min_j]
//
// (b = 2). Fang et al. attack the direction of change, so s_j is the sign
// of the honest mean's change, whatever is exchanged: for
// update payloads (View.Tag other than "model") the sign of their mean
// μ_j; for model payloads (Tag "model", the default exchange) the sign of
// μ_j − μ'_j, μ' the previous round's honest mean (View.Previous, as
// adaptive reads it). Without a previous round there is no change to read,
// and s_j = 0. The spec leaves s_j = 0 open; such a coordinate is sent as
// μ_j, since there is no direction to push against. It assumes full
// knowledge of the honest payloads of the round and ignores the
// attacker's own.
//
// Craft draws one rng.Float64 per coordinate, in coordinate order (for
// s_j = 0 too), and sends lo + u·(hi − lo) computed in float64.
type FangTrim struct {
	// B is b, in (1, MaxScale]; 0 means DefaultB.
	B float64
}

// Name implements Attack.
func (FangTrim) Name() string { return "fang_trim" }

func (a FangTrim) b() float64 {
	if a.B == 0 {
		return DefaultB
	}
	return a.B
}

func (a FangTrim) check() error {
	if !(a.B == 0 || (a.B > 1 && a.B <= MaxScale)) {
		return fmt.Errorf("attack fang_trim: b = %v, allowed range (1, %g] (0 means %d)", a.B, float64(MaxScale), DefaultB)
	}
	return nil
}

// Craft implements Attack.
func (a FangTrim) Craft(dst []float32, v *View, honest []float32, _, _ int, rng *rand.Rand) error {
	if err := a.check(); err != nil {
		return err
	}
	if err := checkLen("fang_trim", dst, honest); err != nil {
		return err
	}
	g, err := honestOf("fang_trim", v, len(dst))
	if err != nil {
		return err
	}
	if rng == nil {
		return fmt.Errorf("attack fang_trim: needs a random stream, got nil")
	}
	mu := momentsOf(v, g).mean
	var prev []float64 // nil: the payloads are changes
	if v.Tag == "model" {
		prev = mu // no previous round: no change, s = 0
		if p := v.Previous; p != nil && p.settled != nil && len(p.settled.mean) == len(mu) {
			prev = p.settled.mean
		}
	}
	lo32, hi32 := extremesOf(v, g)
	b := a.b()
	for j := range dst {
		u := rng.Float64()
		s := mu[j]
		if prev != nil {
			s -= prev[j]
		}
		var lo, hi float64
		switch mx, mn := float64(hi32[j]), float64(lo32[j]); {
		case s < 0 && mx > 0:
			lo, hi = mx, b*mx
		case s < 0:
			lo, hi = mx, mx/b
		case s > 0 && mn > 0:
			lo, hi = mn/b, mn
		case s > 0:
			lo, hi = b*mn, mn
		default:
			lo, hi = mu[j], mu[j]
		}
		dst[j] = float32(lo + u*(hi-lo))
	}
	return nil
}

// usesPrevious tells the driver to keep the previous round's View: the
// direction of model payloads is their change.
func (FangTrim) usesPrevious() bool { return true }
