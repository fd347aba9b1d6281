package nn

import (
	"math"
	"testing"
)

// TestSampleLossesSumToEvaluate: the per-sample losses average to
// Evaluate's mean loss, and each is the batch-1 loss of its sample.
func TestSampleLossesSumToEvaluate(t *testing.T) {
	src := blobs(70, 3, 5, 4)
	m := mustBuild(t, Spec{Kind: "mlp", Input: []int{5}, Hidden: []int{8}, Classes: 3, Dropout: 0.3}, 2, Options{Batch: 16})
	dst := make([]float64, src.Len())
	n, err := m.SampleLosses(src, dst)
	if err != nil || n != 70 {
		t.Fatal(n, err)
	}
	ev, _ := m.Evaluate(src)
	var sum float64
	for _, l := range dst {
		sum += l
	}
	if math.Abs(sum/70-ev.Loss) > 1e-9 {
		t.Errorf("mean of sample losses %v, Evaluate %v", sum/70, ev.Loss)
	}
	one := &memSource{x: src.x[5*5 : 6*5], y: src.y[5:6], dim: 5}
	l1 := make([]float64, 1)
	m.SampleLosses(one, l1)
	if math.Abs(l1[0]-dst[5]) > 1e-6 {
		t.Errorf("sample 5: %v in a batch, %v alone", dst[5], l1[0])
	}
	if _, err := m.SampleLosses(src, dst[:3]); err == nil {
		t.Error("short dst accepted")
	}
}
