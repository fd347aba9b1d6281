package node

import (
	"math"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/trellis-fl/trellis/nn"
)

// TestEvalMemo: a model bit-identical to one evaluated through the memo
// gets that result without evaluating; a one-ulp change of a parameter or
// of the batch-norm state is another model; goroutines meeting the same
// model evaluate it once; a full memo starts over and stays correct.
func TestEvalMemo(t *testing.T) {
	spec := nn.Spec{Kind: "mlp", Input: []int{4}, Hidden: []int{8}, BatchNorm: true, Classes: 3}
	build := func() *nn.Model {
		m, err := nn.Build(spec, 1, nn.Options{Batch: 4})
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	var calls atomic.Int32
	evalOf := func(r float64) func() (nn.EvalResult, error) {
		return func() (nn.EvalResult, error) {
			calls.Add(1)
			return nn.EvalResult{N: 10, Accuracy: r}, nil
		}
	}
	memo := NewEvalMemo(2)
	a, b := build(), build()
	if got, _ := memo.Evaluate(a, evalOf(0.5)); got.Accuracy != 0.5 || calls.Load() != 1 {
		t.Fatalf("first evaluation: %+v after %d calls", got, calls.Load())
	}
	if got, _ := memo.Evaluate(b, evalOf(0.9)); got.Accuracy != 0.5 || calls.Load() != 1 {
		t.Fatalf("an identical model: %+v after %d calls, want the memo's 0.5 and no call", got, calls.Load())
	}
	b.Params()[3] = math.Nextafter32(b.Params()[3], 1)
	if got, _ := memo.Evaluate(b, evalOf(0.7)); got.Accuracy != 0.7 || calls.Load() != 2 {
		t.Fatalf("a parameter one ulp away: %+v after %d calls, want its own evaluation", got, calls.Load())
	}
	c := build()
	c.State()[0] = math.Nextafter32(c.State()[0], 1)
	if got, _ := memo.Evaluate(c, evalOf(0.3)); got.Accuracy != 0.3 || calls.Load() != 3 {
		t.Fatalf("other batch-norm state: %+v after %d calls, want its own evaluation", got, calls.Load())
	}

	// Eight goroutines, one model never seen: one evaluation, one result.
	d := build()
	d.Params()[0] = 42
	calls.Store(0)
	var wg sync.WaitGroup
	got := make([]float64, 8)
	for i := range got {
		wg.Go(func() {
			r, _ := memo.Evaluate(d, evalOf(float64(i)))
			got[i] = r.Accuracy
		})
	}
	wg.Wait()
	if calls.Load() != 1 {
		t.Fatalf("%d evaluations of one model by 8 goroutines", calls.Load())
	}
	for _, r := range got {
		if r != got[0] {
			t.Fatalf("goroutines got different results: %v", got)
		}
	}

	// Past the limit (4 per node) the memo starts over: still correct.
	for i := range 20 {
		d.Params()[0] = float32(i)
		if r, _ := memo.Evaluate(d, evalOf(float64(i))); r.Accuracy != float64(i) {
			t.Fatalf("model %d after the memo filled: %+v", i, r)
		}
	}
	if n := len(memo.entries); n > memo.limit {
		t.Fatalf("%d entries kept, limit %d", n, memo.limit)
	}
}
