package main

import (
	"github.com/trellis-fl/trellis/aggregate"
)

// subsetMean is the averaging of the iterative algorithms of refs. [194]
// and [223] of the survey (§4.5.1), as we read those papers (the survey
// does not give their update): the mean, over every n − f of the n inputs
// C, of a point of C's own safe area (aggregate.SafeArea with the same f
// on C). When exactly f inputs are faulty, one C holds the honest
// inputs alone and is the same at every honest node, which contracts the
// honest vectors. It needs n − f >= max(3f + 1, (d+1)f + 1), that is
// n > (d + 2)f for d >= 2, and costs C(n, f) safe areas.
type subsetMean struct {
	f  int
	sa aggregate.SafeArea
}

func (*subsetMean) Name() string { return "safe_area mean over subsets" }

func (m *subsetMean) Aggregate(dst []float32, xs [][]float32) error {
	n, d := len(xs), len(dst)
	m.sa.F = m.f
	sum := make([]float64, d)
	p := make([]float64, d)
	count := 0
	drop := make([]int, m.f)
	for i := range drop {
		drop[i] = i
	}
	for {
		var c [][]float64
		t := 0
		for j, x := range xs {
			if t < m.f && drop[t] == j {
				t++
				continue
			}
			c = append(c, to64(x))
		}
		if err := m.sa.Point(p, c); err != nil {
			return err
		}
		for k := range sum {
			sum[k] += p[k]
		}
		count++
		i := m.f - 1
		for i >= 0 && drop[i] == n-m.f+i {
			i--
		}
		if i < 0 {
			break
		}
		drop[i]++
		for j := i + 1; j < m.f; j++ {
			drop[j] = drop[j-1] + 1
		}
	}
	for k := range dst {
		dst[k] = float32(sum[k] / float64(count))
	}
	return nil
}
