package nn

import (
	"fmt"
	"github.com/trellis-fl/trellis/internal/memsize"
	"math"
	"math/rand/v2"
)

// batchNorm normalizes each channel over the batch (and, for 2-D inputs,
// over the spatial positions), then applies the trainable scale gamma and
// shift beta. gamma and beta are ordinary parameters in the flat vector;
// the running mean and variance are node-local state (Model.State), never
// shared or aggregated (docs/methods/murmura.md). Constants follow PyTorch:
// eps = 1e-5, momentum = 0.1, the running variance uses the unbiased batch
// variance, normalization uses the biased one.
type batchNorm struct {
	shape        []int // per-sample shape: [C] (1-d) or [C, H, W] (2-d)
	c, hw        int
	gamma, beta  []float32
	gg, gb       []float32
	rmean, rvar  []float32 // running statistics (state)
	xhat, y, dx  []float32
	invstd       []float32 // per channel, of the last training forward
	needDx       bool
	trainedBatch bool // whether the last forward used batch statistics
}

const (
	bnEps      = 1e-5
	bnMomentum = 0.1
)

func newBatchNorm(in []int) (*batchNorm, error) {
	switch len(in) {
	case 1:
		return &batchNorm{shape: in, c: in[0], hw: 1}, nil
	case 3:
		return &batchNorm{shape: in, c: in[0], hw: in[1] * in[2]}, nil
	}
	return nil, fmt.Errorf("batchnorm needs a vector or C×H×W input, got %s", shapeString(in))
}

func (b *batchNorm) kind() string {
	if len(b.shape) == 1 {
		return fmt.Sprintf("batchnorm1d %d", b.c)
	}
	return fmt.Sprintf("batchnorm2d %d", b.c)
}
func (b *batchNorm) outShape() []int { return b.shape }
func (b *batchNorm) paramCount() int { return 2 * b.c }
func (b *batchNorm) stateCount() int { return 2 * b.c }
func (b *batchNorm) bufferFloats() int {
	return len(b.xhat) + len(b.y) + len(b.dx) + len(b.invstd)
}

func (b *batchNorm) bind(p, g, s []float32) {
	b.gamma, b.beta = p[:b.c], p[b.c:2*b.c]
	b.gg, b.gb = cut(g, 0, b.c), cut(g, b.c, 2*b.c)
	b.rmean, b.rvar = s[:b.c], s[b.c:2*b.c]
}

func (b *batchNorm) initParams(*rand.Rand) {
	for i := 0; i < b.c; i++ {
		b.gamma[i], b.beta[i] = 1, 0
		b.rmean[i], b.rvar[i] = 0, 1
	}
}

func (b *batchNorm) alloc(n int, needDx bool) {
	b.xhat = grow(b.xhat, n*b.c*b.hw)
	b.y = grow(b.y, n*b.c*b.hw)
	b.invstd = grow(b.invstd, b.c)
	b.needDx = needDx
	if needDx {
		b.dx = grow(b.dx, n*b.c*b.hw)
	}
}

func (b *batchNorm) footprint(n int, needDx bool, fp *footprinter) {
	all := memsize.Mul(int64(n), int64(b.c), int64(b.hw))
	fp.buffer(all) // xhat
	fp.buffer(all) // y
	fp.buffer(int64(b.c))
	if needDx {
		fp.buffer(all)
	}
}

// at returns the offset of channel ch of sample i.
func (b *batchNorm) at(i, ch int) int { return (i*b.c + ch) * b.hw }

func (b *batchNorm) forward(p *pass, x []float32, n int) []float32 {
	y := b.y[:n*b.c*b.hw]
	b.trainedBatch = p.train
	for ch := 0; ch < b.c; ch++ {
		var mean, invstd float64
		if p.train {
			var s, ss float64
			for i := 0; i < n; i++ {
				for _, v := range x[b.at(i, ch) : b.at(i, ch)+b.hw] {
					s += float64(v)
				}
			}
			cnt := float64(n * b.hw)
			mean = s / cnt
			for i := 0; i < n; i++ {
				for _, v := range x[b.at(i, ch) : b.at(i, ch)+b.hw] {
					d := float64(v) - mean
					ss += d * d
				}
			}
			variance := ss / cnt
			invstd = 1 / math.Sqrt(variance+bnEps)
			b.invstd[ch] = float32(invstd)
			unbiased := variance
			if cnt > 1 {
				unbiased = ss / (cnt - 1)
			}
			b.rmean[ch] = float32((1-bnMomentum)*float64(b.rmean[ch]) + bnMomentum*mean)
			b.rvar[ch] = float32((1-bnMomentum)*float64(b.rvar[ch]) + bnMomentum*unbiased)
		} else {
			mean = float64(b.rmean[ch])
			invstd = 1 / math.Sqrt(float64(b.rvar[ch])+bnEps)
		}
		m, is, g, bt := float32(mean), float32(invstd), b.gamma[ch], b.beta[ch]
		for i := 0; i < n; i++ {
			off := b.at(i, ch)
			for j, v := range x[off : off+b.hw] {
				xh := (v - m) * is
				b.xhat[off+j] = xh
				y[off+j] = g*xh + bt
			}
		}
	}
	return y
}

// backward of training-mode batch norm:
// dx = invstd/N · (N·dxhat − Σdxhat − xhat·Σ(dxhat·xhat)), dxhat = dy·gamma.
func (b *batchNorm) backward(_ *pass, dy []float32, n int) []float32 {
	var dx []float32
	if b.needDx {
		dx = b.dx[:n*b.c*b.hw]
	}
	cnt := float64(n * b.hw)
	for ch := 0; ch < b.c; ch++ {
		var sdy, sdyx float64
		for i := 0; i < n; i++ {
			off := b.at(i, ch)
			for j, g := range dy[off : off+b.hw] {
				sdy += float64(g)
				sdyx += float64(g) * float64(b.xhat[off+j])
			}
		}
		b.gg[ch] += float32(sdyx)
		b.gb[ch] += float32(sdy)
		if dx == nil {
			continue
		}
		gamma := float64(b.gamma[ch])
		if !b.trainedBatch {
			// Evaluation-mode statistics are constants: dx = dy·gamma·invstd.
			is := gamma / math.Sqrt(float64(b.rvar[ch])+bnEps)
			for i := 0; i < n; i++ {
				off := b.at(i, ch)
				for j, g := range dy[off : off+b.hw] {
					dx[off+j] = float32(float64(g) * is)
				}
			}
			continue
		}
		k := gamma * float64(b.invstd[ch]) / cnt
		mdy, mdyx := sdy, sdyx
		for i := 0; i < n; i++ {
			off := b.at(i, ch)
			for j, g := range dy[off : off+b.hw] {
				dx[off+j] = float32(k * (cnt*float64(g) - mdy - float64(b.xhat[off+j])*mdyx))
			}
		}
	}
	return dx
}
