package trust

import "math"

// Evidence is what one round taught a node about one source (the DMTT paper,
// Algorithm 4): counts of the six event kinds.
type Evidence struct {
	D int // direct confirmations: the self-inclusion check held
	C int // claims corroborated by an accepted edge
	F int // fresh, internally consistent claims
	X int // contradictions with direct observation: the self-inclusion check failed
	Q int // stale, replayed, invalid or over-budget claims
	Z int // claims asserting an edge rejected with χ < 1 - τ_add
}

// Empty reports whether e holds no event: such a source is not updated
// ("once per round per source with new evidence").
func (e Evidence) Empty() bool { return e == Evidence{} }

// Add returns e + o, for cumulative diagnostics.
func (e Evidence) Add(o Evidence) Evidence {
	return Evidence{e.D + o.D, e.C + o.C, e.F + o.F, e.X + o.X, e.Q + o.Q, e.Z + o.Z}
}

// Beta is the source-trust state (α, β) of one peer as a topology reporter.
type Beta struct {
	Alpha, Beta float64
}

// NewBeta is the uninformed prior (1, 1): R = 0.5, U ≈ 0.289.
func NewBeta() Beta { return Beta{1, 1} }

// Update applies one round's evidence (Algorithm 4, Eqs. 6–7):
//
//	α <- max(Floor, λα + w_d d + w_c c + w_f f)
//	β <- max(Floor, λβ + w_x x + w_q q + w_s z)
//
// The floor keeps U and R defined after long silence of one kind of
// evidence.
func (b Beta) Update(e Evidence, c *Config) Beta {
	// Each product is rounded explicitly (float64(x*y)) so no platform
	// fuses it into a multiply-add.
	a := float64(c.Lambda*b.Alpha) + float64(c.Wd*float64(e.D)) + float64(c.Wc*float64(e.C)) + float64(c.Wf*float64(e.F))
	n := float64(c.Lambda*b.Beta) + float64(c.Wx*float64(e.X)) + float64(c.Wq*float64(e.Q)) + float64(c.Ws*float64(e.Z))
	return Beta{max(c.Floor, a), max(c.Floor, n)}
}

// Reputation is the posterior mean R = α / (α + β).
func (b Beta) Reputation() float64 { return b.Alpha / (b.Alpha + b.Beta) }

// Uncertainty is the posterior standard deviation
// U = sqrt(αβ / ((α+β)² (α+β+1))).
func (b Beta) Uncertainty() float64 {
	s := b.Alpha + b.Beta
	return math.Sqrt(b.Alpha * b.Beta / (s * s * (s + 1)))
}

// Trust is the uncertainty-penalized score
// T_topo = R exp(-η max(0, U - τ_U)): a reputation resting on little
// evidence counts for less.
func (b Beta) Trust(c *Config) float64 {
	return b.Reputation() * math.Exp(-c.Eta*max(0, b.Uncertainty()-c.TauU))
}
