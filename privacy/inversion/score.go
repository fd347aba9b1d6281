package inversion

import "math"

// Pixels maps normalized inputs back to pixel intensities in [0, 1]
// (pixel = x·std + mean, as data.Normalization records it for MNIST),
// clamped: the attacker knows the range, so a reconstruction is judged
// on it.
func Pixels(x []float64, mean, std float64) []float64 {
	out := make([]float64, len(x))
	for i, v := range x {
		out[i] = min(1, max(0, v*std+mean))
	}
	return out
}

// MSE is the mean squared difference of two images.
func MSE(a, b []float64) float64 {
	var s float64
	for i, v := range a {
		d := v - b[i]
		s += d * d
	}
	return s / float64(len(a))
}

// PSNR is 10·log10(1/mse) for pixels in [0, 1], in dB; +Inf for 0.
func PSNR(mse float64) float64 { return -10 * math.Log10(mse) }

// Match pairs each of the k true images (sample-major, d values each)
// with a distinct reconstruction out of m ≥ k so that the summed MSE is
// least, exactly (the Hungarian algorithm, O(k²m)), and returns each true
// image's MSE. A batch's reconstructions come in no particular order;
// from a sum of several nodes' batches the attacker cannot tell which are
// the target's, and Match gives it the best choice: an upper bound on
// what it learns.
func Match(truth, recon []float64, d int) []float64 {
	k, m := len(truth)/d, len(recon)/d
	cost := make([][]float64, k)
	for i := range k {
		cost[i] = make([]float64, m)
		for j := range m {
			cost[i][j] = MSE(truth[i*d:(i+1)*d], recon[j*d:(j+1)*d])
		}
	}
	out := make([]float64, k)
	for j, i := range assign(cost) {
		if i >= 0 {
			out[i] = cost[i][j]
		}
	}
	return out
}

// assign solves the rectangular assignment problem for cost (k rows ≤ m
// columns) by the Hungarian algorithm with potentials (Kuhn 1955, Munkres
// 1957; the shortest-augmenting-path form): it returns, per column, the
// row assigned to it or −1.
func assign(cost [][]float64) []int {
	k := len(cost)
	if k == 0 {
		return nil
	}
	m := len(cost[0])
	inf := math.Inf(1)
	// Rows 1…k, columns 1…m; column 0 is the virtual start.
	u, v := make([]float64, k+1), make([]float64, m+1)
	p, way := make([]int, m+1), make([]int, m+1)
	minv, used := make([]float64, m+1), make([]bool, m+1)
	for i := 1; i <= k; i++ {
		p[0] = i
		j0 := 0
		for j := range minv {
			minv[j], used[j] = inf, false
		}
		for {
			used[j0] = true
			i0, delta, j1 := p[j0], inf, 0
			for j := 1; j <= m; j++ {
				if used[j] {
					continue
				}
				if c := cost[i0-1][j-1] - u[i0] - v[j]; c < minv[j] {
					minv[j], way[j] = c, j0
				}
				if minv[j] < delta {
					delta, j1 = minv[j], j
				}
			}
			for j := 0; j <= m; j++ {
				if used[j] {
					u[p[j]] += delta
					v[j] -= delta
				} else {
					minv[j] -= delta
				}
			}
			j0 = j1
			if p[j0] == 0 {
				break
			}
		}
		for j0 != 0 {
			j1 := way[j0]
			p[j0] = p[j1]
			j0 = j1
		}
	}
	out := make([]int, m)
	for j := 1; j <= m; j++ {
		out[j-1] = p[j] - 1
	}
	return out
}
