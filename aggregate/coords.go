package aggregate

// coords is the scratch of a coordinate-wise rule: the keys of a block of
// coordinates, gathered from all inputs at once so each input is read
// sequentially, and per-input use counts for Weights.
type coords struct {
	keys   []uint64  // block·n keys, coordinate-major
	a, b   []uint64  // n keys each, selection scratch
	terms  []float64 // n values, summation scratch
	counts []int64   // per input, in units the rule chooses
	n      int       // inputs of the last successful call, 0 if none
}

// blockKeys bounds the keys gathered per block (32 KiB of uint64), so a
// block's keys stay in L1 while they are ranked.
const blockKeys = 4096

// start prepares the scratch for n inputs and returns the block length in
// coordinates.
func (c *coords) start(n int) int {
	c.n = 0
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
	return b
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

// done records a successful call over n inputs.
func (c *coords) done(n int) { c.n = n }

// weights returns the counts normalized to sum to 1, or nil before a
// successful call. Counts are integers, so the totals are exact; with no
// coordinates at all every input gets 1/n.
func (c *coords) weights() []float64 {
	if c.n == 0 {
		return nil
	}
	var total int64
	for _, k := range c.counts[:c.n] {
		total += k
	}
	w := make([]float64, c.n)
	for i, k := range c.counts[:c.n] {
		if total == 0 {
			w[i] = 1 / float64(c.n)
		} else {
			w[i] = float64(k) / float64(total)
		}
	}
	return w
}
