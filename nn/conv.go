package nn

import (
	"fmt"
	"math/rand/v2"
)

// conv2d is a 2-D convolution over NCHW inputs with square kernels, computed
// per sample as a matrix product with an im2col buffer:
//
//	y_n [Cout × HoWo] = W [Cout × Cin·k·k] · col(x_n) [Cin·k·k × HoWo]
//
// One sample's column buffer is small enough to stay in cache (conv2 of the
// FEMNIST CNN: 800 × 196 floats), while a whole batch's would not; backward
// rebuilds the columns of each sample instead of keeping the batch's.
type conv2d struct {
	cin, h, w      int
	cout, k, s, pd int
	ho, wo         int
	wt, b          []float32
	gw, gb         []float32
	x              []float32
	y, dx          []float32
	col, dcol      []float32
	needDx         bool
}

func newConv2d(in []int, cout, k, stride, pad int) (*conv2d, error) {
	if len(in) != 3 {
		return nil, fmt.Errorf("conv2d needs a C×H×W input, got %s", shapeString(in))
	}
	c := &conv2d{cin: in[0], h: in[1], w: in[2], cout: cout, k: k, s: stride, pd: pad}
	if k < 1 || stride < 1 || pad < 0 || cout < 1 {
		return nil, fmt.Errorf("conv2d: kernel %d, stride %d, padding %d, channels %d: kernel, stride and channels must be ≥ 1 and padding ≥ 0", k, stride, pad, cout)
	}
	c.ho = (c.h+2*pad-k)/stride + 1
	c.wo = (c.w+2*pad-k)/stride + 1
	if c.h+2*pad < k || c.w+2*pad < k {
		return nil, fmt.Errorf("conv2d: kernel %d larger than padded input %s", k, shapeString(in))
	}
	return c, nil
}

func (c *conv2d) kind() string {
	return fmt.Sprintf("conv2d %d→%d k%d s%d p%d", c.cin, c.cout, c.k, c.s, c.pd)
}
func (c *conv2d) outShape() []int { return []int{c.cout, c.ho, c.wo} }
func (c *conv2d) colRows() int    { return c.cin * c.k * c.k }
func (c *conv2d) paramCount() int { return c.cout*c.colRows() + c.cout }
func (c *conv2d) stateCount() int { return 0 }
func (c *conv2d) bufferFloats() int {
	return len(c.y) + len(c.dx) + len(c.col) + len(c.dcol)
}

func (c *conv2d) bind(p, g, _ []float32) {
	nw := c.cout * c.colRows()
	c.wt, c.b = p[:nw], p[nw:nw+c.cout]
	c.gw, c.gb = g[:nw], g[nw:nw+c.cout]
}

// initParams follows torch.nn.Conv2d: uniform in ±1/sqrt(fan_in), fan_in =
// Cin·k·k, for weights and bias.
func (c *conv2d) initParams(r *rand.Rand) {
	uniformInit(r, c.wt, c.colRows())
	uniformInit(r, c.b, c.colRows())
}

func (c *conv2d) alloc(n int, needDx bool) {
	hw := c.ho * c.wo
	c.y = grow(c.y, n*c.cout*hw)
	c.col = grow(c.col, c.colRows()*hw)
	c.needDx = needDx
	if needDx {
		c.dx = grow(c.dx, n*c.cin*c.h*c.w)
		c.dcol = grow(c.dcol, c.colRows()*hw)
	}
}

// validRange returns the output columns [lo, hi) whose input column
// ox·s − pad + kx falls inside the image; the rest read padding.
func (c *conv2d) validRange(kx int) (lo, hi int) {
	// ox·s ≥ pad − kx and ox·s ≤ w − 1 + pad − kx.
	lo = 0
	if d := c.pd - kx; d > 0 {
		lo = (d + c.s - 1) / c.s
	}
	hi = 0
	if d := c.w - 1 + c.pd - kx; d >= 0 {
		hi = min(d/c.s+1, c.wo)
	}
	return lo, max(hi, lo)
}

// im2col writes the receptive fields of one sample into col, row r =
// (ci, ky, kx), column = output position; padding reads as zero. Rows are
// filled a run at a time (a plain copy for stride 1) rather than element by
// element with bounds tests: this is on the training hot path, twice per
// sample and conv layer.
func (c *conv2d) im2col(x, col []float32) {
	hw := c.ho * c.wo
	r := 0
	for ci := 0; ci < c.cin; ci++ {
		plane := x[ci*c.h*c.w : (ci+1)*c.h*c.w]
		for ky := 0; ky < c.k; ky++ {
			for kx := 0; kx < c.k; kx++ {
				dst := col[r*hw : (r+1)*hw]
				r++
				lo, hi := c.validRange(kx)
				for oy := 0; oy < c.ho; oy++ {
					out := dst[oy*c.wo : (oy+1)*c.wo]
					iy := oy*c.s - c.pd + ky
					if iy < 0 || iy >= c.h {
						clear(out)
						continue
					}
					clear(out[:lo])
					clear(out[hi:])
					row := plane[iy*c.w : (iy+1)*c.w]
					ix := lo*c.s - c.pd + kx
					if c.s == 1 {
						copy(out[lo:hi], row[ix:])
						continue
					}
					for ox := lo; ox < hi; ox++ {
						out[ox] = row[ix]
						ix += c.s
					}
				}
			}
		}
	}
}

// col2im adds the column gradients of one sample back onto dx (which the
// caller zeroed), the adjoint of im2col.
func (c *conv2d) col2im(dcol, dx []float32) {
	hw := c.ho * c.wo
	r := 0
	for ci := 0; ci < c.cin; ci++ {
		plane := dx[ci*c.h*c.w : (ci+1)*c.h*c.w]
		for ky := 0; ky < c.k; ky++ {
			for kx := 0; kx < c.k; kx++ {
				src := dcol[r*hw : (r+1)*hw]
				r++
				lo, hi := c.validRange(kx)
				if lo >= hi {
					continue
				}
				for oy := 0; oy < c.ho; oy++ {
					iy := oy*c.s - c.pd + ky
					if iy < 0 || iy >= c.h {
						continue
					}
					in := src[oy*c.wo+lo : oy*c.wo+hi]
					row := plane[iy*c.w : (iy+1)*c.w]
					ix := lo*c.s - c.pd + kx
					if c.s == 1 {
						row = row[ix : ix+len(in)]
						for j, v := range in {
							row[j] += v
						}
						continue
					}
					for _, v := range in {
						row[ix] += v
						ix += c.s
					}
				}
			}
		}
	}
}

func (c *conv2d) forward(p *pass, x []float32, n int) []float32 {
	c.x = x
	hw, in, out, kr := c.ho*c.wo, c.cin*c.h*c.w, c.cout*c.ho*c.wo, c.colRows()
	y := c.y[:n*out]
	for i := 0; i < n; i++ {
		c.im2col(x[i*in:(i+1)*in], c.col)
		yi := y[i*out : (i+1)*out]
		p.eng.Sgemm(false, false, c.cout, hw, kr, 1, c.wt, kr, c.col, hw, 0, yi, hw)
		for co, b := range c.b {
			row := yi[co*hw : (co+1)*hw]
			for j := range row {
				row[j] += b
			}
		}
	}
	return y
}

func (c *conv2d) backward(p *pass, dy []float32, n int) []float32 {
	hw, in, out, kr := c.ho*c.wo, c.cin*c.h*c.w, c.cout*c.ho*c.wo, c.colRows()
	var dx []float32
	if c.needDx {
		dx = c.dx[:n*in]
		clear(dx)
	}
	for i := 0; i < n; i++ {
		dyi := dy[i*out : (i+1)*out]
		c.im2col(c.x[i*in:(i+1)*in], c.col)
		// dW += dy_i · col_iᵀ ; db += row sums of dy_i.
		p.eng.Sgemm(false, true, c.cout, kr, hw, 1, dyi, hw, c.col, hw, 1, c.gw, kr)
		for co := range c.gb {
			var s float32
			for _, v := range dyi[co*hw : (co+1)*hw] {
				s += v
			}
			c.gb[co] += s
		}
		if c.needDx {
			// dcol = Wᵀ · dy_i, then scatter back to the input layout.
			p.eng.Sgemm(true, false, kr, hw, c.cout, 1, c.wt, kr, dyi, hw, 0, c.dcol, hw)
			c.col2im(c.dcol, dx[i*in:(i+1)*in])
		}
	}
	return dx
}
