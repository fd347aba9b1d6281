package nn

import "github.com/trellis-fl/trellis/vec"

// The weight gradient of a first convolution straight from its max-pool's
// gradient. A 2×2 max-pool passes back one gradient per window, to the
// window's winner; the other three quarters of the convolution's output
// gradient are zero. The dense backward (pool scatter, then dW = dY·colᵀ
// over every output position) spends most of its work on those zeros: for
// the FEMNIST CNN's first layer, clearing and scattering 32×28×30 floats a
// sample and multiplying all of them into the 32×25 gradient. Here
//
//	dW[co][ci][ky][kx] = Σ_samples Σ_q g[co][q] · xpad[ci][pos + ky·P + kx]
//	db[co]             = Σ_samples Σ_q g[co][q]
//
// over the pooled outputs q only, pos = the winner of q's window (the
// pool's arg, as a wide column of the padded input xpad, convwide.go) and
// g its gradient, masked by the ReLU the pool applies (maxPool2d.relu):
// 4× fewer multiply-adds, no scatter, no dense gradient at all. The same
// nonzero terms as the dense product's, summed in another order (per
// weight: samples in order, then q in order), so the bits differ from the
// dense path's by rounding; they still depend only on the batch (the
// gradient chunks are gradChunks, as on every path).
//
// Only a layer that needs no input gradient takes it (the model's first:
// the input gradient would need the scatter back), and not under DP-SGD,
// whose per-sample norms read the dense gradient (pass.perSample).

// pooledAccPitch is the floats per kernel row of the accumulators: a
// vector of 8, so a 5-wide row is one AVX2 load and multiply-add.
const pooledAccPitch = 8

// takesPooledGrad reports whether this pass's backward computes the
// weight gradient from the pool's gradient (the pool then passes its
// output gradient through untouched).
func (c *conv2d) takesPooledGrad(p *pass) bool {
	return c.pool != nil && c.outWide() && !c.needDx && !p.perSample && !c.densePool &&
		c.k <= pooledAccPitch && c.pooledScratch() <= len(c.col)
}

// pooledScratch is the floats a worker needs (carved from its column
// buffer, which this path leaves unused): the accumulators of every
// (output, input) channel pair, and one sample's masked pooled gradient.
func (c *conv2d) pooledScratch() int {
	return c.cout*c.cin*c.k*pooledAccPitch + c.cout*c.pool.ho*c.pool.wo
}

// pooledBackwardChunk writes gradient chunk k's weight and bias gradients
// into part from the pool's gradient c.dy (one value per pooled output).
func (c *conv2d) pooledBackwardChunk(w, k int, part []float32) {
	pool, sc := c.pool, &c.scratch[w]
	kr, in, of := c.colRows(), c.cin*c.h*c.w, c.outFloats()
	q := pool.ho * pool.wo
	out := c.cout * q
	chunks := min(gradChunks, c.n)
	lo, hi := k*c.n/chunks, (k+1)*c.n/chunks
	pl, wp, width := c.plane(), c.pitch(), c.ho*c.pitch()
	accRows := c.k * pooledAccPitch
	acc := sc.col[:c.cout*c.cin*accRows]
	masked := sc.col[len(acc) : len(acc)+out]
	clear(acc)
	gw, gb := part[:c.cout*kr], part[c.cout*kr:]
	for s := lo; s < hi; s++ {
		c.padInto(c.x[s*in:(s+1)*in], sc.xpad)
		g := c.dy[s*out : (s+1)*out]
		if pool.relu {
			vec.ReLUGrad(masked, g, pool.y[s*out:(s+1)*out])
			g = masked
		}
		arg := pool.arg[s*out : (s+1)*out]
		for co := 0; co < c.cout; co++ {
			// The winners' offsets count from the batch's start of the
			// pool's input: sample s's channel co starts at sub.
			sub := s*of + co*width
			gq, pos := g[co*q:(co+1)*q], arg[co*q:(co+1)*q]
			for ci := 0; ci < c.cin; ci++ {
				pooledGrad(acc[(co*c.cin+ci)*accRows:][:accRows], c.k, sc.xpad[ci*pl:], wp, gq, pos, sub)
			}
		}
		beta := float32(1)
		if s == lo {
			beta = 0
		}
		rowSums(gb, g, q, beta)
	}
	for co := 0; co < c.cout; co++ {
		for ci := 0; ci < c.cin; ci++ {
			a := acc[(co*c.cin+ci)*accRows:]
			for ky := 0; ky < c.k; ky++ {
				copy(gw[co*kr+(ci*c.k+ky)*c.k:][:c.k], a[ky*pooledAccPitch:])
			}
		}
	}
}

// pooledGradVector lets pooledGrad use its AVX2 kernel; tests turn it off
// to compare with the loop.
var pooledGradVector = true

// pooledGrad adds, for each pooled output q, g[q] times the k×k window at
// x[pos[q] − sub] (rows pitch apart) to acc (row r at acc[8r:], lanes past
// k unused): with AVX2 for 5×5 windows, a loop elsewhere. The window of
// every q lies inside x; the AVX2 kernel reads 8 floats a row, 3 past a
// 5-wide window, which the wide layout always has: a winner's column is
// at most (Ho−1)·P + Wo − 1, its window's last row reads up to 4·P + 7
// further, and the padded input runs (Ho+4)·P + pad + 4 floats past a
// plane's start with P + pad ≥ W + 2·pad = Wo + 4 (convwide.go).
func pooledGrad(acc []float32, k int, x []float32, pitch int, g []float32, pos []int32, sub int) {
	_ = acc[(k-1)*pooledAccPitch+pooledAccPitch-1]
	if pooledGradVector && pooledGradVec(acc, k, x, pitch, g, pos, sub) {
		return
	}
	for i, v := range g {
		at := int(pos[i]) - sub
		for r := 0; r < k; r++ {
			row := x[at+r*pitch : at+r*pitch+k]
			a := acc[r*pooledAccPitch : r*pooledAccPitch+k]
			for j, xv := range row {
				a[j] += v * xv
			}
		}
	}
}
