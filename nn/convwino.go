package nn

import (
	"github.com/trellis-fl/trellis/internal/gemm"
	"github.com/trellis-fl/trellis/vec"
)

// Winograd's minimal filtering F(4×4, 5×5) for stride-1 5×5 convolutions
// with enough channels (Lavin and Gray, "Fast Algorithms for Convolutional
// Neural Networks", CVPR 2016, §4). The output is cut into 4×4 tiles; tile
// t reads an 8×8 patch d_t of the padded input (tiles overlap by 4), and
//
//	Y_t = Aᵀ [ Σ_c U_c ⊙ V_c,t ] A,   U = G g Gᵀ,   V = Bᵀ d B,
//
// with the interpolation points 0, ±1, ±2, ±1/2 and ∞. For each of the 64
// positions ξ of the 8×8 transformed tile, the channel sums are one matrix
// product, M[ξ] (Cout × T) = U[ξ] (Cout × Cin) · V[ξ] (Cin × T): 64 products
// of Cout·Cin·T multiply-adds where direct convolution takes 25·Cout·Cin·16·T,
// 6.25× fewer (4.8× for the FEMNIST CNN's 14×14 output, whose 16 tiles
// cover 16×16). Backward is the exact gradient of that computation:
//
//	dM_t = A dY_t Aᵀ,  dU[ξ] = Σ_t dM[ξ] V[ξ]ᵀ,  dg = Gᵀ dU G,
//	dV[ξ] = U[ξ]ᵀ dM[ξ],  dd_t = B dV_t Bᵀ  (added onto the overlapping patches),
//
// so both backward products shrink by the same factor. The three matrices,
// derived for these points by solving Σ_j Aᵀ[i][j]·G[j][k]·Bᵀ[j][l] =
// [l = i + k] exactly (Bᵀ depends on the points only: it is the input
// transform of F(6×6, 3×3), which uses the same eight, as in NNPACK):
//
//	Aᵀ = | 1  1  1  1  1   1    1   0 |   G = |   1      0      0      0     0   |
//	     | 0  1 -1  2 -2  1/2 -1/2  0 |       | -2/9   -2/9   -2/9   -2/9  -2/9  |
//	     | 0  1  1  4  4  1/4  1/4  0 |       | -2/9    2/9   -2/9    2/9  -2/9  |
//	     | 0  1 -1  8 -8  1/8 -1/8  1 |       |  1/90   1/45   2/45   4/45  8/45  |
//	                                          |  1/90  -1/45   2/45  -4/45  8/45  |
//	                                          | 32/45  16/45   8/45   4/45  2/45  |
//	                                          | 32/45 -16/45   8/45  -4/45  2/45  |
//	                                          |   0      0      0      0     1   |
//
//	Bᵀ = | 1   0   -21/4    0    21/4    0   -1  0 |
//	     | 0   1     1   -17/4  -17/4    1    1  0 |
//	     | 0  -1     1    17/4  -17/4   -1    1  0 |
//	     | 0  1/2   1/4   -5/2   -5/4    2    1  0 |
//	     | 0 -1/2   1/4    5/2   -5/4   -2    1  0 |
//	     | 0   2     4    -5/2    -5    1/2   1  0 |
//	     | 0  -2     4     5/2    -5   -1/2   1  0 |
//	     | 0  -1     0    21/4     0  -21/4   0  1 |
//
// The larger tile trades a little precision for speed: the transforms
// scale values by up to a few hundred before the products, so the errors
// against a float64 reference (tested, largest over the test's shapes) are
// 4.1e-6 of the output's scale, 6.1e-6 of the weight gradient's and 6.2e-6
// of the input gradient's, 10–30× the direct float32 path's; F(2×2, 5×5)
// (6×6 tiles, 2.78× fewer multiply-adds), which this replaced, had 2.8e-6,
// 6.0e-6 and 3.6e-6: far below the noise of SGD on a batch. Results stay
// bit-identical for every thread count: samples are transformed in fixed
// groups of winoLanes, workers take whole groups, and the weight gradient
// is summed in the batch's fixed gradient chunks like the direct path's.
//
// Only layers where it pays take this path (useWinograd): both channel
// counts of at least winoMinChannels. A convolution with one input channel
// (the first layer of every CNN here) would turn its 25-long products into
// 64 products with one term each.

// winoM, winoR and winoAlpha: 4×4 output tiles of a 5×5 filter from 8×8
// input patches.
const (
	winoM     = 4
	winoR     = 5
	winoAlpha = winoM + winoR - 1
	winoXi    = winoAlpha * winoAlpha
)

// winoMinChannels is the fewest input and output channels for which the
// Winograd path is taken: with fewer, the 64 products are too small for the
// transforms' cost to be repaid (LeNet-5's 6→16 layer stays direct).
const winoMinChannels = 16

// winoLanes is how many samples are transformed and multiplied together:
// lane l of every transform vector is sample l of the group, so each
// AVX2 transform handles one tile of one channel for 8 samples with no
// gather or shuffle (the padded inputs are stored sample-innermost). A
// FEMNIST-sized group is 16 tiles of 8 samples, a product of 64×32×128
// per ξ. A group short of samples (the batch's or a gradient chunk's
// last) computes its empty lanes on zeros and drops them.
const winoLanes = 8

// winoBlock is how many tiles of a group go through the transforms and
// products at once: the transformed inputs, products and their gradients
// of a block (64 × (Cin or Cout) × winoBlock·8 floats) then stay in the L2
// cache, where a whole FEMNIST group's (7.2 MB) did not.
const winoBlock = 8

// useWinograd reports whether the layer computes with F(4×4, 5×5).
func (c *conv2d) useWinograd() bool {
	return !c.forceIm2col && !c.forceDirect && convUsesWinograd(c.cin, c.cout, c.k, c.s)
}

// convUsesWinograd reports whether a convolution with these channels,
// kernel size and stride computes with Winograd's F(4×4, 5×5) (stride 1,
// 5×5, at least winoMinChannels channels each way).
func convUsesWinograd(cin, cout, k, stride int) bool {
	return stride == 1 && k == winoR && cin >= winoMinChannels && cout >= winoMinChannels
}

// winograd holds the layer's Winograd state: the transformed filters
// (U[ξ] is Cout × Cin at u[ξ·Cout·Cin:]), packed for both products, the
// summed transformed weight gradient, and per-worker buffers.
type winograd struct {
	tilesY, tilesX int // output tiles per sample: ⌈Ho/4⌉ × ⌈Wo/4⌉
	hp, wp         int // padded input patch area: 4·tiles + 4 each way
	u              []float32
	uPacked        [winoXi]gemm.PackedA
	utPacked       [winoXi]gemm.PackedA
	du             []float32   // Σ over chunks of dU, 64 planes of Cout × Cin (uPlane apart)
	partial        [][]float32 // chunk k's dU (64 planes) then db (Cout)
	work           []winoScratch
}

// winoScratch is one worker's buffers for one group of samples, all with
// the sample innermost: the padded inputs and their gradient
// ([Cin][Hp][Wp][8]), the transformed inputs V and their gradient dV
// ([64][Cin][tiles][8]), and the products M, reused for dM
// ([64][Cout][tiles][8]); in V, dV and M the 64 positions are winoPlane apart.
type winoScratch struct {
	xpad, dxpad []float32
	v, dv, m    []float32
	// lanes holds the outputs, or the output gradients, with the sample
	// innermost: [Cout][4·tilesY][4·tilesX][8].
	lanes []float32
	rows  [winoLanes][]float32 // one row per sample, for toLanes and fromLanes
	// plane is one channel's plane with the samples interleaved, for
	// planeToLanes and planeFromLanes.
	plane []float32
}

func (c *conv2d) allocWinograd() {
	if c.wino == nil {
		c.wino = &winograd{}
	}
	wn := c.wino
	wn.tilesY, wn.tilesX = (c.ho+winoM-1)/winoM, (c.wo+winoM-1)/winoM
	wn.hp, wn.wp = winoM*wn.tilesY+winoR-1, winoM*wn.tilesX+winoR-1
	wn.u = grow(wn.u, winoXi*c.uPlane())
	wn.du = grow(wn.du, winoXi*c.uPlane())
	if len(wn.partial) == 0 {
		wn.partial = [][]float32{make([]float32, winoXi*c.uPlane()+c.cout)}
	}
	wn.work = wn.work[:0]
	c.ensureWinoWorkers(1)
}

// winoFootprint counts what allocWinograd allocates (one matrix thread)
// and the products of a training step: per group of samples, for each of
// the winoXi positions, forward M = U·V (Cout × cols, inner Cin), the
// weight gradient dU = dM·Vᵀ (read back: beta 1) and the input gradient
// dV = Uᵀ·dM, U and Uᵀ packed once per pass.
func (c *conv2d) winoFootprint(needDx bool, fp *footprinter) {
	ty, tx := (c.ho+winoM-1)/winoM, (c.wo+winoM-1)/winoM
	hp, wp := winoM*ty+winoR-1, winoM*tx+winoR-1
	cols := min(winoBlock, ty*tx) * winoLanes
	u := int64(winoXi * c.uPlane())
	fp.buffer(u)                 // u
	fp.buffer(u)                 // du
	fp.buffer(u + int64(c.cout)) // one gradient chunk
	xpad := int64(c.cin * hp * wp * winoLanes)
	v := int64(winoXi * winoPlane(c.cin, cols))
	fp.buffer(xpad)
	fp.buffer(v)
	fp.buffer(int64(winoXi * winoPlane(c.cout, cols)))             // m
	fp.buffer(int64(c.cout * winoM * winoM * ty * tx * winoLanes)) // lanes
	fp.buffer(int64(winoLanes * max(c.h*c.w, c.ho*c.wo)))          // plane
	if needDx {
		fp.buffer(xpad)
		fp.buffer(v)
	}
	cin, cout, n := int64(c.cin), int64(c.cout), int64(cols)
	for range winoXi {
		fp.product(gemm.Product{M: cout, N: n, K: cin, LDB: n, PackedA: true},
			gemm.Product{M: cout, N: cin, K: n, LDB: n, TransB: true, ReadsC: true})
	}
	if needDx {
		for range winoXi {
			fp.product(gemm.Product{M: cin, N: n, K: cout, LDB: n, PackedA: true})
		}
	}
}

// winoPlane is the distance between consecutive positions ξ of V, dV or
// M (rows × t floats, rows = Cin or Cout): one matrix of t columns, plus a
// cache line. Without the pad the FEMNIST CNN's planes are 8 and 16 KiB
// apart, so the 64 rows a transform writes for one tile fall into the same
// L1 cache set and evict one another (L1 has 12 ways).
func winoPlane(rows, t int) int { return rows*t + winoPlanePad }

// winoUPlane is the distance between consecutive positions ξ of U, dU and
// a chunk's dU (cout × cin floats, plus a cache line): the filter
// transforms write (and read) one float in each of the 64 planes per
// (output, input) channel pair, and planes a multiple of 4 KiB apart (the
// FEMNIST CNN's are 8 KiB) fall into one L1 set; 2 ms of a batch-32 step
// went to the misses.
func winoUPlane(cout, cin int) int { return cout*cin + winoPlanePad }

func (c *conv2d) uPlane() int { return winoUPlane(c.cout, c.cin) }

// winoPlanePad is a cache line of floats.
const winoPlanePad = 16

// cols is the most columns of a product: a block's tiles times the lanes.
func (wn *winograd) cols() int { return min(winoBlock, wn.tilesY*wn.tilesX) * winoLanes }

func (c *conv2d) ensureWinoWorkers(threads int) {
	wn := c.wino
	for len(wn.work) < threads {
		sc := winoScratch{
			xpad:  make([]float32, c.cin*wn.hp*wn.wp*winoLanes),
			v:     make([]float32, winoXi*winoPlane(c.cin, wn.cols())),
			m:     make([]float32, winoXi*winoPlane(c.cout, wn.cols())),
			lanes: make([]float32, c.cout*winoM*winoM*wn.tilesY*wn.tilesX*winoLanes),
			plane: make([]float32, winoLanes*max(c.h*c.w, c.ho*c.wo)),
		}
		if c.needDx {
			sc.dxpad = make([]float32, len(sc.xpad))
			sc.dv = make([]float32, len(sc.v))
		}
		wn.work = append(wn.work, sc)
	}
}

func (wn *winograd) bufferFloats() int {
	n := len(wn.u) + len(wn.du)
	for _, p := range wn.partial {
		n += len(p)
	}
	for _, sc := range wn.work {
		n += len(sc.xpad) + len(sc.dxpad) + len(sc.v) + len(sc.dv) + len(sc.m) + len(sc.lanes) + len(sc.plane)
	}
	return n
}

// winoForward transforms the filters, packs them and computes the batch's
// outputs, a group of samples at a time.
func (c *conv2d) winoForward(p *pass, n int) {
	wn := c.wino
	c.ensureWinoWorkers(p.eng.Threads())
	cc := c.uPlane()
	// Each output channel's filters independently: split across the
	// threads (they were 3 % of a 2-thread step done serially).
	p.eng.Each(c.cout, c.winoFilterFn)
	for xi := 0; xi < winoXi; xi++ {
		p.eng.PackA(&wn.uPacked[xi], false, c.cout, c.cin, wn.u[xi*cc:], c.cin)
	}
	p.eng.Each((n+winoLanes-1)/winoLanes, c.winoForwardFn)
}

// winoForwardRange computes the outputs of groups [lo, hi) on worker w.
func (c *conv2d) winoForwardRange(w, lo, hi int) {
	wn, sc := c.wino, &c.wino.work[w]
	eng := c.run.eng.Serial(w)
	tiles := wn.tilesY * wn.tilesX
	for g := lo; g < hi; g++ {
		s0, s1 := g*winoLanes, min((g+1)*winoLanes, c.n)
		c.winoPad(sc, s0, s1)
		for b0 := 0; b0 < tiles; b0 += winoBlock {
			b1 := min(b0+winoBlock, tiles)
			t := (b1 - b0) * winoLanes
			vs, ms := winoPlane(c.cin, t), winoPlane(c.cout, t)
			c.winoInputTiles(sc, b0, b1)
			for xi := 0; xi < winoXi; xi++ {
				eng.SgemmPacked(&wn.uPacked[xi], false, t, 1, sc.v[xi*vs:], t, 0, sc.m[xi*ms:], t)
			}
			c.winoOutputTiles(sc, b0, b1)
		}
		c.winoOutputsFromLanes(sc, s0, s1)
		c.poolOutputs(w, s0, s1)
	}
}

// winoPad copies samples [s0, s1) into xpad, sample innermost; the padding
// stays zero (only the interior is ever written), and so do the lanes of a
// group short of samples.
func (c *conv2d) winoPad(sc *winoScratch, s0, s1 int) {
	wn := c.wino
	const L = winoLanes
	in := c.cin * c.h * c.w
	if s1-s0 == L {
		for ci := 0; ci < c.cin; ci++ {
			planeToLanes(sc.xpad[((ci*wn.hp+c.pd)*wn.wp+c.pd)*L:], wn.wp*L, c.x[s0*in+ci*c.h*c.w:], in, c.h, c.w, sc.plane)
		}
		return
	}
	clear(sc.xpad)
	for ci := 0; ci < c.cin; ci++ {
		for y := 0; y < c.h; y++ {
			rows := sc.sampleRows(c.x, s0, s1, in, (ci*c.h+y)*c.w, c.w)
			toLanes(sc.xpad[((ci*wn.hp+y+c.pd)*wn.wp+c.pd)*L:], rows, c.w)
		}
	}
	clear(sc.rows[:])
}

// sampleRows points rows[s − s0] at buf[s·per + at : … + n] for the
// samples [s0, s1) of a group (buf holds per floats a sample) and clears
// the rest, the group's empty lanes.
func (sc *winoScratch) sampleRows(buf []float32, s0, s1, per, at, n int) *[winoLanes][]float32 {
	for s := s0; s < s1; s++ {
		sc.rows[s-s0] = buf[s*per+at : s*per+at+n]
	}
	clear(sc.rows[s1-s0:])
	return &sc.rows
}

// winoInputTiles writes the transformed patches of tiles [b0, b1) into v,
// V[ξ][c][tile − b0][lane].
func (c *conv2d) winoInputTiles(sc *winoScratch, b0, b1 int) {
	wn := c.wino
	const L = winoLanes
	t := (b1 - b0) * L
	stride := winoPlane(c.cin, t)
	pitch := wn.wp * L
	at := func(ci, tile int) int {
		ty, tx := tile/wn.tilesX, tile%wn.tilesX
		return ((ci*wn.hp+winoM*ty)*wn.wp + winoM*tx) * L
	}
	for ci := 0; ci < c.cin; ci++ {
		for tile := b0; tile < b1; tile += 2 {
			dst := sc.v[ci*t+(tile-b0)*L:]
			if tile+1 == b1 {
				winoInput8(dst, stride, sc.xpad[at(ci, tile):], pitch)
				break
			}
			winoInputPair(dst, stride, sc.xpad, at(ci, tile), at(ci, tile+1), pitch)
		}
	}
}

// winoOutputTiles turns the products M of tiles [b0, b1) into outputs
// plus bias, in the lanes buffer.
func (c *conv2d) winoOutputTiles(sc *winoScratch, b0, b1 int) {
	wn := c.wino
	const L = winoLanes
	t := (b1 - b0) * L
	stride := winoPlane(c.cout, t)
	pitch := winoM * wn.tilesX * L
	for o := 0; o < c.cout; o++ {
		plane := sc.lanes[o*winoM*wn.tilesY*pitch:]
		for tile := b0; tile < b1; tile += 2 {
			m := sc.m[o*t+(tile-b0)*L:]
			if tile+1 == b1 {
				winoOutput8(plane[wn.tileAt(tile, pitch):], pitch, m, stride, c.b[o])
				break
			}
			winoOutputPair(plane, wn.tileAt(tile, pitch), wn.tileAt(tile+1, pitch), pitch, m, stride, c.b[o])
		}
	}
}

// tileAt is where a tile's outputs (or output gradients) start in one
// channel's plane of the lanes buffer, rows pitch floats apart.
func (wn *winograd) tileAt(tile, pitch int) int {
	ty, tx := tile/wn.tilesX, tile%wn.tilesX
	return winoM*ty*pitch + winoM*tx*winoLanes
}

// winoOutputsFromLanes copies the outputs of samples [s0, s1) from the
// lanes buffer to y; those past Ho or Wo (an odd size's last tile) are
// dropped.
func (c *conv2d) winoOutputsFromLanes(sc *winoScratch, s0, s1 int) {
	wn := c.wino
	pitch := winoM * wn.tilesX * winoLanes
	hw := c.ho * c.wo
	if s1-s0 == winoLanes {
		for o := 0; o < c.cout; o++ {
			planeFromLanes(c.y[s0*c.cout*hw+o*hw:], c.cout*hw, sc.lanes[o*winoM*wn.tilesY*pitch:], pitch, c.ho, c.wo, sc.plane)
		}
		return
	}
	for o := 0; o < c.cout; o++ {
		for y := 0; y < c.ho; y++ {
			rows := sc.sampleRows(c.y, s0, s1, c.cout*hw, o*hw+y*c.wo, c.wo)
			fromLanes(rows, sc.lanes[(o*winoM*wn.tilesY+y)*pitch:], c.wo)
		}
	}
	clear(sc.rows[:])
}

// winoBackward computes the weight and bias gradients (summed in the fixed
// chunks of gradChunks) and, when needed, the input gradient.
func (c *conv2d) winoBackward(p *pass, n int) {
	wn := c.wino
	c.ensureWinoWorkers(p.eng.Threads())
	cc := c.uPlane()
	if c.needDx {
		for xi := 0; xi < winoXi; xi++ {
			p.eng.PackA(&wn.utPacked[xi], true, c.cin, c.cout, wn.u[xi*cc:], c.cin)
		}
	}
	chunks := min(gradChunks, n)
	if min(p.eng.Workers(), chunks) <= 1 {
		part := wn.partial[0]
		for k := 0; k < chunks; k++ {
			c.winoBackwardChunk(0, k, part)
			c.winoAddPartial(k, part)
		}
	} else {
		for len(wn.partial) < chunks {
			wn.partial = append(wn.partial, make([]float32, winoXi*cc+c.cout))
		}
		p.eng.Each(chunks, c.winoBackwardFn)
		for k := 0; k < chunks; k++ {
			c.winoAddPartial(k, wn.partial[k])
		}
	}
	// dg = Gᵀ dU G for every (output, input) channel pair.
	p.eng.Each(c.cout, c.winoFilterGradFn)
}

// winoFilters writes U of output channels [lo, hi).
func (c *conv2d) winoFilters(_, lo, hi int) {
	kr, cc := c.colRows(), c.uPlane()
	for o := lo; o < hi; o++ {
		ci := 0
		if winoVector() {
			// Eight input channels at a time, one per lane: their filters
			// interleaved, element k of lane l at blk[8k + l].
			var blk [winoR * winoR * winoLanes]float32
			for ; ci+winoLanes <= c.cin; ci += winoLanes {
				for l := 0; l < winoLanes; l++ {
					for k, v := range c.wt[o*kr+(ci+l)*winoR*winoR:][:winoR*winoR] {
						blk[k*winoLanes+l] = v
					}
				}
				winoFilterVec(c.wino.u[o*c.cin+ci:], cc, blk[:])
			}
		}
		for ; ci < c.cin; ci++ {
			filterTransform(c.wino.u[o*c.cin+ci:], cc, c.wt[o*kr+ci*winoR*winoR:])
		}
	}
}

// winoFilterGrads writes the weight gradients of output channels [lo, hi)
// from the summed dU.
func (c *conv2d) winoFilterGrads(_, lo, hi int) {
	kr, cc := c.colRows(), c.uPlane()
	for o := lo; o < hi; o++ {
		ci := 0
		if winoVector() {
			var blk [winoR * winoR * winoLanes]float32
			for ; ci+winoLanes <= c.cin; ci += winoLanes {
				winoFilterGradVec(blk[:], c.wino.du[o*c.cin+ci:], cc)
				for l := 0; l < winoLanes; l++ {
					g := c.gw[o*kr+(ci+l)*winoR*winoR:][:winoR*winoR]
					for k := range g {
						g[k] = blk[k*winoLanes+l]
					}
				}
			}
		}
		for ; ci < c.cin; ci++ {
			filterGradTransform(c.gw[o*kr+ci*winoR*winoR:], c.wino.du[o*c.cin+ci:], cc)
		}
	}
}

func (c *conv2d) winoBackwardRange(w, lo, hi int) {
	for k := lo; k < hi; k++ {
		c.winoBackwardChunk(w, k, c.wino.partial[k])
	}
}

// winoBackwardChunk writes chunk k's dU and bias gradient into part and its
// samples' input gradients into dx, a group of samples at a time (groups
// start at the chunk's first sample) and a block of tiles at a time.
func (c *conv2d) winoBackwardChunk(w, k int, part []float32) {
	wn, sc := c.wino, &c.wino.work[w]
	eng := c.run.eng.Serial(w)
	cc := c.uPlane()
	du, gb := part[:winoXi*cc], part[winoXi*cc:]
	chunks := min(gradChunks, c.n)
	lo, hi := k*c.n/chunks, (k+1)*c.n/chunks
	out := c.cout * c.ho * c.wo
	tiles := wn.tilesY * wn.tilesX
	for s0 := lo; s0 < hi; s0 += winoLanes {
		s1 := min(s0+winoLanes, hi)
		c.winoPad(sc, s0, s1)
		c.winoGradsToLanes(sc, s0, s1)
		if c.needDx {
			clear(sc.dxpad)
		}
		for b0 := 0; b0 < tiles; b0 += winoBlock {
			b1 := min(b0+winoBlock, tiles)
			t := (b1 - b0) * winoLanes
			vs, ms := winoPlane(c.cin, t), winoPlane(c.cout, t)
			// The chunk's first block overwrites the partial sums.
			beta := float32(1)
			if s0 == lo && b0 == 0 {
				beta = 0
			}
			c.winoInputTiles(sc, b0, b1)
			c.winoOutputGradTiles(sc, b0, b1)
			for xi := 0; xi < winoXi; xi++ {
				eng.Sgemm(false, true, c.cout, c.cin, t, 1, sc.m[xi*ms:], t, sc.v[xi*vs:], t, beta, du[xi*cc:], c.cin)
			}
			if c.needDx {
				for xi := 0; xi < winoXi; xi++ {
					eng.SgemmPacked(&wn.utPacked[xi], false, t, 1, sc.m[xi*ms:], t, 0, sc.dv[xi*vs:], t)
				}
				c.winoInputGradTiles(sc, b0, b1)
			}
		}
		if c.needDx {
			c.winoInputGradsFromPad(sc, s0, s1)
		}
		for s := s0; s < s1; s++ {
			b := float32(1)
			if s == lo {
				b = 0
			}
			rowSums(gb, c.dy[s*out:(s+1)*out], c.ho*c.wo, b)
		}
	}
}

// winoGradsToLanes copies the output gradients of samples [s0, s1) into
// the lanes buffer; empty lanes, and an odd size's outputs past Ho or Wo,
// have zero gradient.
func (c *conv2d) winoGradsToLanes(sc *winoScratch, s0, s1 int) {
	wn := c.wino
	pitch := winoM * wn.tilesX * winoLanes
	if s1-s0 < winoLanes || c.ho%winoM != 0 || c.wo%winoM != 0 {
		clear(sc.lanes) // what the copy below leaves is zero
	}
	hw := c.ho * c.wo
	if s1-s0 == winoLanes {
		for o := 0; o < c.cout; o++ {
			planeToLanes(sc.lanes[o*winoM*wn.tilesY*pitch:], pitch, c.dy[s0*c.cout*hw+o*hw:], c.cout*hw, c.ho, c.wo, sc.plane)
		}
		return
	}
	for o := 0; o < c.cout; o++ {
		for y := 0; y < c.ho; y++ {
			rows := sc.sampleRows(c.dy, s0, s1, c.cout*hw, o*hw+y*c.wo, c.wo)
			toLanes(sc.lanes[(o*winoM*wn.tilesY+y)*pitch:], rows, c.wo)
		}
	}
	clear(sc.rows[:])
}

// winoOutputGradTiles writes dM[ξ][o][tile − b0][lane] = (A dY Aᵀ)[ξ] of
// tiles [b0, b1) into m.
func (c *conv2d) winoOutputGradTiles(sc *winoScratch, b0, b1 int) {
	wn := c.wino
	const L = winoLanes
	t := (b1 - b0) * L
	stride := winoPlane(c.cout, t)
	pitch := winoM * wn.tilesX * L
	for o := 0; o < c.cout; o++ {
		plane := sc.lanes[o*winoM*wn.tilesY*pitch:]
		for tile := b0; tile < b1; tile += 2 {
			dm := sc.m[o*t+(tile-b0)*L:]
			if tile+1 == b1 {
				winoOutputGrad8(dm, stride, plane[wn.tileAt(tile, pitch):], pitch)
				break
			}
			winoOutputGradPair(dm, stride, plane, wn.tileAt(tile, pitch), wn.tileAt(tile+1, pitch), pitch)
		}
	}
}

// winoInputGradTiles adds each tile's B dV Bᵀ, for tiles [b0, b1), onto its
// 8×8 patch of the padded input gradient (in a fixed order, so the sums
// round the same way every time).
func (c *conv2d) winoInputGradTiles(sc *winoScratch, b0, b1 int) {
	wn := c.wino
	const L = winoLanes
	t := (b1 - b0) * L
	stride := winoPlane(c.cin, t)
	pitch := wn.wp * L
	at := func(ci, tile int) []float32 {
		ty, tx := tile/wn.tilesX, tile%wn.tilesX
		return sc.dxpad[((ci*wn.hp+winoM*ty)*wn.wp+winoM*tx)*L:]
	}
	for ci := 0; ci < c.cin; ci++ {
		for tile := b0; tile < b1; tile++ {
			winoInputGrad8(at(ci, tile), pitch, sc.dv[ci*t+(tile-b0)*L:], stride)
		}
	}
}

// winoInputGradsFromPad copies the interior of the padded input gradient,
// the input gradients of samples [s0, s1), to dx.
func (c *conv2d) winoInputGradsFromPad(sc *winoScratch, s0, s1 int) {
	wn := c.wino
	in := c.cin * c.h * c.w
	if s1-s0 == winoLanes {
		for ci := 0; ci < c.cin; ci++ {
			planeFromLanes(c.dxn[s0*in+ci*c.h*c.w:], in, sc.dxpad[((ci*wn.hp+c.pd)*wn.wp+c.pd)*winoLanes:], wn.wp*winoLanes, c.h, c.w, sc.plane)
		}
		return
	}
	for ci := 0; ci < c.cin; ci++ {
		for y := 0; y < c.h; y++ {
			rows := sc.sampleRows(c.dxn, s0, s1, in, (ci*c.h+y)*c.w, c.w)
			fromLanes(rows, sc.dxpad[((ci*wn.hp+y+c.pd)*wn.wp+c.pd)*winoLanes:], c.w)
		}
	}
	clear(sc.rows[:])
}

// winoAddPartial adds chunk k's dU and bias gradient to the layer's sums;
// the first chunk's overwrite them.
func (c *conv2d) winoAddPartial(k int, part []float32) {
	n := winoXi * c.uPlane()
	if k == 0 {
		copy(c.wino.du, part[:n])
		copy(c.gb, part[n:])
		return
	}
	vec.AddTo(c.wino.du, part[:n])
	vec.AddTo(c.gb, part[n:])
}
