package nn

import (
	"fmt"
	"math/rand/v2"

	"github.com/trellis-fl/trellis/internal/gemm"
	"github.com/trellis-fl/trellis/internal/memsize"
	"github.com/trellis-fl/trellis/vec"
)

// conv2d is a 2-D convolution over NCHW inputs with square kernels, computed
// per sample as a matrix product with an im2col buffer (for stride 1 in the
// wide layout of convwide.go):
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
	// pool is the 2×2 max-pool right after (stackBuilder.maxPool), which
	// reads a wide output in place (outPitch) and, for a first layer, may
	// hand back its own gradient (takesPooledGrad); nil if none.
	pool        *maxPool2d
	densePool   bool // tests: the pool's dense gradient even where takesPooledGrad would not
	forceIm2col bool // tests: stride 1 without the wide layout
	// noTransposedGrad (tests) sums the weight gradient as it is, one
	// transposed product per sample, instead of transposed (transposedGrad).
	noTransposedGrad bool
	forceDirect      bool // tests: no Winograd (convwino.go)
	// wino is the Winograd F(4×4, 5×5) state when useWinograd holds
	// (convwino.go), nil otherwise.
	wino                           *winograd
	winoForwardFn, winoBackwardFn  func(worker, lo, hi int)
	winoFilterFn, winoFilterGradFn func(worker, lo, hi int)
	// The current pass, for the worker functions Each calls.
	run *pass
	n   int
	// pooled: this pass's dy is the pool's gradient (takesPooledGrad).
	pooled bool
	dy     []float32
	dxn    []float32
	// scratch[w] is worker w's column buffers; partial[k] holds gradient
	// chunk k (see gradChunks). forwardFn and backwardFn are the worker
	// functions, bound by alloc so that a pass allocates nothing.
	scratch               []convScratch
	partial               [][]float32
	forwardFn, backwardFn func(worker, lo, hi int)
	// W and Wᵀ packed once per pass for the engine's kernel, shared by
	// every sample's product (packing them per sample was 7 % of an AVX2
	// FEMNIST CNN step). Scratch of the matrix engine's kind: counted in
	// its workspace, not in bufferFloats.
	wPacked, wtPacked gemm.PackedA
	// colAt[r] is where row r of the wide column matrix starts in xpad
	// (convwide.go): the forward product reads the padded input through
	// these instead of a copy. kr ints, not in bufferFloats.
	colAt []int
}

// convScratch is one worker's buffers: the im2col columns and their
// gradient, and for the wide layout (stride 1, see convwide.go) the padded input,
// its gradient, and the wide output and output gradient.
type convScratch struct {
	col, dcol    []float32
	xpad, dxpad  []float32
	ywide, dwide []float32
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

// outPitch is the distance between the output's rows: Wo, or, in the wide
// layout feeding a max-pool, the wide rows' pitch P (convwide.go). The
// pool then reads the wide output in place, its input gradient comes back
// at that pitch with zeros in the P − Wo extra columns, and the copies of
// the output out of, and of its gradient into, the wide layout are gone
// (for the FEMNIST CNN's first layer, 2 of its 5 ms a step).
func (c *conv2d) outPitch() int {
	if c.outWide() {
		return c.pitch()
	}
	return c.wo
}

// outWide reports whether the output (and output gradient) are at the
// wide pitch: see outPitch.
func (c *conv2d) outWide() bool { return c.pool != nil && c.wide() && !c.useWinograd() }

// outFloats is the floats of one sample's output (and output gradient).
func (c *conv2d) outFloats() int  { return c.cout * c.ho * c.outPitch() }
func (c *conv2d) colRows() int    { return c.cin * c.k * c.k }
func (c *conv2d) paramCount() int { return c.cout*c.colRows() + c.cout }
func (c *conv2d) stateCount() int { return 0 }
func (c *conv2d) bufferFloats() int {
	n := len(c.y) + len(c.dx) + len(c.col) + len(c.dcol)
	for w, sc := range c.scratch {
		if w > 0 {
			n += len(sc.col) + len(sc.dcol)
		}
		n += len(sc.xpad) + len(sc.dxpad) + len(sc.ywide) + len(sc.dwide)
	}
	for _, p := range c.partial {
		n += len(p)
	}
	if c.wino != nil {
		n += c.wino.bufferFloats()
	}
	return n
}

func (c *conv2d) bind(p, g, _ []float32) {
	nw := c.cout * c.colRows()
	c.wt, c.b = p[:nw], p[nw:nw+c.cout]
	c.gw, c.gb = cut(g, 0, nw), cut(g, nw, nw+c.cout)
}

// initParams follows torch.nn.Conv2d: uniform in ±1/sqrt(fan_in), fan_in =
// Cin·k·k, for weights and bias.
func (c *conv2d) initParams(r *rand.Rand) {
	uniformInit(r, c.wt, c.colRows())
	uniformInit(r, c.b, c.colRows())
}

func (c *conv2d) alloc(n int, needDx bool) {
	c.forwardFn, c.backwardFn = c.forwardRange, c.backwardRange
	hw := c.colWidth()
	c.y = grow(c.y, n*c.outFloats())
	// The column buffers serve DP-SGD's per-sample gradients on every path.
	c.col = grow(c.col, c.colRows()*hw)
	c.needDx = needDx
	if needDx {
		c.dx = grow(c.dx, n*c.cin*c.h*c.w)
		c.dcol = grow(c.dcol, c.colRows()*hw)
	}
	c.scratch = c.scratch[:0]
	if c.useWinograd() {
		c.winoForwardFn, c.winoBackwardFn = c.winoForwardRange, c.winoBackwardRange
		c.winoFilterFn, c.winoFilterGradFn = c.winoFilters, c.winoFilterGrads
		c.partial = nil
		c.allocWinograd()
		return
	}
	c.wino = nil
	if len(c.partial) == 0 {
		c.partial = [][]float32{make([]float32, c.cout*c.colRows()+c.cout)}
	}
	c.ensureWorkers(1)
	if c.s == 1 {
		c.colAt = c.colAt[:0]
		for ci := 0; ci < c.cin; ci++ {
			for ky := 0; ky < c.k; ky++ {
				for kx := 0; kx < c.k; kx++ {
					c.colAt = append(c.colAt, ci*c.plane()+ky*c.pitch()+kx)
				}
			}
		}
	}
}

func (c *conv2d) footprint(n int, needDx bool, fp *footprinter) {
	B := int64(n)
	cin, h, w, cout := int64(c.cin), int64(c.h), int64(c.w), int64(c.cout)
	kr, hw := int64(c.colRows()), int64(c.colWidth())
	fp.buffer(memsize.Mul(B, int64(c.outFloats()))) // y
	fp.buffer(kr * hw)                              // col
	if needDx {
		fp.buffer(memsize.Mul(B, cin, h, w)) // dx
		fp.buffer(kr * hw)                   // dcol
	}
	c.dpFootprint(n, fp)
	if c.useWinograd() {
		c.winoFootprint(needDx, fp)
		return
	}
	fp.buffer(cout*kr + cout) // one gradient chunk (partial)
	if c.wide() {             // one worker's wide buffers (newScratch)
		plane := cin*int64(c.plane()) + int64(c.k) - 1
		fp.buffer(plane)
		if !c.outWide() {
			fp.buffer(cout * int64(c.ho*c.pitch()))
			fp.buffer(cout * int64(c.ho*c.pitch()))
		}
		if needDx {
			fp.buffer(plane)
		}
	}
	// Forward y = W·col; the weight gradient dy·colᵀ, summed transposed
	// in the column buffer where the kernel gathers rows (transposedGrad);
	// the input gradient's columns Wᵀ·dy.
	dW := gemm.Product{M: cout, N: kr, K: hw, LDB: hw, TransB: true, ReadsC: true, Gathered: c.wide()}
	if c.wide() && gemm.KernelGathersRows() && cout <= hw {
		dW = gemm.Product{M: kr, N: cout, K: hw, LDB: hw, TransB: true, ReadsC: true, GatheredA: true}
	}
	fp.product(gemm.Product{M: cout, N: hw, K: kr, LDB: hw, PackedA: true}, dW)
	if needDx {
		fp.product(gemm.Product{M: kr, N: hw, K: cout, LDB: hw, PackedA: true})
	}
}

// colWidth is the number of columns of a sample's column matrix: the output
// positions, or in the wide layout one row pitch per output row.
func (c *conv2d) colWidth() int {
	if c.wide() {
		return c.ho * c.pitch()
	}
	return c.ho * c.wo
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
	c.x, c.run, c.n = x, p, n
	y := c.y[:n*c.outFloats()]
	if c.pool != nil {
		// The pool after runs on each sample (or Winograd group) as soon
		// as its output is written, while it is in cache, and then skips
		// its own pass (maxPool2d.pooled).
		c.pool.x = y
	}
	if c.wino != nil {
		c.winoForward(p, n)
	} else {
		c.ensureWorkers(p.eng.Threads())
		p.eng.PackA(&c.wPacked, false, c.cout, c.colRows(), c.wt, c.colRows())
		// Samples are independent: the engine's workers take a run of
		// them each, with their own column buffer and one-thread engine.
		// One call per sample split across threads would hand over a
		// 64×196×800 product per sample; a run of samples per thread
		// does not.
		p.eng.Each(n, c.forwardFn)
	}
	if c.pool != nil {
		c.pool.pooled = true
	}
	return y
}

// poolOutputs runs the 2×2 max-pool after the convolution on samples
// [lo, hi), whose outputs are written (forward).
func (c *conv2d) poolOutputs(w, lo, hi int) {
	if c.pool != nil {
		c.pool.forward2x2Range(w, lo, hi)
	}
}

// forwardRange computes the outputs of samples [lo, hi) on worker w.
func (c *conv2d) forwardRange(w, lo, hi int) {
	hw, in, out := c.ho*c.wo, c.cin*c.h*c.w, c.outFloats()
	eng, sc := c.run.eng.Serial(w), &c.scratch[w]
	for i := lo; i < hi; i++ {
		yi := c.y[i*out : (i+1)*out]
		if c.wide() {
			c.forwardWide(eng, sc, c.x[i*in:(i+1)*in], yi)
		} else {
			c.im2col(c.x[i*in:(i+1)*in], sc.col)
			eng.SgemmPacked(&c.wPacked, false, hw, 1, sc.col, hw, 0, yi, hw)
			for co, b := range c.b {
				row := yi[co*hw : (co+1)*hw]
				vec.AddConst(row, row, b)
			}
		}
		c.poolOutputs(w, i, i+1)
	}
}

// gradChunks is how many parts a batch's weight and bias gradients are
// summed in: g ← ((g + P₀) + P₁) + …, where P_k sums chunk k's samples in
// order. The chunks depend on the batch size only, never on the thread
// count, so neither does the rounding; up to gradChunks threads share the
// backward pass.
const gradChunks = 4

func (c *conv2d) backward(p *pass, dy []float32, n int) []float32 {
	c.dy, c.run, c.n = dy, p, n
	if c.wino != nil {
		c.dxn = nil
		if c.needDx {
			c.dxn = c.dx[:n*c.cin*c.h*c.w]
		}
		c.winoBackward(p, n)
		return c.dxn
	}
	c.ensureWorkers(p.eng.Threads())
	c.pooled = c.takesPooledGrad(p)
	if c.needDx {
		c.dxn = c.dx[:n*c.cin*c.h*c.w]
		clear(c.dxn)
		p.eng.PackA(&c.wtPacked, true, c.colRows(), c.cout, c.wt, c.colRows())
	}
	chunks := min(gradChunks, n)
	nw := c.cout*c.colRows() + c.cout
	if min(p.eng.Workers(), chunks) <= 1 {
		// One worker: one partial buffer, added in as each chunk ends.
		part := c.partial[0]
		for k := 0; k < chunks; k++ {
			c.backwardChunk(0, k, part)
			c.addPartial(k, part)
		}
	} else {
		for len(c.partial) < chunks {
			c.partial = append(c.partial, make([]float32, nw))
		}
		p.eng.Each(chunks, c.backwardFn)
		for k := 0; k < chunks; k++ {
			c.addPartial(k, c.partial[k])
		}
	}
	return c.dxn
}

// backwardRange runs the gradient chunks [lo, hi) on worker w, chunk k into
// partial[k].
func (c *conv2d) backwardRange(w, lo, hi int) {
	for k := lo; k < hi; k++ {
		c.backwardChunk(w, k, c.partial[k])
	}
}

// backwardChunk writes chunk k's weight and bias gradients (dW then db)
// into part and, when needed, its samples' input gradients into dx.
func (c *conv2d) backwardChunk(w, k int, part []float32) {
	if c.pooled {
		c.pooledBackwardChunk(w, k, part)
		return
	}
	hw, in, out, kr := c.ho*c.wo, c.cin*c.h*c.w, c.outFloats(), c.colRows()
	chunks := min(gradChunks, c.n)
	lo, hi := k*c.n/chunks, (k+1)*c.n/chunks
	eng, sc := c.run.eng.Serial(w), &c.scratch[w]
	gw, gb := part[:c.cout*kr], part[c.cout*kr:]
	gwT := c.transposedGrad(eng, sc)
	for i := lo; i < hi; i++ {
		// The first sample of the chunk overwrites the partial sums.
		beta := float32(1)
		if i == lo {
			beta = 0
		}
		dyi := c.dy[i*out : (i+1)*out]
		var dxi []float32
		if c.needDx {
			dxi = c.dxn[i*in : (i+1)*in]
		}
		if c.wide() {
			c.backwardWide(eng, sc, c.x[i*in:(i+1)*in], dyi, dxi, beta, gw, gwT, gb)
			continue
		}
		c.im2col(c.x[i*in:(i+1)*in], sc.col)
		// dW += dy_i · col_iᵀ ; db += row sums of dy_i.
		eng.Sgemm(false, true, c.cout, kr, hw, 1, dyi, hw, sc.col, hw, beta, gw, kr)
		rowSums(gb, dyi, hw, beta)
		if c.needDx {
			// dcol = Wᵀ · dy_i, then scatter back to the input layout.
			eng.SgemmPacked(&c.wtPacked, false, hw, 1, dyi, hw, 0, sc.dcol, hw)
			c.col2im(sc.dcol, dxi)
		}
	}
	if gwT != nil {
		for r := range kr {
			for co, v := range gwT[r*c.cout : (r+1)*c.cout] {
				gw[co*kr+r] = v
			}
		}
	}
}

// transposedGrad returns where a chunk's weight gradient is summed
// transposed (Cin·k² × Cout), or nil where it is summed as it is. The
// wide layout's per-sample product, with a kernel that reads gathered
// rows, computes the transposed gradient (gemm.SgemmNTGathered transposes
// it in and out on every call); summed that way over the chunk, it is
// transposed once. The column buffer, unused on that path, holds it when
// large enough. Same bits: the transposes only move floats.
func (c *conv2d) transposedGrad(eng *gemm.Engine, sc *convScratch) []float32 {
	n := c.colRows() * c.cout
	if !c.wide() || !eng.GathersRows() || len(sc.col) < n || c.noTransposedGrad {
		return nil
	}
	return sc.col[:n]
}

// rowSums sets (beta 0) or adds to (beta 1) gb[r] the sum of row r of the
// rows×width matrix m, each row summed left to right. Eight rows are summed
// at once: independent addition chains instead of one keep the adders busy
// (one chain waits out each addition's latency), and every row's sum is
// still the same sequence of additions. A last group of fewer than eight
// rows (all of them for LeNet-5's first convolution, 6 channels) runs in
// the same loop, its missing rows standing in for its last one, their sums
// dropped: one chain per row there cost 4 % of that model's step. The
// rows are resliced to m0's length so that the loop carries no bounds
// checks.
func rowSums(gb, m []float32, width int, beta float32) {
	for r := 0; r < len(gb); r += 8 {
		last := min(r+8, len(gb)) - 1
		row := func(q int) []float32 { return m[min(r+q, last)*width:][:width] }
		m0 := row(0)
		m1, m2, m3 := row(1)[:len(m0)], row(2)[:len(m0)], row(3)[:len(m0)]
		m4, m5, m6 := row(4)[:len(m0)], row(5)[:len(m0)], row(6)[:len(m0)]
		m7 := row(7)[:len(m0)]
		var s0, s1, s2, s3, s4, s5, s6, s7 float32
		for j, v := range m0 {
			s0 += v
			s1 += m1[j]
			s2 += m2[j]
			s3 += m3[j]
			s4 += m4[j]
			s5 += m5[j]
			s6 += m6[j]
			s7 += m7[j]
		}
		sums := [8]float32{s0, s1, s2, s3, s4, s5, s6, s7}
		for i, s := range sums[:last-r+1] {
			if beta == 0 {
				gb[r+i] = s
			} else {
				gb[r+i] += s
			}
		}
	}
}

// addPartial adds chunk k's gradients to the layer's; the first chunk's
// overwrite them (see gradOverwriter).
func (c *conv2d) addPartial(k int, part []float32) {
	nw := c.cout * c.colRows()
	if k == 0 {
		copy(c.gw, part[:nw])
		copy(c.gb, part[nw:])
		return
	}
	vec.AddTo(c.gw, part[:nw])
	vec.AddTo(c.gb, part[nw:])
}

func (c *conv2d) overwritesGrads() {}

// ensureWorkers gives each of up to threads workers its column buffers
// (worker 0's are the layer's own col and dcol, which the per-sample
// gradients also use). It runs on the caller's goroutine, before Each, so
// workers never resize shared slices.
func (c *conv2d) ensureWorkers(threads int) {
	if len(c.scratch) == 0 {
		c.scratch = append(c.scratch, c.newScratch(c.col, c.dcol))
	}
	c.scratch[0].col, c.scratch[0].dcol = c.col, c.dcol
	for len(c.scratch) < threads {
		cols := c.colRows() * c.colWidth()
		var dcol []float32
		if c.needDx {
			dcol = make([]float32, cols)
		}
		c.scratch = append(c.scratch, c.newScratch(make([]float32, cols), dcol))
	}
}
