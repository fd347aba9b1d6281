package resilience

import (
	"errors"
	"fmt"
	"math"

	"github.com/trellis-fl/trellis/aggregate"
	"github.com/trellis-fl/trellis/attack"
	"github.com/trellis-fl/trellis/vec"
)

// Config is the synthetic setting of a measurement.
type Config struct {
	// N is the number of inputs of the rule, honest and attack vectors
	// together, in [2, MaxN].
	N int
	// F is the number of attack vectors, in [0, N − 2] (κ̂ needs two honest
	// vectors for a nonzero spread).
	F int
	// D is the dimension, in [1, MaxD], with N·D <= MaxND.
	D int
	// Spread is the standard deviation of the honest vectors around their
	// center, per coordinate, in (0, 1e6].
	Spread float64
	// Trials is the number of honest sets drawn, in [1, MaxTrials].
	Trials int
	// Seed seeds every draw.
	Seed uint64
}

// Bounds of Config.
const (
	MaxN      = 100000
	MaxD      = 100_000_000
	MaxND     = 200_000_000 // about 800 MB of float32 inputs
	MaxTrials = 1_000_000
	MaxSpread = 1e6
)

// DefaultConfig is the setting of `trellis bench rules` without flags: 20
// inputs of which 4 attack vectors, d = 100, spread 1, 20 trials, seed 1.
func DefaultConfig() Config {
	return Config{N: 20, F: 4, D: 100, Spread: 1, Trials: 20, Seed: 1}
}

// Validate reports every field out of range, naming it, its value and the
// allowed range.
func (c Config) Validate() error {
	var errs []error
	bad := func(key string, v any, allowed string) {
		errs = append(errs, fmt.Errorf("resilience: %s = %v, allowed range %s", key, v, allowed))
	}
	if c.N < 2 || c.N > MaxN {
		bad("n", c.N, fmt.Sprintf("[2, %d]", MaxN))
	}
	if c.F < 0 || c.F > max(0, c.N-2) {
		bad("f", c.F, fmt.Sprintf("[0, n − 2] = [0, %d]", max(0, c.N-2)))
	}
	if c.D < 1 || c.D > MaxD {
		bad("d", c.D, fmt.Sprintf("[1, %d]", MaxD))
	} else if c.N >= 2 && c.N <= MaxN && c.N*c.D > MaxND {
		bad("d", c.D, fmt.Sprintf("[1, %d] for n = %d (n·d <= %d)", MaxND/c.N, c.N, MaxND))
	}
	if !(c.Spread > 0 && c.Spread <= MaxSpread) {
		bad("spread", c.Spread, fmt.Sprintf("(0, %g]", float64(MaxSpread)))
	}
	if c.Trials < 1 || c.Trials > MaxTrials {
		bad("trials", c.Trials, fmt.Sprintf("[1, %d]", MaxTrials))
	}
	return errors.Join(errs...)
}

// Result is the resilience of one rule under one attack.
type Result struct {
	// Kappa is κ̂ = max over trials of ||A(X) − mean(S)||² /
	// mean_{i∈S} ||x_i − mean(S)||²; smaller is better.
	Kappa float64
	// KappaMean is the same ratio averaged over trials.
	KappaMean float64
	// Dist is ||A(X) − mean(S)|| averaged over trials; DistMax its maximum.
	Dist, DistMax float64
}

// ErrDataAttack is the error of a cell whose attack poisons training data
// (attack.DataAttack): it sends honest vectors, so κ̂ would only repeat
// the "none" column.
var ErrDataAttack = errors.New("data attack: acts on training labels, not on vectors")

// trial is one draw: the inputs X (honest set S first, then the attack
// vectors), mean(S) and the denominator of κ̂.
type trial struct {
	s      [][]float32 // the n − f honest vectors
	own    [][]float32 // each attacker's own honest vector
	x      [][]float32 // S followed by the attack vectors
	mean   []float64
	spread float64 // mean_{i∈S} ||x_i − mean(S)||²
}

// newTrial allocates the vectors of cfg.
func newTrial(cfg Config) *trial {
	t := &trial{x: make([][]float32, cfg.N), mean: make([]float64, cfg.D)}
	for i := range t.x {
		t.x[i] = make([]float32, cfg.D)
	}
	t.s = t.x[:cfg.N-cfg.F]
	t.own = make([][]float32, cfg.F)
	for k := range t.own {
		t.own[k] = make([]float32, cfg.D)
	}
	return t
}

// draw fills the honest set of trial k: center c ~ N(0, I), honest and
// attackers' own vectors c + Spread·N(0, I), drawn in that order, vector by
// vector, coordinate by coordinate.
func (t *trial) draw(cfg Config, k int) {
	r := stream(cfg.Seed, purposeHonest, uint64(k))
	c := make([]float64, cfg.D)
	for j := range c {
		c[j] = r.NormFloat64()
	}
	for _, x := range append(t.s[:len(t.s):len(t.s)], t.own...) {
		for j := range x {
			x[j] = float32(c[j] + cfg.Spread*r.NormFloat64())
		}
	}
	clear(t.mean)
	for _, x := range t.s {
		for j, v := range x {
			t.mean[j] += float64(v)
		}
	}
	for j := range t.mean {
		t.mean[j] /= float64(len(t.s))
	}
	t.spread = 0
	for _, x := range t.s {
		t.spread += sqDist(t.mean, x)
	}
	t.spread /= float64(len(t.s))
}

// attack overwrites the attack vectors of X with what atk crafts: every
// attacker k (sender id n − f + k) crafts from its own vector with one View
// of S shared by all, for the aggregator, receiver id n, with the stream
// of (seed, trial, k).
func (t *trial) attack(atk attack.Attack, cfg Config, k int) error {
	v := &attack.View{Round: k, Honest: t.s, Senders: cfg.N, Attackers: cfg.F}
	h := len(t.s)
	for a, own := range t.own {
		rng := stream(cfg.Seed, purposeAttack, uint64(k), uint64(a))
		if err := atk.Craft(t.x[h+a], v, own, h+a, cfg.N, rng); err != nil {
			return err
		}
	}
	return nil
}

// score returns the ratio of κ̂ and the distance of out to mean(S).
func (t *trial) score(rule string, out []float32) (ratio, dist float64, err error) {
	if ok, at := vec.AllFinite(out); !ok {
		return 0, 0, fmt.Errorf("%s: output holds %v at coordinate %d", rule, out[at], at)
	}
	d2 := sqDist(t.mean, out)
	return d2 / t.spread, math.Sqrt(d2), nil
}

func sqDist(x []float64, y []float32) float64 {
	var s float64
	for j, v := range y {
		e := float64(v) - x[j]
		s += e * e
	}
	return s
}

// acc accumulates a Result over trials.
type acc struct {
	r      Result
	trials int
	err    error
}

func (a *acc) add(ratio, dist float64) {
	a.r.Kappa = max(a.r.Kappa, ratio)
	a.r.DistMax = max(a.r.DistMax, dist)
	a.r.KappaMean += ratio
	a.r.Dist += dist
	a.trials++
}

func (a *acc) result() Result {
	r := a.r
	if a.trials > 0 {
		r.KappaMean /= float64(a.trials)
		r.Dist /= float64(a.trials)
	}
	return r
}

// Kappa measures rule under atk in the setting cfg. An invalid cfg is an
// error; so is a rule or attack that fails in any trial (the first error,
// with its trial).
func Kappa(rule aggregate.Rule, atk attack.Attack, cfg Config) (Result, error) {
	t, err := Table([]aggregate.Rule{rule}, []attack.Attack{atk}, cfg)
	if err != nil {
		return Result{}, err
	}
	c := t.Cells[0][0]
	return c.Result, c.Err
}
