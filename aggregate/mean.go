package aggregate

// Mean is the arithmetic mean Σ x_i / n (spec/robust-rules.md, "mean"). It
// tolerates no faulty input: one vector can move it anywhere.
//
// Each coordinate is summed in float64 in input order, which the driver
// fixes as sender-id order, so the result is deterministic; a permutation of
// the inputs may change the last bit.
type Mean struct {
	n int // inputs of the last successful call, 0 if none
}

// meanBlock is how many coordinates Mean accumulates at once: their float64
// sums stay in L1 while every input streams through.
const meanBlock = 1024

// Name implements Rule.
func (*Mean) Name() string { return "mean" }

// Aggregate implements Rule.
func (m *Mean) Aggregate(dst []float32, xs [][]float32) error {
	m.n = 0
	d, err := check("mean", dst, xs)
	if err != nil {
		return err
	}
	var acc [meanBlock]float64
	n := float64(len(xs))
	for j0 := 0; j0 < d; j0 += meanBlock {
		b := min(meanBlock, d-j0)
		a := acc[:b]
		for k, v := range xs[0][j0 : j0+b] {
			a[k] = float64(v)
		}
		for _, x := range xs[1:] {
			for k, v := range x[j0 : j0+b] {
				a[k] += float64(v)
			}
		}
		out := dst[j0 : j0+b]
		for k, s := range a {
			out[k] = float32(s / n)
		}
	}
	m.n = len(xs)
	return nil
}

// Weights implements Selector: 1/n for each input.
func (m *Mean) Weights() []float64 {
	if m.n == 0 {
		return nil
	}
	w := make([]float64, m.n)
	for i := range w {
		w[i] = 1 / float64(m.n)
	}
	return w
}
