package nn

import (
	"github.com/trellis-fl/trellis/internal/gemm"
	"github.com/trellis-fl/trellis/vec"
)

// The wide layout of a stride-1 convolution. Pad the input once into xpad
// (Cin planes of Hp×Wp, Hp = H+2p, Wp = W+2p) and compute every output row
// at the padded width Wp instead of Wo: output position (oy, ox) becomes
// column j = oy·Wp + ox, and its receptive-field entry (ci, ky, kx) is
// xpad[ci·Hp·Wp + ky·Wp + kx + j]. Each row of the column matrix is then one
// contiguous run of xpad,
//
//	col[(ci, ky, kx)][0 : Ho·Wp] = xpad[ci·Hp·Wp + ky·Wp + kx : … + Ho·Wp],
//
// so im2col is Cin·k² copies of Ho·Wp floats instead of Cin·k²·Ho copies of
// Wo floats with padding tests, and col2im is as many vector additions.
// The price is the Wp − Wo columns per output row that are not outputs:
// the products run 18/14 = 1.29× wider for the FEMNIST CNN's second
// convolution (32/28 = 1.14× for its first). Measured on the FEMNIST CNN,
// the copies saved outweigh the wider products (BENCHMARKS.md). The extra
// columns read xpad past a row's end (the next row's or plane's first
// k − 1 floats, or k − 1 floats of slack after the last plane): their
// outputs are dropped, and in backward their output gradients are zero,
// so they add exact zeros to dW and to positions of dxpad.
//
// Caffe's and PyTorch's CPU convolutions build the column matrix row by
// output row instead; the wide layout is the one cuDNN's implicit-GEMM
// kernels and some direct-convolution papers use for stride 1 (e.g.
// Georganas et al., "Anatomy of high-performance deep learning convolutions
// on SIMD architectures", SC 2018, which also pads the input once).

// wide reports whether the layer uses the wide layout (stride 1, unless a
// test forces the per-row im2col layout to compare the two).
func (c *conv2d) wide() bool { return c.s == 1 && !c.forceIm2col }

func (c *conv2d) hpad() int { return c.h + 2*c.pd }
func (c *conv2d) wpad() int { return c.w + 2*c.pd }

// newScratch returns one worker's buffers around the given column buffers;
// the padded-input and wide buffers start zeroed, and their padding stays
// zero (only interiors and output columns are ever written).
func (c *conv2d) newScratch(col, dcol []float32) convScratch {
	sc := convScratch{col: col, dcol: dcol}
	if !c.wide() {
		return sc
	}
	plane := c.cin*c.hpad()*c.wpad() + c.k - 1 // + the slack the last row's extra columns read
	wideOut := c.cout * c.ho * c.wpad()
	sc.xpad = make([]float32, plane)
	sc.ywide = make([]float32, wideOut)
	sc.dwide = make([]float32, wideOut)
	if c.needDx {
		sc.dxpad = make([]float32, plane)
	}
	return sc
}

// padInto copies one sample's planes into the interior of xpad.
func (c *conv2d) padInto(x, xpad []float32) {
	hp, wp := c.hpad(), c.wpad()
	for ci := 0; ci < c.cin; ci++ {
		for y := 0; y < c.h; y++ {
			src := x[(ci*c.h+y)*c.w : (ci*c.h+y+1)*c.w]
			copy(xpad[(ci*hp+y+c.pd)*wp+c.pd:], src)
		}
	}
}

// wideColumns writes the wide column matrix of the padded input.
func (c *conv2d) wideColumns(xpad, col []float32) {
	hp, wp := c.hpad(), c.wpad()
	width := c.ho * wp
	r := 0
	for ci := 0; ci < c.cin; ci++ {
		for ky := 0; ky < c.k; ky++ {
			base := ci*hp*wp + ky*wp
			for kx := 0; kx < c.k; kx++ {
				copy(col[r*width:(r+1)*width], xpad[base+kx:base+kx+width])
				r++
			}
		}
	}
}

// forwardWide computes one sample's output y (Cout×Ho×Wo) from x.
func (c *conv2d) forwardWide(eng *gemm.Engine, sc *convScratch, x, y []float32) {
	wp, kr := c.wpad(), c.colRows()
	width := c.ho * wp
	c.padInto(x, sc.xpad)
	c.wideColumns(sc.xpad, sc.col)
	eng.Sgemm(false, false, c.cout, width, kr, 1, c.wt, kr, sc.col, width, 0, sc.ywide, width)
	for co, b := range c.b {
		for oy := 0; oy < c.ho; oy++ {
			src := sc.ywide[co*width+oy*wp : co*width+oy*wp+c.wo]
			dst := y[(co*c.ho+oy)*c.wo : (co*c.ho+oy+1)*c.wo]
			for j, v := range src {
				dst[j] = v + b
			}
		}
	}
}

// backwardWide adds one sample's weight and bias gradients to gw and gb
// (overwriting them when beta is 0) and, when dx is not nil, writes its
// input gradient.
func (c *conv2d) backwardWide(eng *gemm.Engine, sc *convScratch, x, dy, dx []float32, beta float32, gw, gb []float32) {
	hp, wp, kr := c.hpad(), c.wpad(), c.colRows()
	width := c.ho * wp
	c.padInto(x, sc.xpad)
	c.wideColumns(sc.xpad, sc.col)
	// The output gradient at the padded width; the extra columns stay 0.
	for co := 0; co < c.cout; co++ {
		for oy := 0; oy < c.ho; oy++ {
			copy(sc.dwide[co*width+oy*wp:], dy[(co*c.ho+oy)*c.wo:(co*c.ho+oy+1)*c.wo])
		}
	}
	eng.Sgemm(false, true, c.cout, kr, width, 1, sc.dwide, width, sc.col, width, beta, gw, kr)
	rowSums(gb, dy, c.ho*c.wo, beta)
	if dx == nil {
		return
	}
	eng.Sgemm(true, false, kr, width, c.cout, 1, c.wt, kr, sc.dwide, width, 0, sc.dcol, width)
	clear(sc.dxpad)
	r := 0
	for ci := 0; ci < c.cin; ci++ {
		for ky := 0; ky < c.k; ky++ {
			base := ci*hp*wp + ky*wp
			for kx := 0; kx < c.k; kx++ {
				vec.AddTo(sc.dxpad[base+kx:base+kx+width], sc.dcol[r*width:(r+1)*width])
				r++
			}
		}
	}
	for ci := 0; ci < c.cin; ci++ {
		for y := 0; y < c.h; y++ {
			copy(dx[(ci*c.h+y)*c.w:(ci*c.h+y+1)*c.w], sc.dxpad[(ci*hp+y+c.pd)*wp+c.pd:])
		}
	}
}
