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
// least, exactly (dynamic programming over subsets of the true images,
// k ≤ 20), and returns each true image's MSE. A batch's reconstructions
// come in no particular order; from a sum of several nodes' batches the
// attacker cannot tell which are the target's, and Match gives it the
// best choice: an upper bound on what it learns.
func Match(truth, recon []float64, d int) []float64 {
	k, m := len(truth)/d, len(recon)/d
	cost := make([][]float64, m)
	for j := range m {
		cost[j] = make([]float64, k)
		for i := range k {
			cost[j][i] = MSE(truth[i*d:(i+1)*d], recon[j*d:(j+1)*d])
		}
	}
	full := 1<<k - 1
	inf := math.Inf(1)
	// best[mask]: least cost of matching the true images in mask to the
	// reconstructions seen so far; from[j][mask]: which true image
	// reconstruction j took (−1 none), to read the assignment back.
	best := make([]float64, full+1)
	for s := range best {
		best[s] = inf
	}
	best[0] = 0
	from := make([][]int8, m)
	for j := range m {
		next := append([]float64(nil), best...)
		from[j] = make([]int8, full+1)
		for s := range from[j] {
			from[j][s] = -1
		}
		for s, c := range best {
			if c == inf {
				continue
			}
			for i := range k {
				if s&(1<<i) != 0 {
					continue
				}
				if t := s | 1<<i; c+cost[j][i] < next[t] {
					next[t] = c + cost[j][i]
					from[j][t] = int8(i)
				}
			}
		}
		best = next
	}
	// Back from the last reconstruction: from[j][s] ≥ 0 says state s's
	// value after j came from j taking that image, −1 that it was the
	// value before j.
	out := make([]float64, k)
	s := full
	for j := m - 1; j >= 0 && s != 0; j-- {
		if i := from[j][s]; i >= 0 {
			out[i] = cost[j][i]
			s &^= 1 << i
		}
	}
	return out
}
