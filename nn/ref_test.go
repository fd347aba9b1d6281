package nn

import (
	"math"
)

// This file is an independent float64 reference of every layer and head,
// written as direct loops from the definitions (no im2col, no GEMM, no
// shared helpers with the float32 code), used as the oracle of the
// gradient checks.

func refLinear(x []float64, n, in, out int, w []float64) []float64 {
	W, b := w[:in*out], w[in*out:]
	y := make([]float64, n*out)
	for i := 0; i < n; i++ {
		for o := 0; o < out; o++ {
			s := b[o]
			for j := 0; j < in; j++ {
				s += x[i*in+j] * W[o*in+j]
			}
			y[i*out+o] = s
		}
	}
	return y
}

func refConv(x []float64, n int, c *conv2d, w []float64) []float64 {
	kk := c.k * c.k
	W, b := w[:c.cout*c.cin*kk], w[c.cout*c.cin*kk:]
	y := make([]float64, n*c.cout*c.ho*c.wo)
	for i := 0; i < n; i++ {
		for co := 0; co < c.cout; co++ {
			for oy := 0; oy < c.ho; oy++ {
				for ox := 0; ox < c.wo; ox++ {
					s := b[co]
					for ci := 0; ci < c.cin; ci++ {
						for ky := 0; ky < c.k; ky++ {
							for kx := 0; kx < c.k; kx++ {
								iy, ix := oy*c.s-c.pd+ky, ox*c.s-c.pd+kx
								if iy < 0 || iy >= c.h || ix < 0 || ix >= c.w {
									continue
								}
								s += W[((co*c.cin+ci)*c.k+ky)*c.k+kx] * x[((i*c.cin+ci)*c.h+iy)*c.w+ix]
							}
						}
					}
					y[((i*c.cout+co)*c.ho+oy)*c.wo+ox] = s
				}
			}
		}
	}
	return y
}

func refMaxPool(x []float64, n int, m *maxPool2d) []float64 {
	y := make([]float64, n*m.c*m.ho*m.wo)
	for pl := 0; pl < n*m.c; pl++ {
		for oy := 0; oy < m.ho; oy++ {
			for ox := 0; ox < m.wo; ox++ {
				best := math.Inf(-1)
				for ky := 0; ky < m.k; ky++ {
					for kx := 0; kx < m.k; kx++ {
						best = math.Max(best, x[(pl*m.h+oy*m.s+ky)*m.w+ox*m.s+kx])
					}
				}
				y[(pl*m.ho+oy)*m.wo+ox] = best
			}
		}
	}
	return y
}

func refBatchNorm(x []float64, n int, b *batchNorm, w []float64) []float64 {
	gamma, beta := w[:b.c], w[b.c:]
	y := make([]float64, len(x))
	for ch := 0; ch < b.c; ch++ {
		var mean, vr float64
		cnt := float64(n * b.hw)
		for i := 0; i < n; i++ {
			for j := 0; j < b.hw; j++ {
				mean += x[(i*b.c+ch)*b.hw+j]
			}
		}
		mean /= cnt
		for i := 0; i < n; i++ {
			for j := 0; j < b.hw; j++ {
				d := x[(i*b.c+ch)*b.hw+j] - mean
				vr += d * d
			}
		}
		vr /= cnt
		for i := 0; i < n; i++ {
			for j := 0; j < b.hw; j++ {
				o := (i*b.c+ch)*b.hw + j
				y[o] = gamma[ch]*(x[o]-mean)/math.Sqrt(vr+1e-5) + beta[ch]
			}
		}
	}
	return y
}

// refForward is the training-mode forward pass of m in float64 with
// parameters w; dropout reuses the masks of m's last training forward.
func refForward(m *Model, w, x []float64, n int) []float64 {
	cur := append([]float64(nil), x...)
	off := 0
	for _, l := range m.layers {
		pw := w[off : off+l.paramCount()]
		off += l.paramCount()
		switch l := l.(type) {
		case *linear:
			cur = refLinear(cur, n, l.in, l.out, pw)
		case *conv2d:
			cur = refConv(cur, n, l, pw)
		case *maxPool2d:
			cur = refMaxPool(cur, n, l)
		case *batchNorm:
			cur = refBatchNorm(cur, n, l, pw)
		case *relu:
			for i := range cur {
				cur[i] = math.Max(cur[i], 0)
			}
		case *dropout:
			if l.active {
				for i := range cur {
					cur[i] *= float64(l.mask[i])
				}
			}
		case *flatten:
		default:
			panic("refForward: unknown layer")
		}
	}
	return cur
}

// refLoss is the mean loss of the head over n samples.
func refLoss(h Head, z []float64, y []int, n, k int) float64 {
	var total float64
	for i := 0; i < n; i++ {
		zi := z[i*k : (i+1)*k]
		switch h := h.(type) {
		case Softmax:
			var s float64
			for _, v := range zi {
				s += math.Exp(v)
			}
			total += math.Log(s) - zi[y[i]]
		case *Evidential:
			total += refEvidential(zi, y[i], h.Lambda, !h.NoVariance)
		default:
			panic("refLoss: unknown head")
		}
	}
	return total / float64(n)
}

// refEvidential is the per-sample loss of the DMTT paper written literally.
func refEvidential(z []float64, y int, lambda float64, variance bool) float64 {
	k := len(z)
	alpha := make([]float64, k)
	var S float64
	for j, v := range z {
		alpha[j] = math.Log(1+math.Exp(v)) + 1
		S += alpha[j]
	}
	var loss float64
	for j := range alpha {
		p := alpha[j] / S
		yj := 0.0
		if j == y {
			yj = 1
		}
		loss += (yj - p) * (yj - p)
		if variance {
			loss += p * (1 - p) / (S + 1)
		}
	}
	at := make([]float64, k)
	var St float64
	for j := range alpha {
		at[j] = alpha[j]
		if j == y {
			at[j] = 1 // y + (1 − y)·alpha
		}
		St += at[j]
	}
	lgS, _ := math.Lgamma(St)
	lgK, _ := math.Lgamma(float64(k))
	kl := lgS - lgK
	for j := range at {
		lg, _ := math.Lgamma(at[j])
		kl += -lg + (at[j]-1)*(digamma(at[j])-digamma(St))
	}
	return loss + lambda*kl
}
