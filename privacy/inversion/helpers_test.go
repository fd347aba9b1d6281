package inversion

import (
	"math"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/trellis-fl/trellis/data"
	"github.com/trellis-fl/trellis/nn"
)

// mnist is the embedded MNIST with the first 200 training images' values
// kept, loaded once for the package's tests.
var mnist = sync.OnceValues(func() (data.TrainTest, error) {
	return data.MNISTShard(func(d *data.Dataset) ([]int32, error) { return d.All()[:200], nil })
})

func loadMNIST(t *testing.T) data.TrainTest {
	t.Helper()
	tt, err := mnist()
	if err != nil {
		t.Fatal(err)
	}
	return tt
}

// batch is training samples [lo, lo+b) as nn wants them.
func batch(d *data.Dataset, lo, b int) ([]float32, []int) {
	D := d.RowLen()
	x := make([]float32, b*D)
	y := make([]int, b)
	for i := range b {
		d.CopyRow(x[i*D:(i+1)*D], lo+i)
		y[i] = d.Y[lo+i]
	}
	return x, y
}

func wide(v []float32) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = float64(x)
	}
	return out
}

func build(t *testing.T, spec nn.Spec, seed uint64, b int) (*nn.Model, *Net) {
	t.Helper()
	m, err := nn.Build(spec, seed, nn.Options{Batch: b})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Close)
	net, err := NetOf(m)
	if err != nil {
		t.Fatal(err)
	}
	return m, net
}

var (
	logreg = nn.Spec{Kind: "logreg", Input: []int{1, 28, 28}, Classes: 10}
	mlp    = nn.Spec{Kind: "mlp", Input: []int{1, 28, 28}, Hidden: []int{256, 128}, Classes: 10}
)

// loss is the mean cross-entropy of the batch under net, from the
// forward pass alone (for finite differences).
func loss(n *Net, x []float64, y []int) float64 {
	t := n.newTrace()
	D := n.Input()
	var s float64
	for i, c := range y {
		n.run(t, x[i*D:(i+1)*D], c)
		s -= math.Log(t.h[n.Layers()][c])
	}
	return s / float64(len(y))
}

func randomInputs(r *rand.Rand, k int) []float64 {
	x := make([]float64, k)
	for i := range x {
		x[i] = r.Float64()*2 - 0.5
	}
	return x
}
