package attack

import (
	"fmt"
	"math/rand/v2"
	"slices"
)

// AdaptiveReceiver is the defense-aware attack aimed at each receiver's own
// prediction, which is what R-DPFL's clip is designed against (the R-DPFL paper,
// Algorithm 2: the receiver clips the deviation of its robust aggregate from
// the direction it predicted from its own history). Receiver i aggregates
// its own neighborhood, so the attackers estimate i's prediction as the
// mean of the honest directions i received in the previous round, pred_i,
// and send i
//
//	pred_i − e·||pred_i||·cur_i/||cur_i||,
//
// cur_i the mean of the honest directions i receives this round: close to
// what i expects, pulled against where its honest neighbors go. It is
// omniscient (every honest payload, the round's graph) and reads history,
// like adaptive; adaptive is the same attack with one global estimate for
// every receiver. Where i had no honest in-neighbor last round (or in the
// first round) pred_i is cur_i; with no honest in-neighbor now it sends
// the global adaptive message.
//
// The estimate stops at the warm-up prediction dbar^{t−1} ≈ mean of
// honest inputs: the receiver's robust rule and its Barzilai–Borwein step
// are not replayed (that would need the receiver's state, which the
// driver does not hand the adversary).
type AdaptiveReceiver struct {
	// E is e, in (0, MaxScale]; 0 means DefaultEpsilon (default 0.1).
	E float64
}

// Name implements Attack.
func (AdaptiveReceiver) Name() string { return "adaptive_receiver" }

func (a AdaptiveReceiver) check() error {
	if !(a.E >= 0 && a.E <= MaxScale) {
		return fmt.Errorf("attack adaptive_receiver: epsilon = %v, allowed range (0, %g] (0 means %g)", a.E, float64(MaxScale), DefaultEpsilon)
	}
	return nil
}

func (AdaptiveReceiver) usesPrevious() bool { return true }

// Craft implements Attack.
func (a AdaptiveReceiver) Craft(dst []float32, v *View, honest []float32, from, to int, rng *rand.Rand) error {
	if err := a.check(); err != nil {
		return err
	}
	if err := checkLen("adaptive_receiver", dst, honest); err != nil {
		return err
	}
	g, err := honestOf("adaptive_receiver", v, len(dst))
	if err != nil {
		return err
	}
	if v.In == nil || len(v.From) != len(g) {
		return fmt.Errorf("attack adaptive_receiver: the driver gives no graph (View.From, View.In): it needs each receiver's neighborhood")
	}
	cur, ok := receiverMean(v, g, to)
	if !ok {
		return Adaptive{E: a.E}.Craft(dst, v, honest, from, to, rng)
	}
	return memoVector(v, fmt.Sprintf("adaptive_receiver/%g/%d", a.E, to), dst, func(out []float32) error {
		pred := cur
		if p := v.Previous; p != nil {
			if x, ok := p.peek(receiverKey(to)); ok && len(x.([]float64)) == len(cur) {
				pred = x.([]float64)
			}
		}
		pullAgainst(out, pred, cur, Adaptive{E: a.E}.e())
		return nil
	})
}

func receiverKey(to int) string { return fmt.Sprintf("receiver_mean/%d", to) }

// receiverMean is the mean of the honest payloads sent to receiver to
// (cached in v, where next round's Craft finds it after Settle); false
// when none of its in-neighbors is honest.
func receiverMean(v *View, g [][]float32, to int) ([]float64, bool) {
	x, _ := v.memo(receiverKey(to), func() (any, error) {
		in := v.In(to)
		var mean []float64
		k := 0
		for s, x := range g {
			if _, ok := slices.BinarySearch(in, v.From[s]); !ok {
				continue
			}
			if mean == nil {
				mean = make([]float64, len(x))
			}
			for j, y := range x {
				mean[j] += float64(y)
			}
			k++
		}
		for j := range mean {
			mean[j] /= float64(k)
		}
		return mean, nil
	})
	m := x.([]float64)
	return m, m != nil
}

// peek returns the value cached under key, if it was computed.
func (v *View) peek(key string) (any, bool) {
	v.mu.Lock()
	e, ok := v.cache[key]
	v.mu.Unlock()
	if !ok {
		return nil, false
	}
	e.once.Do(func() {}) // computed last round; a running computation is waited for
	return e.val, e.err == nil && e.val != nil
}
