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
