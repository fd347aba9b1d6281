package nn

import "math"

// Evidential is the Dirichlet head of MURMURA (docs/methods/murmura.md):
// evidence e = softplus(z), alpha = e + 1, S = Σ alpha, probabilities
// p = alpha/S, vacuity u = K/S. The loss per sample with one-hot y is
//
//	Σ (y−p)² + Σ p(1−p)/(S+1) + λ_t · KL(Dir(alpha~) ‖ Dir(1)),
//	alpha~ = y + (1−y)·alpha,
//
// the MSE form of Sensoy et al. (2018). The variance term can be switched
// off (NoVariance) to match the authors' code, which drops it.
type Evidential struct {
	// Lambda is the KL weight λ_t of the current round; see AnnealedLambda.
	Lambda float64
	// NoVariance drops the Σ p(1−p)/(S+1) term.
	NoVariance bool
}

// EvidentialLambdaMax is λ_max of the KL annealing (the DMTT paper).
const EvidentialLambdaMax = 0.1

// AnnealedLambda is the spec's schedule λ_t = λ_max · min(1, t/T_anneal)
// with t the 0-based round and T_anneal = rounds/2 (the DMTT paper).
func AnnealedLambda(round, rounds int, lambdaMax float64) float64 {
	tAnneal := float64(rounds) / 2
	if tAnneal <= 0 {
		return lambdaMax
	}
	return lambdaMax * math.Min(1, float64(round)/tAnneal)
}

// Name implements Head.
func (*Evidential) Name() string { return "evidential" }

// Loss implements Head.
func (h *Evidential) Loss(logits []float32, labels []int, n, k int, grad []float32) (float64, error) {
	var total float64
	inv := 1 / float64(n)
	var alpha, dAlpha [maxStackClasses]float64
	for i := 0; i < n; i++ {
		y := labels[i]
		if err := checkLabel(y, k, i); err != nil {
			return 0, err
		}
		z := logits[i*k : (i+1)*k]
		a, da := classBuf(alpha[:], k), classBuf(dAlpha[:], k)
		var s float64
		for j, v := range z {
			a[j] = softplus(float64(v)) + 1
			s += a[j]
		}
		// MSE and variance terms, and their derivatives in alpha:
		// dp_k/dalpha_j = (δ_kj − p_k)/S.
		var sq, sp2, sdp float64
		for j := range a {
			p := a[j] / s
			t := -p
			if j == y {
				t = 1 - p
			}
			sq += t * t
			sp2 += p * p
			sdp += t * p
		}
		loss := sq
		for j := range a {
			p := a[j] / s
			t := -p
			if j == y {
				t = 1 - p
			}
			da[j] = (-2*t + 2*sdp) / s
		}
		if !h.NoVariance {
			loss += (1 - sp2) / (s + 1)
			for j := range a {
				p := a[j] / s
				da[j] += -2*(p-sp2)/(s*(s+1)) - (1-sp2)/((s+1)*(s+1))
			}
		}
		if h.Lambda != 0 {
			// KL(Dir(a~) ‖ Dir(1)) = lnΓ(S~) − lnΓ(K) − Σ lnΓ(a~_k)
			//   + Σ (a~_k − 1)(ψ(a~_k) − ψ(S~));
			// ∂KL/∂a~_j = (a~_j − 1) ψ'(a~_j) − ψ'(S~) Σ_k (a~_k − 1),
			// and a~_y = 1 is constant (no gradient to the true class).
			st, excess := 0.0, 0.0
			for j := range a {
				at := a[j]
				if j == y {
					at = 1
				}
				st += at
				excess += at - 1
			}
			dgS := digamma(st)
			kl := lgamma(st) - lgamma(float64(k))
			for j := range a {
				if j == y {
					continue // lnΓ(1) = 0 and (1 − 1)(…) = 0
				}
				kl += -lgamma(a[j]) + (a[j]-1)*(digamma(a[j])-dgS)
			}
			loss += h.Lambda * kl
			tgS := trigamma(st)
			for j := range a {
				if j != y {
					da[j] += h.Lambda * ((a[j]-1)*trigamma(a[j]) - tgS*excess)
				}
			}
		}
		total += loss
		if grad != nil {
			// dalpha/dz = sigmoid(z).
			g := grad[i*k : (i+1)*k]
			for j, v := range z {
				g[j] = float32(da[j] * sigmoid(float64(v)) * inv)
			}
		}
	}
	return total, nil
}

// Probs implements Head: p = alpha/S.
func (h *Evidential) Probs(logits, probs []float32, n, k int) {
	for i := 0; i < n; i++ {
		z := logits[i*k : (i+1)*k]
		var s float64
		for _, v := range z {
			s += softplus(float64(v)) + 1
		}
		for j, v := range z {
			probs[i*k+j] = float32((softplus(float64(v)) + 1) / s)
		}
	}
}

// Vacuity implements UncertaintyHead: u = K/S in (0, 1].
func (h *Evidential) Vacuity(logits, u []float32, n, k int) {
	for i := 0; i < n; i++ {
		var s float64
		for _, v := range logits[i*k : (i+1)*k] {
			s += softplus(float64(v)) + 1
		}
		u[i] = float32(float64(k) / s)
	}
}

// maxStackClasses bounds the per-sample scratch kept on the stack; heads
// with more classes fall back to a heap buffer.
const maxStackClasses = 64

func classBuf(stack []float64, k int) []float64 {
	if k <= len(stack) {
		return stack[:k]
	}
	return make([]float64, k)
}
