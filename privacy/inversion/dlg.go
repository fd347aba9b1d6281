package inversion

import (
	"math"
	"math/rand/v2"
)

// DLGConfig tunes the optimization attack.
type DLGConfig struct {
	// Iterations of Adam on the dummy batch (default 300).
	Iterations int
	// LR is Adam's step size in input units (default 0.1), decayed by a
	// cosine schedule to a hundredth of it.
	LR float64
	// Lo and Hi bound every input value (the normalized images of pixel 0
	// and 1): the attacker knows the data's range and projects onto it
	// after every step.
	Lo, Hi float64
	// Prior is the starting image (the attacker's own data's mean); each
	// dummy starts from it plus N(0, InitNoise²) per value so that dummies
	// with the same label do not stay identical.
	Prior     []float64
	InitNoise float64
}

// DLG reconstructs len(y) samples whose gradient under net matches the
// observed gradient target in cosine distance (Matcher), labels y fixed
// (recovered first, as iDLG does). It returns the dummies, sample-major,
// and the final objective.
func (n *Net) DLG(target []float64, y []int, cfg DLGConfig, rng *rand.Rand) ([]float64, float64) {
	return n.optimize(NewMatcher(n, target, y), len(y), cfg, rng)
}

// DLGUnrolled is DLG against an update of several local steps with the
// Unrolled objective: the dummies are trained as the victim trained
// (steps SGD steps of rate lr, batch samples each) and the simulated
// update matched to the observed update (w' − w).
func (n *Net) DLGUnrolled(update []float64, y []int, lr float64, steps, batch int, cfg DLGConfig, rng *rand.Rand) ([]float64, float64) {
	return n.optimize(NewUnrolled(n, update, y, lr, steps, batch), len(y), cfg, rng)
}

// objective is a function of the dummies that also writes its gradient.
type objective interface {
	Eval(x, dx []float64) float64
}

// optimize runs Adam on k dummies against m from cfg's start and returns
// the best iterate and its value.
func (n *Net) optimize(m objective, k int, cfg DLGConfig, rng *rand.Rand) ([]float64, float64) {
	if cfg.Iterations == 0 {
		cfg.Iterations = 300
	}
	if cfg.LR == 0 {
		cfg.LR = 0.1
	}
	D := n.Input()
	x := make([]float64, k*D)
	for i := range k {
		for j := range D {
			v := cfg.InitNoise * rng.NormFloat64()
			if cfg.Prior != nil {
				v += cfg.Prior[j]
			}
			x[i*D+j] = min(cfg.Hi, max(cfg.Lo, v))
		}
	}
	dx := make([]float64, len(x))
	mom, vel := make([]float64, len(x)), make([]float64, len(x))
	const b1, b2, eps = 0.9, 0.999, 1e-8
	best, bestX := math.Inf(1), make([]float64, len(x))
	for it := range cfg.Iterations {
		j := m.Eval(x, dx)
		if j < best {
			best = j
			copy(bestX, x)
		}
		lr := cfg.LR * (0.01 + 0.99*0.5*(1+math.Cos(math.Pi*float64(it)/float64(cfg.Iterations))))
		c1, c2 := 1-math.Pow(b1, float64(it+1)), 1-math.Pow(b2, float64(it+1))
		for i, g := range dx {
			mom[i] = b1*mom[i] + (1-b1)*g
			vel[i] = b2*vel[i] + (1-b2)*g*g
			x[i] -= lr * (mom[i] / c1) / (math.Sqrt(vel[i]/c2) + eps)
			x[i] = min(cfg.Hi, max(cfg.Lo, x[i]))
		}
	}
	if j := m.Eval(x, dx); j < best {
		best = j
		copy(bestX, x)
	}
	return bestX, best
}
