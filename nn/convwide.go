package nn

import (
	"github.com/trellis-fl/trellis/internal/gemm"
	"github.com/trellis-fl/trellis/vec"
)

// The wide layout of a stride-1 convolution. Copy the input once into
// xpad, a zero-padded copy whose rows are P = max(W + p, Wo) floats apart
// (each row: p zeros, then the W inputs, then zeros to P), with p zero rows
// above and below and p zeros after the last row; and compute every output
// row at width P instead of Wo: output position (oy, ox) becomes column
// j = oy·P + ox, and its receptive-field entry (ci, ky, kx) is
// xpad[ci·plane + ky·P + kx + j]. A window that runs past a row's end reads
// the next row's leading zeros, which are the padding it needs (so a row
// pays for one side of padding, not two). Each row of the column matrix is
// then one contiguous run of xpad,
//
//	col[(ci, ky, kx)][0 : Ho·P] = xpad[ci·plane + ky·P + kx : … + Ho·P],
//
// so im2col is Cin·k² copies of Ho·P floats instead of Cin·k²·Ho copies of
// Wo floats with padding tests, and col2im is as many vector additions.
// The products need no copy at all: forward reads those runs of xpad in
// place (gemm.SgemmGathered, with colAt the runs' starts), and so does the
// weight gradient where the kernel reads gathered rows
// (gemm.SgemmGatheredNT: AVX2 and AVX-512); elsewhere it builds them.
// The price is the P − Wo columns per output row that are not outputs:
// 16/14 = 1.14× wider products for the FEMNIST CNN's second convolution,
// 30/28 for its first. The extra columns read xpad past a row's end (the
// next row's or plane's first floats, or k − 1 floats of slack after the
// last plane): their outputs are dropped, and in backward their output
// gradients are zero, so they add exact zeros to dW and to positions of
// the padded input gradient.
//
// Caffe's im2col (which PyTorch's CPU path follows) builds the column matrix
// output row by output row instead, with a padding test per element. This
// layout trades those for the discarded columns: the padded image is read
// as one long row, and the outputs that straddle two image rows are
// computed and thrown away.

// wide reports whether the layer uses the wide layout (stride 1, unless a
// test forces the per-row im2col layout to compare the two).
func (c *conv2d) wide() bool { return c.s == 1 && !c.forceIm2col }

// pitch is P, the distance between rows of the padded input and of the
// wide output.
func (c *conv2d) pitch() int { return max(c.w+c.pd, c.wo) }

// plane is the floats of one padded input channel.
func (c *conv2d) plane() int { return (c.h+2*c.pd)*c.pitch() + c.pd }

// padAt is where input row y of channel ci starts in xpad.
func (c *conv2d) padAt(ci, y int) int { return ci*c.plane() + (y+c.pd)*c.pitch() + c.pd }

// newScratch returns one worker's buffers around the given column buffers;
// the padded-input and wide buffers start zeroed, and their padding stays
// zero (only interiors and output columns are ever written).
func (c *conv2d) newScratch(col, dcol []float32) convScratch {
	sc := convScratch{col: col, dcol: dcol}
	if !c.wide() {
		return sc
	}
	plane := c.cin*c.plane() + c.k - 1 // + the slack the last row's extra columns read
	sc.xpad = make([]float32, plane)
	if !c.outWide() { // else the output and its gradient are wide already
		wideOut := c.cout * c.ho * c.pitch()
		sc.ywide = make([]float32, wideOut)
		sc.dwide = make([]float32, wideOut)
	}
	if c.needDx {
		sc.dxpad = make([]float32, plane)
	}
	return sc
}

// denseRows copies n samples' outputs (or output gradients) at the wide
// pitch (outPitch) into dst with rows Wo apart, and returns dst's part.
func (c *conv2d) denseRows(wide, dst []float32, n int) []float32 {
	wp := c.outPitch()
	rows := n * c.cout * c.ho
	for r := range rows {
		copy(dst[r*c.wo:(r+1)*c.wo], wide[r*wp:])
	}
	return dst[:rows*c.wo]
}

// padInto copies one sample's planes into the interior of xpad.
func (c *conv2d) padInto(x, xpad []float32) {
	for ci := 0; ci < c.cin; ci++ {
		for y := 0; y < c.h; y++ {
			copy(xpad[c.padAt(ci, y):], x[(ci*c.h+y)*c.w:(ci*c.h+y+1)*c.w])
		}
	}
}

// wideColumns writes the wide column matrix of the padded input.
func (c *conv2d) wideColumns(xpad, col []float32) {
	pl, wp := c.plane(), c.pitch()
	width := c.ho * wp
	r := 0
	for ci := 0; ci < c.cin; ci++ {
		for ky := 0; ky < c.k; ky++ {
			base := ci*pl + ky*wp
			for kx := 0; kx < c.k; kx++ {
				copy(col[r*width:(r+1)*width], xpad[base+kx:base+kx+width])
				r++
			}
		}
	}
}

// forwardWide computes one sample's output y (Cout×Ho×Wo, or at the wide
// pitch: outPitch) from x.
func (c *conv2d) forwardWide(eng *gemm.Engine, sc *convScratch, x, y []float32) {
	wp := c.pitch()
	width := c.ho * wp
	c.padInto(x, sc.xpad)
	if c.outWide() {
		eng.SgemmGathered(&c.wPacked, width, 1, sc.xpad, c.colAt, 0, y, width)
		for co, b := range c.b {
			ch := y[co*width : (co+1)*width]
			vec.AddConst(ch, ch, b)
		}
		return
	}
	// The column matrix's rows, read in place (colAt): no im2col copy.
	eng.SgemmGathered(&c.wPacked, width, 1, sc.xpad, c.colAt, 0, sc.ywide, width)
	// The bias goes onto a whole wide channel at once (the discarded
	// columns too) and the rows are then copied out: one vector call per
	// channel instead of one per row of Wo floats (28 for the FEMNIST CNN's
	// first layer, where the per-row calls were 3.4 % of a step).
	for co, b := range c.b {
		ch := sc.ywide[co*width : (co+1)*width]
		vec.AddConst(ch, ch, b)
		for oy := 0; oy < c.ho; oy++ {
			copy(y[(co*c.ho+oy)*c.wo:(co*c.ho+oy+1)*c.wo], ch[oy*wp:oy*wp+c.wo])
		}
	}
}

// backwardWide adds one sample's weight and bias gradients to gw (or, if
// not nil, to gwT, the weight gradient transposed: transposedGrad) and gb,
// overwriting them when beta is 0, and, when dx is not nil, writes its
// input gradient.
func (c *conv2d) backwardWide(eng *gemm.Engine, sc *convScratch, x, dy, dx []float32, beta float32, gw, gwT, gb []float32) {
	pl, wp, kr := c.plane(), c.pitch(), c.colRows()
	width := c.ho * wp
	c.padInto(x, sc.xpad)
	// The output gradient at the padded width; the extra columns are 0.
	dwide := dy
	if !c.outWide() {
		dwide = sc.dwide
		for co := 0; co < c.cout; co++ {
			for oy := 0; oy < c.ho; oy++ {
				copy(dwide[co*width+oy*wp:], dy[(co*c.ho+oy)*c.wo:(co*c.ho+oy+1)*c.wo])
			}
		}
	}
	// dW = dy · colᵀ: with a kernel that reads gathered rows, the columns
	// are read in place from xpad; else they are built first.
	switch {
	case gwT != nil:
		eng.SgemmGatheredNT(kr, c.cout, width, 1, sc.xpad, c.colAt, dwide, width, beta, gwT, c.cout)
	case eng.GathersRows():
		eng.SgemmNTGathered(c.cout, kr, width, 1, dwide, width, sc.xpad, c.colAt, beta, gw, kr)
	default:
		c.wideColumns(sc.xpad, sc.col)
		eng.Sgemm(false, true, c.cout, kr, width, 1, dwide, width, sc.col, width, beta, gw, kr)
	}
	if c.outWide() {
		// Each channel's row sum over the wide rows: the extra columns'
		// zeros are +0 (the pool's cleared gradient, where no window
		// reaches), as is every other zero of its gradient (+0 plus a
		// winner's ±0 is +0), so a partial sum is never −0 and adding
		// them changes no bit.
		rowSums(gb, dwide, width, beta)
	} else {
		rowSums(gb, dy, c.ho*c.wo, beta)
	}
	if dx == nil {
		return
	}
	eng.SgemmPacked(&c.wtPacked, false, width, 1, dwide, width, 0, sc.dcol, width)
	clear(sc.dxpad)
	r := 0
	for ci := 0; ci < c.cin; ci++ {
		for ky := 0; ky < c.k; ky++ {
			base := ci*pl + ky*wp
			for kx := 0; kx < c.k; kx++ {
				vec.AddTo(sc.dxpad[base+kx:base+kx+width], sc.dcol[r*width:(r+1)*width])
				r++
			}
		}
	}
	for ci := 0; ci < c.cin; ci++ {
		for y := 0; y < c.h; y++ {
			copy(dx[(ci*c.h+y)*c.w:(ci*c.h+y+1)*c.w], sc.dxpad[c.padAt(ci, y):])
		}
	}
}
