package nn

import (
	"fmt"
	"math"

	"github.com/trellis-fl/trellis/vec"
)

// Optimizer updates parameters in place from their gradients. An optimizer
// is created for one model's parameter count and owns its state (momentum,
// moments) so that steps do not allocate.
type Optimizer interface {
	Step(params, grads []float32)
	// LR and SetLR read and change the learning rate (for schedules).
	LR() float64
	SetLR(lr float64)
	// StateFloats is the number of float32 of optimizer state.
	StateFloats() int
	// Reset clears the state (momentum, moments, step count).
	Reset()
}

// OptimizerSpec names an optimizer and its hyperparameters, as in configs.
type OptimizerSpec struct {
	Name        string  // "sgd", "adam" or "adamw"
	LR          float64 // learning rate
	Momentum    float64 // sgd
	Nesterov    bool    // sgd
	WeightDecay float64 // L2 for sgd and adam, decoupled for adamw
	Beta1       float64 // adam, adamw; 0 means 0.9
	Beta2       float64 // adam, adamw; 0 means 0.999
	Eps         float64 // adam, adamw; 0 means 1e-8
}

// resident returns n zeros whose pages are in memory: writing them now
// costs the page faults here, when the optimizer is built, rather than in
// the first training step of every node of a simulation's first round (on
// a virtual machine a fault costs microseconds; 10,000 MLP nodes fault
// 4 GB of momentum).
func resident(n int) []float32 {
	v := make([]float32, n)
	clear(v)
	return v
}

// NewOptimizer builds the optimizer spec names for n parameters.
func NewOptimizer(s OptimizerSpec, n int) (Optimizer, error) {
	if !(s.LR > 0) || math.IsInf(s.LR, 0) {
		return nil, fmt.Errorf("optimizer lr = %v: must be a positive finite number", s.LR)
	}
	if s.WeightDecay < 0 || s.Momentum < 0 || s.Momentum >= 1 {
		return nil, fmt.Errorf("optimizer: weight_decay %v must be ≥ 0 and momentum %v in [0, 1)", s.WeightDecay, s.Momentum)
	}
	switch s.Name {
	case "sgd", "":
		if s.Nesterov && s.Momentum == 0 {
			return nil, fmt.Errorf("optimizer sgd: nesterov needs momentum > 0")
		}
		o := &SGD{lr: s.LR, momentum: s.Momentum, nesterov: s.Nesterov, wd: s.WeightDecay}
		if s.Momentum > 0 {
			o.v = resident(n)
		}
		return o, nil
	case "adam", "adamw":
		b1, b2, eps := orDefault(s.Beta1, 0.9), orDefault(s.Beta2, 0.999), orDefault(s.Eps, 1e-8)
		if b1 < 0 || b1 >= 1 || b2 < 0 || b2 >= 1 || eps <= 0 {
			return nil, fmt.Errorf("optimizer %s: beta1 %v and beta2 %v must be in [0, 1), eps %v > 0", s.Name, b1, b2, eps)
		}
		return &Adam{lr: s.LR, b1: b1, b2: b2, eps: eps, wd: s.WeightDecay,
			decoupled: s.Name == "adamw", m: resident(n), v: resident(n)}, nil
	}
	return nil, fmt.Errorf("unknown optimizer %q (want sgd, adam or adamw)", s.Name)
}

func orDefault(v, d float64) float64 {
	if v == 0 {
		return d
	}
	return v
}

// SGD is stochastic gradient descent with PyTorch's semantics:
// g ← g + wd·w; v ← μ·v + g; step = g + μ·v (Nesterov) or v; w ← w − lr·step.
type SGD struct {
	lr, momentum, wd float64
	nesterov         bool
	v                []float32
}

func (o *SGD) LR() float64      { return o.lr }
func (o *SGD) SetLR(lr float64) { o.lr = lr }
func (o *SGD) StateFloats() int { return len(o.v) }
func (o *SGD) Reset()           { clear(o.v) }

// Step implements Optimizer. Whole blocks of 8 go through the vector kernel
// when the CPU has one (same formulas, fused multiply-adds), the rest
// through the loops below.
func (o *SGD) Step(w, g []float32) { o.stepRange(w, g, 0, len(w)) }

// stepRange is Step on elements [lo, hi) only. Every element is updated
// on its own and SGD keeps no step count, so ranges can run in parallel;
// with lo a multiple of 8 and hi one too or len(w), each element takes
// the same path (vector blocks or the scalar tail) as in Step, so the bits
// do not depend on the split.
func (o *SGD) stepRange(w, g []float32, lo, hi int) {
	lr, mu, wd := float32(o.lr), float32(o.momentum), float32(o.wd)
	w, g = w[lo:hi], g[lo:hi]
	var v []float32
	if o.v != nil {
		v = o.v[lo:hi]
	}
	done := sgdFast(w, g, v, lr, mu, wd, o.nesterov)
	w, g = w[done:], g[done:]
	if v == nil {
		for i, wi := range w {
			w[i] = wi - lr*(g[i]+wd*wi)
		}
		return
	}
	v = v[done:]
	if o.nesterov {
		for i, wi := range w {
			gi := g[i] + wd*wi
			vi := flushDenormal(mu*v[i] + gi)
			v[i] = vi
			w[i] = wi - lr*(gi+mu*vi)
		}
		return
	}
	for i, wi := range w {
		vi := flushDenormal(mu*v[i] + g[i] + wd*wi)
		v[i] = vi
		w[i] = wi - lr*vi
	}
}

// flushDenormal returns 0 for a subnormal x (|x| below 2⁻¹²⁶, the smallest
// normal float32) and x otherwise.
//
// Why the optimizers flush their moment estimates. A parameter whose
// gradient is exactly 0 for many steps (the weights of an MNIST border
// pixel, which is always 0; a dead ReLU unit) keeps a velocity that decays
// geometrically, by μ = 0.9 a step, and turns subnormal after about 770
// steps. x86 cores compute on subnormals through a microcode assist:
// measured on an Intel Xeon (AVX-512), the momentum update ran at 11.1 ns
// per subnormal element against 0.48 ns per normal one, and the MLP
// 784-256-128-10's training step lost a factor of 3. Flushing changes no
// weight: an update lr·v with |v| < 2⁻¹²⁶ is below half an ulp of any
// weight larger than about 2⁻¹⁰⁰, so w − lr·v rounds back to w. The same
// holds for Adam's m (divided by √v̂ + ε ≥ ε) and v (√v < 2⁻⁶³ ≪ ε).
// TensorFlow flushes subnormals on the CPU for the same reason; PyTorch
// leaves it to torch.set_flush_denormal.
func flushDenormal(x float32) float32 {
	if math.Float32bits(x)&0x7fffffff < 0x00800000 {
		return 0
	}
	return x
}

// Adam is Adam (Kingma and Ba) with bias correction; with decoupled set it
// is AdamW (Loshchilov and Hutter): w ← w − lr·wd·w before the Adam step,
// instead of adding wd·w to the gradient.
type Adam struct {
	lr, b1, b2, eps, wd float64
	decoupled           bool
	t                   int
	m, v                []float32
}

func (o *Adam) LR() float64      { return o.lr }
func (o *Adam) SetLR(lr float64) { o.lr = lr }
func (o *Adam) StateFloats() int { return len(o.m) + len(o.v) }
func (o *Adam) Reset()           { clear(o.m); clear(o.v); o.t = 0 }

// Step implements Optimizer.
func (o *Adam) Step(w, g []float32) {
	o.t++
	b1, b2 := float32(o.b1), float32(o.b2)
	c1 := 1 - math.Pow(o.b1, float64(o.t))
	c2 := 1 - math.Pow(o.b2, float64(o.t))
	stepSize := float32(o.lr / c1)
	sqrtC2 := float32(math.Sqrt(c2))
	eps, wd, lr := float32(o.eps), float32(o.wd), float32(o.lr)
	m, v := o.m[:len(w)], o.v[:len(w)]
	for i := range w {
		gi := g[i]
		if o.decoupled {
			w[i] -= lr * wd * w[i]
		} else {
			gi += wd * w[i]
		}
		m[i] = flushDenormal(b1*m[i] + (1-b1)*gi)
		v[i] = flushDenormal(b2*v[i] + (1-b2)*gi*gi)
		// PyTorch's form: w −= lr/c1 · m / (sqrt(v)/sqrt(c2) + eps).
		w[i] -= stepSize * m[i] / (float32(math.Sqrt(float64(v[i])))/sqrtC2 + eps)
	}
}

// ClipGlobalNorm scales g so that its Euclidean norm is at most maxNorm and
// returns the norm before clipping.
func ClipGlobalNorm(g []float32, maxNorm float64) float64 {
	norm := vec.Norm(g)
	if maxNorm > 0 && norm > maxNorm {
		vec.Scale(float32(maxNorm/norm), g)
	}
	return norm
}
