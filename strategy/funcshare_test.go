package strategy

import (
	"math"
	"testing"
)

func newFunctionSharing(scale float64, tracking bool) *FunctionSharing {
	f := &FunctionSharing{Scale: scale, Tracking: tracking}
	if tracking {
		f.inner = &GradientTracking{Weighting: MetropolisHastings}
	} else {
		f.inner = &DPSGD{Weighting: MetropolisHastings}
	}
	return f
}

// After the setup round Σ_i ∇s_i is exactly zero in float64 (the a_ij are
// on a power-of-two grid), each p_i is Σ_j (a_ji − a_ij) of the vectors
// that crossed its edges (read from the messages), and p_i is not zero.
func TestFunctionSharingZeroSum(t *testing.T) {
	for _, scale := range []float64{1, 0.1, 3} {
		q := newQuadNet(t, irregularGraph(), 5, 0.1, func() Strategy { return newFunctionSharing(scale, false) })
		q.step(t)
		d := len(q.h[0])
		sum := make([]float64, d)
		for i, s := range q.strats {
			p := s.(*FunctionSharing).Perturbation()
			nonzero := false
			for k := range d {
				want := 0.0
				for _, j := range q.adj[i] {
					want += float64(q.sent[msgKey{j, i, 0, TagPerturb}][k]) - float64(q.sent[msgKey{i, j, 0, TagPerturb}][k])
				}
				if p[k] != want {
					t.Errorf("scale %v node %d coordinate %d: p = %v, the messages give %v", scale, i, k, p[k], want)
				}
				if math.Abs(p[k]) > 2*scale*float64(len(q.adj[i])) {
					t.Errorf("scale %v node %d: |p| = %v above 2·scale·degree", scale, i, p[k])
				}
				nonzero = nonzero || p[k] != 0
				sum[k] += p[k]
			}
			if !nonzero {
				t.Errorf("scale %v node %d: no perturbation", scale, i)
			}
		}
		for k, s := range sum {
			if s != 0 {
				t.Errorf("scale %v coordinate %d: Σ_i ∇s_i = %v, want exactly 0", scale, k, s)
			}
		}
	}
}

// On quadratics the perturbed objectives have the optimum of the
// unperturbed sum (closed form): with gradient tracking at a constant step
// every node reaches it; with D-PSGD (the original's distributed gradient
// descent) at a diminishing step η_t = 4/(t + 20) it comes as close as
// unperturbed D-PSGD, while at a constant step the perturbation (scale 1)
// pushes the nodes far from it.
func TestFunctionSharingReachesOptimum(t *testing.T) {
	gt := newQuadNet(t, irregularGraph(), 9, 0.2, func() Strategy { return newFunctionSharing(1, true) })
	if e := gt.run(t, 1500); e > 1e-5 {
		t.Errorf("function sharing with tracking: max |x − x*| = %.3g", e)
	}
	dim := func(tr int) float64 { return 4 / (float64(tr) + 20) }
	fs := newQuadNet(t, irregularGraph(), 9, 0, func() Strategy { return newFunctionSharing(1, false) })
	ds := newQuadNet(t, irregularGraph(), 9, 0, func() Strategy { return &DPSGD{Weighting: MetropolisHastings} })
	fs.eta, ds.eta = dim, dim
	ePlain, eFS := ds.run(t, 4000), fs.run(t, 4000)
	if eFS > 0.01 || ePlain > 0.01 {
		t.Errorf("diminishing step: max |x − x*| = %.3g perturbed, %.3g plain", eFS, ePlain)
	}
	fc := newQuadNet(t, irregularGraph(), 9, 0.2, func() Strategy { return newFunctionSharing(1, false) })
	if e := fc.run(t, 1500); e < 0.05 {
		t.Errorf("constant step, perturbed D-PSGD came within %.3g of x*: the check cannot fail", e)
	}
}

// Metamorphic privacy test: target i with a neighbour m outside the
// coalition. The second run gives i the objective f_i + ⟨δ, x⟩, m the
// objective f_m − ⟨δ, x⟩, and i's message to m a_im + δ (still on the
// grid and within [−scale, scale]); then ∇(f_i + s_i) and ∇(f_m + s_m)
// are unchanged and every message any other node receives is the same in
// both runs. Without the perturbation (plain D-PSGD) the coalition's
// messages differ by η|δ|.
func TestFunctionSharingHidesLinearTerm(t *testing.T) {
	const eta, rounds, seed, target, other = 0.1, 40, 13, 0, 3
	for _, tracking := range []bool{false, true} {
		mk := func() Strategy { return newFunctionSharing(1, tracking) }
		a := newQuadNet(t, irregularGraph(), seed, eta, mk)
		b := newQuadNet(t, irregularGraph(), seed, eta, mk)
		a.step(t)
		aim := a.strats[target].(*FunctionSharing).Sent[other]
		shifted := make([]float32, len(aim))
		for k, x := range aim {
			delta := -0.25 * math.Copysign(1, float64(x)) // on the grid, keeps |a| ≤ 1
			if x == 0 {
				delta = 0.25
			}
			shifted[k] = x + float32(delta)
			b.l[target][k], b.l[other][k] = delta, -delta
		}
		b.strats[target].(*FunctionSharing).Sent = map[int][]float32{other: shifted}
		for range rounds - 1 {
			a.step(t)
		}
		for range rounds {
			b.step(t)
		}
		var coalition []int
		for j := range a.adj {
			if j != target && j != other {
				coalition = append(coalition, j)
			}
		}
		if got := maxDiff(t, a, b, coalition); got > 1e-5 {
			t.Errorf("tracking %v: the coalition's messages differ by %.3g between the two objectives", tracking, got)
		}
	}
	mk := func() Strategy { return &DPSGD{Weighting: MetropolisHastings} }
	pa := newQuadNet(t, irregularGraph(), seed, eta, mk)
	pb := newQuadNet(t, irregularGraph(), seed, eta, mk)
	for k := range pb.l[target] {
		pb.l[target][k], pb.l[other][k] = 0.25, -0.25
	}
	for range 3 {
		pa.step(t)
		pb.step(t)
	}
	if got := maxDiff(t, pa, pb, []int{1, 5}); got < 0.5*eta*0.25 {
		t.Errorf("plain D-PSGD's messages to the target's neighbours differ by only %.3g: the check cannot fail", got)
	}
}

// The condition is needed: a coalition holding every neighbour of the
// target knows every a_ij and a_ji of its edges, hence p_i, and with the
// start models of the target and of all its neighbours reads the target's
// perturbed update off D-PSGD's step, d_i = Σ_j W_ij w_j^start − w_i^next;
// minus η p_i that is η ∇f_i at the target's model, exactly what it
// computed (closed form of the quadratic).
func TestFunctionSharingFullCoalitionReadsGradient(t *testing.T) {
	const eta, seed, target = 0.1, 17, 0
	q := newQuadNet(t, irregularGraph(), seed, eta, func() Strategy { return newFunctionSharing(1, false) })
	for range 6 {
		q.step(t)
	}
	nb := q.adj[target]
	d := len(q.h[0])
	p := make([]float64, d)
	for _, j := range nb {
		for k := range d {
			p[k] += float64(q.sent[msgKey{j, target, 0, TagPerturb}][k]) - float64(q.sent[msgKey{target, j, 0, TagPerturb}][k])
		}
	}
	// Metropolis–Hastings weights from the public degrees.
	w := map[int]float64{}
	self := 1.0
	for _, j := range nb {
		w[j] = 1 / float64(1+max(len(nb), len(q.adj[j])))
		self -= w[j]
	}
	worst := 0.0
	for r := 1; r < 5; r++ {
		// Every colluder j received the target's start of rounds r and r+1.
		own := q.sent[msgKey{target, nb[0], r, TagStart}]
		next := q.sent[msgKey{target, nb[0], r + 1, TagStart}]
		for k := range d {
			mixed := self * float64(own[k])
			for _, j := range nb {
				mixed += w[j] * float64(q.sent[msgKey{j, target, r, TagStart}][k])
			}
			got := (mixed-float64(next[k]))/eta - p[k]
			want := q.h[target][k] * (float64(own[k]) - q.c[target][k])
			worst = max(worst, math.Abs(got-want))
		}
	}
	if worst > 1e-4 {
		t.Errorf("the full coalition's gradient estimate is off by %.3g", worst)
	}
}
