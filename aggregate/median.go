package aggregate

// Median is the coordinate-wise median, CWMed of docs/methods/toolbox.md: per
// coordinate the middle value, or the mean of the two middle values for an
// even n. It needs no f; fewer than half of the inputs cannot move it
// beyond the range of the others.
//
// Each coordinate's middle values are found by selection over keys (see
// key), so the output is the same for any order of the inputs. Weights gives
// the middle input the whole coordinate (odd n) or each of the two middle
// inputs half of it (even n), ties between equal values going to the lower
// input index.
//
// A Median holds scratch: use it through a pointer, from one goroutine at a
// time.
type Median struct {
	// Threads is the number of goroutines the coordinates are split across
	// (0 or 1: the caller's only). The output does not depend on it.
	Threads int

	s screen
	c columns
}

// Name implements Rule.
func (*Median) Name() string { return "median" }

// Aggregate implements Rule.
func (m *Median) Aggregate(dst []float32, xs [][]float32) error {
	xs, _, err := m.s.in("median", dst, xs, m.Threads)
	if err != nil {
		return err
	}
	m.run(dst, xs)
	m.s.done()
	return nil
}

// run is the median of screened inputs, for the rules that start from it.
func (m *Median) run(dst []float32, xs [][]float32) {
	m.c.run(dst, xs, m.Threads, medianKernel{})
}

// medianKernel selects a coordinate's middle value(s).
type medianKernel struct{}

func (medianKernel) coord(c *coords, keys []uint64, _ int) float32 {
	n := len(keys)
	lo, hi, _ := selectRank(keys, c.a, c.b, (n-1)/2)
	if n%2 == 1 {
		c.counts[keyInput(lo)] += 2
		return keyValue(lo)
	}
	c.counts[keyInput(lo)]++
	c.counts[keyInput(hi)]++
	return float32((float64(keyValue(lo)) + float64(keyValue(hi))) / 2)
}

// Weights implements Selector.
func (m *Median) Weights() []float64 { return m.s.expand(m.c.weights()) }

// Dropped implements Dropper.
func (m *Median) Dropped() int { return m.s.Dropped() }
