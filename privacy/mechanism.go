package privacy

import (
	"fmt"
	"math"

	"github.com/trellis-fl/trellis/vec"
)

// Mechanism privatizes one released vector: it clips it in place to a norm
// bound and adds noise drawn from src. A node layer calls Release once per
// round on the update it is about to send (node-level DP) and hands the
// returned Event to its Accountant.
type Mechanism interface {
	Release(v []float32, src Source) (Released, error)
}

// Released says what one Release did.
type Released struct {
	// Norm is the vector's norm before clipping (L2 for the Gaussian
	// mechanism, L1 for the Laplace mechanism).
	Norm float64
	// Clipped is true when the vector was scaled down to the bound.
	Clipped bool
	// Scale is the noise added per coordinate: the standard deviation of
	// the Gaussian, or the scale b of the Laplace law.
	Scale float64
	// Event is this release's privacy cost, for Accountant.Compose.
	Event Event
}

// Gaussian is the Gaussian mechanism of the survey, §3.1.1: clip to L2 norm C,
// add N(0, (zC)² I). Its L2 sensitivity is C under add/remove adjacency (a
// contribution is present, with norm ≤ C, or absent), so one release is
// (α, α/(2z²))-RDP (Mironov 2017, "Rényi Differential Privacy", Table II).
// Under replace adjacency (two arbitrary clipped vectors, distance ≤ 2C)
// account it with multiplier z/2.
type Gaussian struct {
	clip, z float64
	ev      Event // boxed once, so Release does not allocate
}

// NewGaussian returns the Gaussian mechanism with L2 clip bound clip and
// noise multiplier z (noise standard deviation z·clip).
func NewGaussian(clip, z float64) (*Gaussian, error) {
	if !(clip > 0) || math.IsInf(clip, 0) {
		return nil, fmt.Errorf("gaussian mechanism: clip = %v, need a finite value > 0", clip)
	}
	if !(z > 0) || math.IsInf(z, 0) {
		return nil, fmt.Errorf("gaussian mechanism: noise multiplier = %v, need a finite value > 0", z)
	}
	return &Gaussian{clip: clip, z: z, ev: GaussianEvent{Multiplier: z, Sampling: Unamplified()}}, nil
}

// Clip is the L2 bound; Multiplier is z.
func (g *Gaussian) Clip() float64       { return g.clip }
func (g *Gaussian) Multiplier() float64 { return g.z }

// Release implements Mechanism. A vector holding NaN or Inf is an error and
// is left unchanged (its norm cannot be bounded).
func (g *Gaussian) Release(v []float32, src Source) (Released, error) {
	if ok, at := vec.AllFinite(v); !ok {
		return Released{}, fmt.Errorf("gaussian mechanism: released vector holds a non-finite value at %d", at)
	}
	norm := vec.Norm(v)
	clipped := ClipL2(v, g.clip)
	sd := g.z * g.clip
	if b, ok := src.(interface{ AddNormal([]float32, float32) }); ok {
		b.AddNormal(v, float32(sd))
	} else {
		for i := range v {
			v[i] += float32(sd * src.NormFloat64())
		}
	}
	return Released{Norm: norm, Clipped: clipped, Scale: sd, Event: g.ev}, nil
}

// Laplace is the Laplace mechanism of the survey, §3.1.1: clip to L1 norm C1,
// add i.i.d. Laplace(C1/ε) noise; one release is ε-DP under add/remove
// adjacency (Dwork and Roth 2014, Thm. 3.6, L1 sensitivity C1).
type Laplace struct {
	clip, eps float64
	ev        Event
}

// NewLaplace returns the Laplace mechanism with L1 clip bound clip and
// per-release privacy eps.
func NewLaplace(clip, eps float64) (*Laplace, error) {
	if !(clip > 0) || math.IsInf(clip, 0) {
		return nil, fmt.Errorf("laplace mechanism: clip = %v, need a finite value > 0", clip)
	}
	if !(eps > 0) || math.IsInf(eps, 0) {
		return nil, fmt.Errorf("laplace mechanism: epsilon = %v, need a finite value > 0", eps)
	}
	return &Laplace{clip: clip, eps: eps, ev: LaplaceEvent{Epsilon: eps}}, nil
}

// Clip is the L1 bound; Epsilon is the per-release ε.
func (l *Laplace) Clip() float64    { return l.clip }
func (l *Laplace) Epsilon() float64 { return l.eps }

// Release implements Mechanism.
func (l *Laplace) Release(v []float32, src Source) (Released, error) {
	if ok, at := vec.AllFinite(v); !ok {
		return Released{}, fmt.Errorf("laplace mechanism: released vector holds a non-finite value at %d", at)
	}
	norm := vec.SumAbs(v)
	clipped := ClipL1(v, l.clip)
	b := l.clip / l.eps
	for i := range v {
		// The difference of two i.i.d. Exp(1) draws is Laplace(0, 1).
		v[i] += float32(b * (src.ExpFloat64() - src.ExpFloat64()))
	}
	return Released{Norm: norm, Clipped: clipped, Scale: b, Event: l.ev}, nil
}

// ClipL2 scales v in place so that its L2 norm (accumulated in float64) is
// at most c, and reports whether it had to. The bound holds exactly on the
// float32 result: the factor is nudged down if rounding pushed the norm
// over c.
func ClipL2(v []float32, c float64) bool {
	return clipTo(v, c, vec.Norm)
}

// ClipL1 is ClipL2 for the L1 norm.
func ClipL1(v []float32, c float64) bool {
	return clipTo(v, c, vec.SumAbs)
}

func clipTo(v []float32, c float64, norm func([]float32) float64) bool {
	n := norm(v)
	if n <= c {
		return false
	}
	f := float32(c / n)
	for i := range v {
		v[i] *= f
	}
	// float32 rounding can leave the norm a few ulps above c; shrink by
	// 2⁻²² at a time until the bound holds (once, in practice).
	for norm(v) > c {
		for i := range v {
			v[i] *= 1 - 1.0/(1<<22)
		}
	}
	return true
}
