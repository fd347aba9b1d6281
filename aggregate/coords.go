package aggregate

import "github.com/trellis-fl/trellis/internal/memsize"

// coords is one worker's scratch for a coordinate-wise rule: the keys of a
// block of coordinates, gathered from all inputs at once so each input is
// read sequentially, and per-input use counts for Weights.
type coords struct {
	keys   []uint64  // block·n keys, coordinate-major
	a, b   []uint64  // n keys each, selection scratch
	terms  []float64 // n values, summation scratch
	counts []int64   // per input, in units the rule chooses
	own    int64     // the same for a reference vector that is not an input (MSR)
}

// blockKeys bounds the keys gathered per block (32 KiB of uint64), so a
// block's keys stay in L1 while they are ranked.
const blockKeys = 4096

// start prepares the scratch for n inputs.
func (c *coords) start(n int) {
	b := max(1, blockKeys/n)
	if cap(c.keys) < b*n {
		c.keys = make([]uint64, b*n)
	}
	c.keys = c.keys[:b*n]
	if cap(c.a) < n {
		c.a, c.b = make([]uint64, n), make([]uint64, n)
	}
	c.a, c.b = c.a[:n], c.b[:n]
	if cap(c.terms) < n {
		c.terms = make([]float64, n)
	}
	c.terms = c.terms[:n]
	if cap(c.counts) < n {
		c.counts = make([]int64, n)
	}
	c.counts = c.counts[:n]
	clear(c.counts)
	c.own = 0
}

// gather fills the keys of coordinates j0 .. j0+b-1: coordinate j0+k's n
// keys are c.keys[k·n : (k+1)·n], in input order.
func (c *coords) gather(xs [][]float32, j0, b int) {
	n := len(xs)
	keys := c.keys[:b*n]
	for i, x := range xs {
		p := i
		for _, v := range x[j0 : j0+b] {
			keys[p] = key(v, i)
			p += n
		}
	}
}

// kernel is the per-coordinate part of a coordinate-wise rule.
type kernel interface {
	// coord returns coordinate j's aggregate from its n keys (input order;
	// it may not modify them), crediting the inputs it used in c.counts.
	coord(c *coords, keys []uint64, j int) float32
}

// columns runs a kernel over every coordinate, the coordinates split
// across workers (see span). Coordinates are independent and counts are
// integers, so the output and the weights are the same for every thread
// count.
type columns struct {
	ws     []coords
	counts []int64 // per input, summed over workers, of the last successful run
	own    int64   // the reference's count, summed likewise
	n      int     // inputs of the last successful run, 0 if none

	// The current run, while it lasts.
	xs  [][]float32
	dst []float32
	k   kernel
	sp  span
}

// run sets dst[j] = k.coord(..., j) for every coordinate j of the n inputs
// xs, with up to threads workers.
func (c *columns) run(dst []float32, xs [][]float32, threads int, k kernel) {
	c.n = 0
	n, t := len(xs), workers(threads)
	for len(c.ws) < t {
		c.ws = append(c.ws, coords{})
	}
	for w := range t {
		c.ws[w].start(n)
	}
	c.xs, c.dst, c.k, c.sp = xs, dst, k, split(len(dst), minGroup, 0)
	parallel(t, c.sp.count, c)
	c.xs, c.dst, c.k = nil, nil, nil
	if cap(c.counts) < n {
		c.counts = make([]int64, n)
	}
	c.counts = c.counts[:n]
	clear(c.counts)
	c.own = 0
	for w := range t {
		c.own += c.ws[w].own
		for i, v := range c.ws[w].counts {
			c.counts[i] += v
		}
	}
	c.n = n
}

// do implements task: the coordinates of group g on worker w.
func (c *columns) do(w, g int) {
	lo, hi := c.sp.bounds(g)
	cs := &c.ws[w]
	n := len(c.xs)
	blk := len(cs.keys) / n
	for j0 := lo; j0 < hi; j0 += blk {
		b := min(blk, hi-j0)
		cs.gather(c.xs, j0, b)
		for k := range b {
			c.dst[j0+k] = c.k.coord(cs, cs.keys[k*n:(k+1)*n], j0+k)
		}
	}
}

// weights returns the counts of the last run normalized by the total of all
// counts, the reference's included (so they sum to 1 minus its share), or
// nil before a successful run. Counts are integers, so the totals are
// exact; with no coordinates at all every input gets 1/n.
func (c *columns) weights() []float64 {
	if c.n == 0 {
		return nil
	}
	return c.weightsInto(make([]float64, c.n))
}

// weightsInto is weights written to w (len n of the last run).
func (c *columns) weightsInto(w []float64) []float64 {
	total := c.own
	for _, k := range c.counts[:c.n] {
		total += k
	}
	for i, k := range c.counts[:c.n] {
		if total == 0 {
			w[i] = 1 / float64(c.n)
		} else {
			w[i] = float64(k) / float64(total)
		}
	}
	return w
}

// columnsScratch is a coordinate-wise rule's scratch (median,
// trimmed_mean): one block of keys, and per input its key halves, terms
// and counts (coords.start).
func columnsScratch(n, _ int64) (int64, string) {
	return memsize.Alloc(8*4096) + 4*memsize.Alloc(8*n), ""
}
