package aggregate

// Median is the coordinate-wise median, CWMed of spec/robust-rules.md: per
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
	c coords
}

// Name implements Rule.
func (*Median) Name() string { return "median" }

// Aggregate implements Rule.
func (m *Median) Aggregate(dst []float32, xs [][]float32) error {
	m.c.n = 0
	d, err := check("median", dst, xs)
	if err != nil {
		return err
	}
	n := len(xs)
	blk := m.c.start(n)
	counts := m.c.counts
	mid := (n - 1) / 2 // rank of the (lower) middle value
	for j0 := 0; j0 < d; j0 += blk {
		b := min(blk, d-j0)
		m.c.gather(xs, j0, b)
		for k := range b {
			lo, hi, _ := selectRank(m.c.keys[k*n:(k+1)*n], m.c.a, m.c.b, mid)
			if n%2 == 1 {
				dst[j0+k] = keyValue(lo)
				counts[keyInput(lo)] += 2
				continue
			}
			dst[j0+k] = float32((float64(keyValue(lo)) + float64(keyValue(hi))) / 2)
			counts[keyInput(lo)]++
			counts[keyInput(hi)]++
		}
	}
	m.c.done(n)
	return nil
}

// Weights implements Selector.
func (m *Median) Weights() []float64 { return m.c.weights() }
