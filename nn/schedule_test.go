package nn

import (
	"errors"
	"math/rand/v2"
	"testing"
)

// The model passes the round to its evidential head, which anneals its KL
// weight as λ_t = 0.1 · min(1, t/(R/2)) (the DMTT paper): 0, 0.025, 0.05,
// 0.075, then 0.1 for R = 8.
func TestSetRoundAnnealsTheEvidentialHead(t *testing.T) {
	m, err := Build(Spec{Kind: "logreg", Input: []int{2}, Classes: 3, Head: "evidential"}, 1, Options{Batch: 2})
	if err != nil {
		t.Fatal(err)
	}
	h := m.Head().(*Evidential)
	for r, want := range []float64{0, 0.025, 0.05, 0.075, 0.1, 0.1, 0.1, 0.1} {
		m.SetRound(r, 8)
		if d := h.Lambda - want; d > 1e-15 || d < -1e-15 {
			t.Errorf("round %d: λ = %v, want %v", r, h.Lambda, want)
		}
	}
	soft, _ := Build(Spec{Kind: "logreg", Input: []int{2}, Classes: 3}, 1, Options{Batch: 2})
	soft.SetRound(3, 8) // no round-scheduled part: nothing to do, no panic
}

// memBatches is an in-memory Batches for tests.
type memBatches struct {
	x   []float32
	y   []int
	dim int
	pos int
}

func (d *memBatches) Len() int { return len(d.y) }
func (d *memBatches) Reset()   { d.pos = 0 }
func (d *memBatches) Next(x []float32, y []int) int {
	n := min(len(y), len(d.y)-d.pos)
	copy(x, d.x[d.pos*d.dim:(d.pos+n)*d.dim])
	copy(y, d.y[d.pos:d.pos+n])
	d.pos += n
	return n
}

// A whole warm Train call with a Stop channel to watch allocates nothing,
// and a closed Stop ends it between batches with the steps taken.
func TestTrainWithStopDoesNotAllocate(t *testing.T) {
	m := mustBuild(t, Spec{Kind: "mlp", Input: []int{16}, Hidden: []int{8}, Classes: 3}, 1, Options{Batch: 4})
	d := &memBatches{x: make([]float32, 40*16), y: make([]int, 40), dim: 16}
	for i := range d.y {
		d.y[i] = i % 3
		d.x[i*16+i%16] = 1
	}
	opt, _ := NewOptimizer(OptimizerSpec{LR: 0.1}, m.NumParams())
	rng := rand.New(rand.NewPCG(1, 1))
	stop := make(chan struct{})
	cfg := TrainConfig{Epochs: 2, Stop: stop}
	if _, err := m.Train(d, opt, cfg, rng); err != nil {
		t.Fatal(err)
	}
	if allocs := testing.AllocsPerRun(10, func() {
		if _, err := m.Train(d, opt, cfg, rng); err != nil {
			t.Fatal(err)
		}
	}); allocs != 0 {
		t.Errorf("%v allocations per warm Train call", allocs)
	}
	close(stop)
	res, err := m.Train(d, opt, cfg, rng)
	if !errors.Is(err, ErrStopped) || res.Steps != 0 {
		t.Fatalf("stopped training: %d steps, %v", res.Steps, err)
	}
}
