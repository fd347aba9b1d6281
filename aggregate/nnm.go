package aggregate

import (
	"fmt"
	"github.com/trellis-fl/trellis/internal/memsize"
)

// NNM is nearest-neighbor mixing (Allouah et al., AISTATS 2023; "NNM (f)" in
// docs/methods/toolbox.md): each input x_i is replaced by the mean of its
// n − F nearest inputs, itself included. It needs n > F.
//
// Distances come from a Gram-matrix product (see gram). Each input's
// neighbors are ranked by distance (ties by contents, then index) and
// averaged in float64 in that order, so the outputs are bit-identical
// under any permutation of the inputs (permuted alike) and for every thread
// count. Credit gives each neighbor of output i a share 1/(n − F) of its
// weight.
type NNM struct {
	// F is the number of faulty inputs to tolerate.
	F int
	// Threads is the number of goroutines the work is split across.
	Threads int

	g     gram
	rk    ranker
	order []int
	nb    []int       // n × (n − F) neighbor indices
	mem   [][]float32 // the same, as vectors
	buf   []float32
	out   [][]float32
	n     int
	// The current Apply, while it runs.
	sp span
}

// Name implements Pre.
func (*NNM) Name() string { return "nnm" }

// Apply implements Pre.
func (m *NNM) Apply(xs [][]float32) ([][]float32, error) {
	m.n = 0
	if m.F < 0 {
		return nil, fmt.Errorf("nnm: f = %d, allowed range [0, ∞)", m.F)
	}
	d, err := sameLength("nnm", xs)
	if err != nil {
		return nil, err
	}
	n, k := len(xs), len(xs)-m.F
	if k < 1 {
		return nil, fmt.Errorf("nnm: %w: n = %d inputs with f = %d, need n > f", ErrTooFewInputs, n, m.F)
	}
	m.g.run(xs, m.Threads)
	m.rk.reset(n)
	m.order = growInts(m.order, n)
	m.nb = growInts(m.nb, n*k)
	m.mem = m.mem[:0]
	for i := range n {
		for j := range m.order {
			m.order[j] = j
		}
		m.rk.sort(m.order, xs, m.g.d2[i*n:(i+1)*n])
		copy(m.nb[i*k:(i+1)*k], m.order[:k])
		for _, j := range m.order[:k] {
			m.mem = append(m.mem, xs[j])
		}
	}
	vectors(&m.buf, &m.out, n, d)
	m.sp = split(d, minGroup, 0)
	parallel(workers(m.Threads), m.sp.count, m)
	clear(m.mem)
	m.n = n
	return m.out, nil
}

// do implements task: the coordinates of group g of every output.
func (m *NNM) do(_, g int) {
	lo, hi := m.sp.bounds(g)
	k := len(m.mem) / len(m.out)
	for i, o := range m.out {
		meanRange(o[lo:hi], m.mem[i*k:(i+1)*k], lo)
	}
}

// Credit implements Pre.
func (m *NNM) Credit(w []float64) []float64 {
	if m.n == 0 || len(w) != m.n {
		return nil
	}
	k := m.n - m.F
	in := make([]float64, m.n)
	for i, wi := range w {
		for _, j := range m.nb[i*k : (i+1)*k] {
			in[j] += wi / float64(k)
		}
	}
	return in
}

// nnmScratch is the Gram matrix's and the n mixed vectors.
func nnmScratch(n, dim int64) (int64, string) {
	g, _ := gramScratch(n, dim)
	return g + memsize.Alloc(memsize.Mul(4, n, dim)), fmt.Sprintf("%d mixed vectors", n)
}
