package aggregate

import (
	"github.com/trellis-fl/trellis/internal/memsize"
	"math"
)

// around is the engine of the iterative rules (geometric median, centered
// clipping): it measures the inputs from a fixed base point z0, y_i = x_i −
// z0, and holds the current point as z0 + u with u in float64. Each step
// replaces u by an affine combination a0·u + Σ c_k·y_k in one pass over the
// inputs that also yields what the next step needs: the inner products
// y_i·u, ||u||², the change ||u_new − u||² and ||z0 + u||². So a step costs
// one pass where the textbook form costs two (distances, then the weighted
// sum), and distances follow from ||y_i − u||² = ||y_i||² − 2·y_i·u +
// ||u||² with float64 terms of the size of the spread around z0, not of the
// vectors' norms.
//
// Every sum over inputs runs in the order the caller gives (a function of
// the inputs' contents, for permutation invariance), and sums over
// coordinates keep one partial per group of a fixed span, added in group
// order, so results are bit-identical for every thread count.
type around struct {
	xs   [][]float32
	z0   []float32
	u    []float64 // the current point minus z0
	sq   []float64 // ||y_i||²
	dots []float64 // y_i·u
	uu   float64   // ||u||²
	du   float64   // ||u − u_previous||², after a step
	zz   float64   // ||z0 + u||², after a step (||z0||² after start)
	sp   span

	// Per-group partials: n inner products and three scalars per group.
	pdots []float64
	pscal []float64

	// The current step, while it runs.
	init      bool // the first pass: ||y_i||² and ||z0||²
	a0, csum  float64
	order     []int
	coef      []float64
	wantDots  bool
	blockBufs [][]float64 // per worker: 2 × aroundBlock float64
}

// aroundBlock is the coordinates a step handles at once: their float64
// accumulators and base point stay in L1 while the inputs stream through,
// and the inputs' slices of them (n·2 KiB) stay in L2 for the inner
// products.
const aroundBlock = 512

// start sets up inputs xs (finite, length d) around z0 with u = 0, and
// computes ||y_i||² and ||z0||².
func (r *around) start(xs [][]float32, z0 []float32, threads int) {
	n, d, t := len(xs), len(z0), workers(threads)
	r.xs, r.z0 = xs, z0
	if cap(r.u) < d {
		r.u = make([]float64, d)
	}
	r.u = r.u[:d]
	clear(r.u)
	r.sq, r.dots = growFloats(r.sq, n), growFloats(r.dots, n)
	clear(r.dots)
	r.sp = split(d, minGroup, 0)
	r.pdots = growFloats(r.pdots, r.sp.count*n)
	r.pscal = growFloats(r.pscal, r.sp.count*3)
	for len(r.blockBufs) < t {
		r.blockBufs = append(r.blockBufs, make([]float64, 2*aroundBlock))
	}
	r.init = true
	parallel(t, r.sp.count, r)
	r.init = false
	r.reduce(r.sq)
	r.uu, r.du = 0, 0
}

// step sets u to a0·u + Σ_k coef[k]·y_k over k in order (in that order),
// and, when wantDots, the inner products y_i·u for the new u.
func (r *around) step(a0 float64, order []int, coef []float64, wantDots bool, threads int) {
	r.a0, r.order, r.coef, r.wantDots = a0, order, coef, wantDots
	r.csum = 0
	for _, k := range order {
		r.csum += coef[k]
	}
	parallel(workers(threads), r.sp.count, r)
	r.reduce(r.dots)
	r.order, r.coef = nil, nil
}

// dist2 returns ||y_i − u||², clamped at 0.
func (r *around) dist2(i int) float64 {
	return max(0, r.sq[i]-2*r.dots[i]+r.uu)
}

// finish writes z0 + u to dst and drops the references to the inputs.
func (r *around) finish(dst []float32) {
	for j, v := range r.u {
		dst[j] = float32(float64(r.z0[j]) + v)
	}
	r.xs, r.z0 = nil, nil
}

// reduce adds the groups' partials in group order: the per-input ones into
// perInput, the scalars into uu, du and zz (or, on the first pass, zz only).
func (r *around) reduce(perInput []float64) {
	n := len(r.xs)
	clear(perInput)
	var s [3]float64
	for g := range r.sp.count {
		for i, v := range r.pdots[g*n : (g+1)*n] {
			perInput[i] += v
		}
		for q := range s {
			s[q] += r.pscal[g*3+q]
		}
	}
	r.uu, r.du, r.zz = s[0], s[1], s[2]
}

// do implements task: group g of the current pass on worker w.
func (r *around) do(w, g int) {
	lo, hi := r.sp.bounds(g)
	n := len(r.xs)
	pd := r.pdots[g*n : (g+1)*n]
	clear(pd)
	var uu, du, zz float64
	buf := r.blockBufs[w]
	for j0 := lo; j0 < hi; j0 += aroundBlock {
		b := min(aroundBlock, hi-j0)
		z := buf[:b]
		for k, v := range r.z0[j0 : j0+b] {
			z[k] = float64(v)
		}
		if r.init {
			for _, v := range z {
				zz += v * v
			}
			for i, x := range r.xs {
				pd[i] += sqDiff(x[j0:j0+b], z)
			}
			continue
		}
		acc := buf[aroundBlock : aroundBlock+b]
		u := r.u[j0 : j0+b]
		for k, v := range u {
			acc[k] = r.a0 * v
		}
		// Four inputs per pass over acc, added in order: the same sums as
		// one at a time, with a quarter of the loads and stores of acc.
		order := r.order
		for len(order) >= 4 {
			i0, i1, i2, i3 := order[0], order[1], order[2], order[3]
			c0, c1, c2, c3 := r.coef[i0], r.coef[i1], r.coef[i2], r.coef[i3]
			x0, x1, x2, x3 := r.xs[i0][j0:j0+b], r.xs[i1][j0:j0+b], r.xs[i2][j0:j0+b], r.xs[i3][j0:j0+b]
			for k := range acc {
				s := acc[k] + c0*float64(x0[k])
				s += c1 * float64(x1[k])
				s += c2 * float64(x2[k])
				acc[k] = s + c3*float64(x3[k])
			}
			order = order[4:]
		}
		for _, i := range order {
			c := r.coef[i]
			for k, v := range r.xs[i][j0 : j0+b] {
				acc[k] += c * float64(v)
			}
		}
		for k, v := range acc {
			v -= r.csum * z[k]
			e := v - u[k]
			du += e * e
			uu += v * v
			t := z[k] + v
			zz += t * t
			u[k] = v
		}
		if r.wantDots {
			for i, x := range r.xs {
				pd[i] += dotDiff(x[j0:j0+b], z, u)
			}
		}
	}
	r.pscal[g*3], r.pscal[g*3+1], r.pscal[g*3+2] = uu, du, zz
}

// sqDiff returns Σ (x_k − z_k)², in four partial sums (a fixed order, so
// the result depends on the block alone).
func sqDiff(x []float32, z []float64) float64 {
	z = z[:len(x)]
	var s0, s1, s2, s3 float64
	k := 0
	for ; k+4 <= len(x); k += 4 {
		e0, e1 := float64(x[k])-z[k], float64(x[k+1])-z[k+1]
		e2, e3 := float64(x[k+2])-z[k+2], float64(x[k+3])-z[k+3]
		s0 += e0 * e0
		s1 += e1 * e1
		s2 += e2 * e2
		s3 += e3 * e3
	}
	for ; k < len(x); k++ {
		e := float64(x[k]) - z[k]
		s0 += e * e
	}
	return (s0 + s1) + (s2 + s3)
}

// dotDiff returns Σ (x_k − z_k)·u_k, in four partial sums.
func dotDiff(x []float32, z, u []float64) float64 {
	z, u = z[:len(x)], u[:len(x)]
	var s0, s1, s2, s3 float64
	k := 0
	for ; k+4 <= len(x); k += 4 {
		s0 += (float64(x[k]) - z[k]) * u[k]
		s1 += (float64(x[k+1]) - z[k+1]) * u[k+1]
		s2 += (float64(x[k+2]) - z[k+2]) * u[k+2]
		s3 += (float64(x[k+3]) - z[k+3]) * u[k+3]
	}
	for ; k < len(x); k++ {
		s0 += (float64(x[k]) - z[k]) * u[k]
	}
	return (s0 + s1) + (s2 + s3)
}

// aroundScratch is an around's scratch for n inputs of dim floats (start,
// one worker): the float64 point u, the inputs' norms and inner products,
// the groups' partials and a block buffer.
func aroundScratch(n, dim int64) int64 {
	groups := int64(split(int(min(dim, math.MaxInt32)), minGroup, 0).count)
	return memsize.Add(memsize.Alloc(memsize.Mul(8, dim)), 2*memsize.Alloc(8*n), memsize.Alloc(memsize.Mul(8, groups, n)),
		memsize.Alloc(memsize.Mul(8, groups, 3)), memsize.Alloc(16*aroundBlock))
}
