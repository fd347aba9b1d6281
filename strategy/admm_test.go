package strategy

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/trellis-fl/trellis/nn"
)

// solve returns the solution of the d×d system M z = b (Gaussian
// elimination with partial pivoting, float64).
func solve(M [][]float64, b []float64) []float64 {
	d := len(b)
	a := make([][]float64, d)
	for i := range a {
		a[i] = append(append([]float64(nil), M[i]...), b[i])
	}
	for c := range d {
		p := c
		for r := c + 1; r < d; r++ {
			if math.Abs(a[r][c]) > math.Abs(a[p][c]) {
				p = r
			}
		}
		a[c], a[p] = a[p], a[c]
		for r := c + 1; r < d; r++ {
			f := a[r][c] / a[c][c]
			for k := c; k <= d; k++ {
				a[r][k] -= f * a[c][k]
			}
		}
	}
	z := make([]float64, d)
	for r := d - 1; r >= 0; r-- {
		s := a[r][d]
		for k := r + 1; k < d; k++ {
			s -= a[r][k] * z[k]
		}
		z[r] = s / a[r][r]
	}
	return z
}

// Distributed least squares: node i holds (A_i, b_i), f_i(x) = ½||A_i x −
// b_i||², on a ring of 5; the optimum of Σ f_i is x* = (Σ A_iᵀA_i)⁻¹ Σ
// A_iᵀb_i (float64, independently). Local training is the exact x-update,
// (A_iᵀA_i + μI) x = A_iᵀb_i + μ·r_i with the μ and r LocalTraining asks
// for. Every node converges to x*, though no single f_i has it as its
// minimizer (each A_i has 3 rows for 4 unknowns: underdetermined alone).
func TestADMMConvergesToLeastSquaresOptimum(t *testing.T) {
	const n, d, rows = 5, 4, 3
	r := rand.New(rand.NewPCG(5, 5))
	A := make([][][]float64, n)
	b := make([][]float64, n)
	AtA := make([][]float64, d)
	Atb := make([]float64, d)
	for k := range AtA {
		AtA[k] = make([]float64, d)
	}
	for i := range n {
		A[i], b[i] = make([][]float64, rows), make([]float64, rows)
		for q := range rows {
			A[i][q] = make([]float64, d)
			for k := range d {
				A[i][q][k] = r.NormFloat64()
			}
			b[i][q] = 3 * r.NormFloat64()
			for k := range d {
				Atb[k] += A[i][q][k] * b[i][q]
				for l := range d {
					AtA[k][l] += A[i][q][k] * A[i][q][l]
				}
			}
		}
	}
	opt := solve(AtA, Atb)

	models := make([]*nn.Model, n)
	strats := make([]*ADMM, n)
	for i := range models {
		models[i] = tinyModel(t, 0, 0, 0, 0)
		s, err := New("admm", Params{})
		if err != nil {
			t.Fatal(err)
		}
		strats[i] = s.(*ADMM)
	}
	for round := range 400 {
		views := make([]*View, n)
		out := make([][]Outgoing, n)
		for i, m := range models {
			start := append([]float32(nil), m.Params()...)
			prev, next := (i+n-1)%n, (i+1)%n
			views[i] = &View{ID: i, Round: round, Model: m, Start: start, Neighbors: []int{min(prev, next), max(prev, next)}}
			tc := strats[i].LocalTraining(views[i], nn.TrainConfig{})
			// The exact x-update.
			M := make([][]float64, d)
			rhs := make([]float64, d)
			for k := range d {
				M[k] = make([]float64, d)
				for q := range rows {
					rhs[k] += A[i][q][k] * b[i][q]
					for l := range d {
						M[k][l] += A[i][q][k] * A[i][q][l]
					}
				}
				M[k][k] += tc.ProxMu
				rhs[k] += tc.ProxMu * float64(tc.ProxRef[k])
			}
			for k, v := range solve(M, rhs) {
				m.Params()[k] = float32(v)
			}
			for _, o := range strats[i].Share(views[i]) {
				o.Vector = append([]float32(nil), o.Vector...)
				out[i] = append(out[i], o)
			}
		}
		for i := range models {
			var in []Incoming
			for j := range n {
				for _, o := range out[j] {
					if o.To == i {
						in = append(in, Incoming{From: j, Tag: o.Tag, Vector: o.Vector})
					}
				}
			}
			if _, err := strats[i].Combine(views[i], in); err != nil {
				t.Fatal(err)
			}
		}
	}
	for i, m := range models {
		for k, v := range m.Params() {
			if math.Abs(float64(v)-opt[k]) > 1e-4*(1+math.Abs(opt[k])) {
				t.Errorf("node %d coordinate %d: %v, optimum %v", i, k, v, opt[k])
			}
		}
	}
	t.Logf("optimum %v, node 0 at %v", opt, models[0].Params())
}
