package privacy

import (
	"errors"
	"fmt"
	"math"
	"sync"
)

// Charge is Count occurrences of one release, Event.
type Charge struct {
	Event Event
	Count int
}

// PLD is the privacy loss distribution of a composition of releases (see
// pld.go), read out as ε(δ) and δ(ε). Build it with ComposePLD.
type PLD struct {
	// gauss, when set, is the whole composition: releases of the Gaussian
	// mechanism without subsampling compose exactly into one Gaussian
	// mechanism with μ² = Σ count/z², whose δ(ε) is known in closed form
	// (Balle and Wang 2018), so nothing is discretized.
	gauss *gaussianProfile
	// up and down are the two directions of add/remove adjacency,
	// discretized and composed.
	up, down composeResult
	// Interval is the grid step of the privacy loss (0 for the exact
	// Gaussian).
	Interval float64
}

// pldLostFraction is the largest mass, as a fraction of δ, that the
// accountant accepts to have sent to +∞ by truncation and rounding before
// it calls its ε loose and refuses it.
const pldLostFraction = 1e-3

// ComposePLD composes the charges' privacy loss distributions: releases of
// the Gaussian mechanism without subsampling exactly, in closed form;
// anything else (a subsampled Gaussian, a Laplace release, a mix) on a
// grid of step 10⁻⁴ of the privacy loss, or the next power-of-two
// multiple of it whose composition fits the largest FFT, up to 0.05. An
// error says what it cannot do (too wide a composition, an invalid event).
func ComposePLD(charges ...Charge) (*PLD, error) {
	return composePLD(charges, pldInterval, true)
}

// composePLD is ComposePLD from grid step h; exactGaussian false composes
// the Gaussian releases on the grid like any other (for tests).
func composePLD(charges []Charge, h float64, exactGaussian bool) (*PLD, error) {
	var kept []Charge
	total, gaussMu2 := 0, 0.0
	for _, c := range charges {
		if c.Count < 0 {
			return nil, fmt.Errorf("pld: count = %d, need ≥ 0", c.Count)
		}
		if c.Event == nil {
			return nil, errors.New("pld: no event")
		}
		if err := c.Event.validate(); err != nil {
			return nil, err
		}
		if c.Count == 0 {
			continue
		}
		total += c.Count
		if g, ok := c.Event.(GaussianEvent); ok && exactGaussian && g.Sampling.Rate() == 1 {
			gaussMu2 += float64(c.Count) / (g.Multiplier * g.Multiplier)
			continue
		}
		kept = append(kept, c)
	}
	if total == 0 {
		return nil, errors.New("pld: nothing composed")
	}
	if len(kept) == 0 {
		return &PLD{gauss: &gaussianProfile{mu: math.Sqrt(gaussMu2)}}, nil
	}
	// The merged Gaussian releases join the grid as one release.
	type part struct {
		up, down profile
		count    int
	}
	var parts []part
	if gaussMu2 > 0 {
		g := gaussianProfile{mu: math.Sqrt(gaussMu2)}
		parts = append(parts, part{g, g, 1})
	}
	for _, c := range kept {
		up, down, err := profiles(c.Event)
		if err != nil {
			return nil, err
		}
		parts = append(parts, part{up, down, c.Count})
	}
	releases := 0
	for _, p := range parts {
		releases += p.count
	}
	stepTail := pldTail / 2 / float64(releases)
	for ; h <= pldMaxInterval; h *= 2 {
		out := &PLD{Interval: h}
		var err error
		for dir, res := range []*composeResult{&out.up, &out.down} {
			pmfs := make([]lossPMF, len(parts))
			counts := make([]int, len(parts))
			lost := 0.0
			for i, p := range parts {
				pr, rev := p.up, p.down
				if dir == 1 {
					pr, rev = p.down, p.up
				}
				var noise float64
				if pmfs[i], noise, err = discretize(pr, rev, h, stepTail); err != nil {
					break
				}
				counts[i] = p.count
				lost += float64(p.count) * (pmfs[i].inf + noise)
			}
			if err != nil {
				break
			}
			if *res, err = compose(pmfs, counts, pldTail/2); err != nil {
				break
			}
			res.truncated += lost
		}
		var wide errWindow
		if errors.As(err, &wide) {
			continue // a coarser grid
		}
		if err != nil {
			return nil, err
		}
		return out, nil
	}
	return nil, fmt.Errorf("pld: the composition of %d releases is too wide for %d grid points even at a grid step of %g: use the RDP accountant", total, pldMaxWindow, pldMaxInterval)
}

// Epsilon is the smallest ε at which the composition is (ε, δ)-DP (0 when
// δ is met at ε = 0). An error says when truncation and rounding sent more
// than a thousandth of δ to +∞, so the ε would be looser than the
// accountant's tolerance (a δ too small for the grid).
func (p *PLD) Epsilon(delta float64) (float64, error) {
	if !(delta > 0 && delta < 1) {
		return 0, fmt.Errorf("pld: delta = %v, allowed range (0, 1)", delta)
	}
	if p.gauss != nil {
		return gaussianEpsilon(p.gauss.mu, delta), nil
	}
	eps := math.Inf(-1)
	for _, r := range []composeResult{p.up, p.down} {
		if r.truncated > pldLostFraction*delta {
			return 0, fmt.Errorf("pld: %.3g of the probability mass was lost to truncation and rounding, more than %g of δ = %g: the ε would not meet the accountant's tolerance", r.truncated, pldLostFraction, delta)
		}
		eps = max(eps, r.pmf.epsilon(delta))
	}
	if math.IsInf(eps, 1) {
		return 0, fmt.Errorf("pld: δ = %g is below the mass at infinite privacy loss", delta)
	}
	return max(eps, 0), nil
}

// Delta is the smallest δ for which the composition is (ε, δ)-DP.
func (p *PLD) Delta(eps float64) (float64, error) {
	if math.IsNaN(eps) {
		return 0, errors.New("pld: epsilon is NaN")
	}
	if p.gauss != nil {
		return p.gauss.delta(eps), nil
	}
	return max(p.up.pmf.delta(eps), p.down.pmf.delta(eps)), nil
}

// gaussianEpsilon is the ε at which the Gaussian mechanism with parameter
// μ is (ε, δ)-DP, by bisection on the closed form δ(ε) (decreasing in
// ε), returning the upper end of the final bracket so that δ(ε) ≤ δ.
func gaussianEpsilon(mu, delta float64) float64 {
	g := gaussianProfile{mu: mu}
	if g.delta(0) <= delta {
		return 0
	}
	lo, hi := 0.0, mu*mu/2+mu*normalQuantileTail(delta)+1
	for g.delta(hi) > delta {
		lo, hi = hi, 2*hi
	}
	for range 200 {
		mid := (lo + hi) / 2
		if mid == lo || mid == hi {
			break
		}
		if g.delta(mid) > delta {
			lo = mid
		} else {
			hi = mid
		}
	}
	return hi
}

// pldCache holds ε by (event, count, δ): the nodes of a run that share
// their DP settings ask for the same ε every round, and a subsampled
// composition costs tens of milliseconds.
var pldCache = struct {
	sync.Mutex
	eps map[pldKey]float64
}{eps: map[pldKey]float64{}}

type pldKey struct {
	event Event
	count int
	delta float64
}

// pldCacheMax bounds the cache; when full it starts again empty.
const pldCacheMax = 1 << 14

// EpsilonPLD is the ε after steps occurrences of e at δ under the PLD
// accountant, cached by (e, steps, δ).
func EpsilonPLD(e Event, steps int, delta float64) (float64, error) {
	if steps == 0 {
		return 0, nil
	}
	k := pldKey{e, steps, delta}
	pldCache.Lock()
	eps, ok := pldCache.eps[k]
	pldCache.Unlock()
	if ok {
		return eps, nil
	}
	p, err := ComposePLD(Charge{e, steps})
	if err != nil {
		return 0, err
	}
	if eps, err = p.Epsilon(delta); err != nil {
		return 0, err
	}
	pldCache.Lock()
	if len(pldCache.eps) >= pldCacheMax {
		clear(pldCache.eps)
	}
	pldCache.eps[k] = eps
	pldCache.Unlock()
	return eps, nil
}
