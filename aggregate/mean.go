package aggregate

// Mean is the arithmetic mean Σ x_i / n (docs/methods/toolbox.md, "mean"). It
// tolerates no faulty input: one vector can move it anywhere.
//
// Each coordinate is summed in float64 in input order, which the driver
// fixes as sender-id order, so the result is deterministic; a permutation of
// the inputs may change the last bit.
type Mean struct {
	// Threads is the number of goroutines the coordinates are split across
	// (0 or 1: the caller's only). The output does not depend on it.
	Threads int

	s screen
	n int // inputs of the last successful call, 0 if none
	j meanJob
}

// meanBlock is how many coordinates Mean accumulates at once: their float64
// sums stay in L1 while every input streams through.
const meanBlock = 1024

// Name implements Rule.
func (*Mean) Name() string { return "mean" }

// Aggregate implements Rule.
func (m *Mean) Aggregate(dst []float32, xs [][]float32) error {
	m.n = 0
	xs, _, err := m.s.in("mean", dst, xs, m.Threads)
	if err != nil {
		return err
	}
	m.j.run(dst, xs, m.Threads)
	m.n = len(xs)
	m.s.done()
	return nil
}

// meanJob averages vectors coordinate by coordinate, split across workers;
// each coordinate is summed in float64 in the order of the vectors given,
// so the output does not depend on the thread count.
type meanJob struct {
	xs  [][]float32
	dst []float32
	sp  span
}

// run sets dst to the mean of xs with up to threads workers.
func (j *meanJob) run(dst []float32, xs [][]float32, threads int) {
	j.xs, j.dst, j.sp = xs, dst, split(len(dst), minGroup, 0)
	parallel(workers(threads), j.sp.count, j)
	j.xs, j.dst = nil, nil
}

// do implements task: the coordinates of group g.
func (j *meanJob) do(_, g int) {
	lo, hi := j.sp.bounds(g)
	meanRange(j.dst[lo:hi], j.xs, lo)
}

// meanRange sets dst[k] to the mean of xs[i][j0+k] over i, summed in
// float64 in input order. Four inputs are added per pass over the block,
// in order, so the accumulator is loaded and stored a quarter as often and
// the sums are the same as one input at a time.
func meanRange(dst []float32, xs [][]float32, j0 int) {
	var acc [meanBlock]float64
	n := float64(len(xs))
	for k0 := 0; k0 < len(dst); k0 += meanBlock {
		b := min(meanBlock, len(dst)-k0)
		a := acc[:b]
		j := j0 + k0
		for k, v := range xs[0][j : j+b] {
			a[k] = float64(v)
		}
		rest := xs[1:]
		for ; len(rest) >= 4; rest = rest[4:] {
			x0, x1, x2, x3 := rest[0][j:j+b], rest[1][j:j+b], rest[2][j:j+b], rest[3][j:j+b]
			for k := range a {
				s := a[k] + float64(x0[k])
				s += float64(x1[k])
				s += float64(x2[k])
				a[k] = s + float64(x3[k])
			}
		}
		for _, x := range rest {
			for k, v := range x[j : j+b] {
				a[k] += float64(v)
			}
		}
		out := dst[k0 : k0+b]
		for k, s := range a {
			out[k] = float32(s / n)
		}
	}
}

// Weights implements Selector: 1/n for each kept input.
func (m *Mean) Weights() []float64 {
	if m.n == 0 {
		return nil
	}
	w := make([]float64, m.n)
	for i := range w {
		w[i] = 1 / float64(m.n)
	}
	return m.s.expand(w)
}

// Dropped implements Dropper.
func (m *Mean) Dropped() int { return m.s.Dropped() }
