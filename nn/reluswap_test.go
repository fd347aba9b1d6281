package nn

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestReLUPoolSwapIsExact: the CNNs built with each max-pool before its
// ReLU (what Build does) give the same loss and parameter gradient, bit for
// bit, as the paper's ReLU-then-pool order, and Build really swapped them.
// Half of every image is zero, so whole pooling windows tie at a channel's
// bias, of either sign: the case where the two orders pick different
// winners (all-zero ReLU outputs against the largest negative value) and
// must still agree, since ReLU's gradient stops both.
func TestReLUPoolSwapIsExact(t *testing.T) {
	specs := []Spec{
		{Kind: "femnist_cnn", Input: []int{1, 28, 28}, Classes: 7},
		{Kind: "lenet5", Input: []int{1, 28, 28}, Classes: 10},
		{Kind: "lenet5", Input: []int{3, 32, 32}, Classes: 10},
	}
	for i, s := range specs {
		const n = 5
		swapped, err := Build(s, uint64(i)+1, Options{Batch: n})
		if err != nil {
			t.Fatal(err)
		}
		paper, err := s.stackWith(true)
		if err != nil {
			t.Fatal(err)
		}
		// The same backward as the paper's order: the dense one, not the
		// first convolution's from the pooled gradient (TestPooledConvGrad).
		for _, l := range swapped.layers {
			if c, ok := l.(*conv2d); ok {
				c.densePool = true
			}
		}
		head, _ := s.head()
		ref := assemble(s, paper, head, Options{Batch: n})
		ref.Init(uint64(i) + 1)
		if d := swapped.Describe(); !strings.Contains(d, "maxpool2d k2 s2 → relu") || strings.Contains(d, "relu → maxpool") {
			t.Fatalf("%s: Build did not swap: %s", s.Kind, d)
		}
		if d := ref.Describe(); !strings.Contains(d, "relu → maxpool2d k2 s2") {
			t.Fatalf("%s: keepOrder swapped: %s", s.Kind, d)
		}

		r := rand.New(rand.NewPCG(uint64(i), 99))
		x, y := make([]float32, n*swapped.InputSize()), make([]int, n)
		for k := range x {
			if k%swapped.InputSize() < swapped.InputSize()/2 {
				x[k] = float32(r.NormFloat64())
			}
		}
		for k := range y {
			y[k] = r.IntN(s.Classes)
		}
		la, err := swapped.Gradient(x, y, n, rand.New(rand.NewPCG(1, 1)))
		if err != nil {
			t.Fatal(err)
		}
		lb, err := ref.Gradient(x, y, n, rand.New(rand.NewPCG(1, 1)))
		if err != nil {
			t.Fatal(err)
		}
		if la != lb {
			t.Errorf("%s: loss %v swapped, %v in the paper's order", s.Kind, la, lb)
		}
		ga, gb := swapped.Grads(), ref.Grads()
		for k := range ga {
			if math.Float32bits(ga[k]) != math.Float32bits(gb[k]) {
				t.Fatalf("%s: gradient %d is %v swapped, %v in the paper's order", s.Kind, k, ga[k], gb[k])
			}
		}
	}
}
