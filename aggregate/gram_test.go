package aggregate

import (
	"math"
	"math/rand/v2"
	"testing"
)

// The Gram-matrix distances agree with direct float64 distances within the
// documented error, about 1e-7·(||x_i||² + ||x_j||²) (here checked at
// 1e-6), at every scale float32 allows, and are exact (0) between
// identical inputs.
func TestGramDistances(t *testing.T) {
	r := rand.New(rand.NewPCG(50, 50))
	const n, d = 9, 3*gramChunk + 17
	for _, scale := range []float64{1e-35, 1e-20, 1, 1e20, 1e35} {
		base := make([]float64, d)
		for k := range base {
			base[k] = r.NormFloat64()
		}
		xs := make([][]float32, n)
		for i := range xs {
			xs[i] = make([]float32, d)
			spread := math.Pow(10, -float64(i%4)) // some inputs close together
			for k := range xs[i] {
				xs[i][k] = float32(scale * (base[k] + spread*r.NormFloat64()))
			}
		}
		xs[n-1] = xs[2]
		var g gram
		g.run(xs, 1)
		for i := range n {
			for j := range n {
				var exact, ni, nj float64
				for k := range d {
					a, b := float64(xs[i][k]), float64(xs[j][k])
					exact += (a - b) * (a - b)
					ni += a * a
					nj += b * b
				}
				if e := math.Abs(g.d2[i*n+j] - exact); e > 1e-6*(ni+nj) {
					t.Errorf("scale %g: d2[%d][%d] = %v, exact %v (error %.2g of the norms)", scale, i, j, g.d2[i*n+j], exact, e/(ni+nj))
				}
			}
		}
		if g.d2[2*n+n-1] != 0 {
			t.Errorf("scale %g: identical inputs at distance %v", scale, g.d2[2*n+n-1])
		}
	}
}

// Inputs much closer together than to the origin (models of honest nodes)
// take the second, centered product, and their distances come out with an
// error relative to the distances themselves; spread inputs take one
// product.
func TestGramRecenters(t *testing.T) {
	r := rand.New(rand.NewPCG(51, 51))
	const n, d = 12, 5 * gramChunk
	base := make([]float64, d)
	for k := range base {
		base[k] = 100 * r.NormFloat64()
	}
	xs := make([][]float32, n)
	for i := range xs {
		xs[i] = make([]float32, d)
		for k := range xs[i] {
			xs[i][k] = float32(base[k] + 1e-2*r.NormFloat64()) // relative spread 1e-4
		}
	}
	xs[0] = make([]float32, d)
	for k := range xs[0] {
		xs[0][k] = float32(-3e38 * float64(k%2)) // a Byzantine input at float32's limit
	}
	var g gram
	g.run(xs, 2)
	if !g.recentered {
		t.Fatal("clustered inputs did not take the centered product")
	}
	for i := 1; i < n; i++ {
		for j := i + 1; j < n; j++ {
			var exact float64
			for k := range d {
				e := float64(xs[i][k]) - float64(xs[j][k])
				exact += e * e
			}
			if e := math.Abs(g.d2[i*n+j] - exact); e > 1e-4*exact {
				t.Errorf("d2[%d][%d] = %v, exact %v (relative error %.2g)", i, j, g.d2[i*n+j], exact, e/exact)
			}
		}
	}
	if math.IsInf(g.d2[1], 0) || math.IsNaN(g.d2[1]) || g.d2[1] < 1e70 {
		t.Errorf("distance to the Byzantine input = %v", g.d2[1])
	}
	g.run(benchInputs(12, d), 1)
	if g.recentered {
		t.Error("spread inputs took the centered product")
	}
}
