package audit

import (
	"math"
	"testing"

	"github.com/trellis-fl/trellis/privacy"
)

// A shadow's training set takes each sample of the pool with probability
// pi, from the audit's own stream: the same for the same (seed, node,
// shadow), another for another shadow, never empty, and about pi·|pool|
// samples.
func TestShadowSubset(t *testing.T) {
	pool := make([]int32, 4000)
	for i := range pool {
		pool[i] = int32(i)
	}
	a, inA := shadowSubset(1, 0, 0, pool, 0.25)
	b, _ := shadowSubset(1, 0, 0, pool, 0.25)
	c, _ := shadowSubset(1, 0, 1, pool, 0.25)
	if len(a) != len(b) || len(a) == len(c) && a[0] == c[0] && a[len(a)-1] == c[len(c)-1] {
		t.Errorf("subsets of %d, %d and %d samples: not reproducible, or not independent across shadows", len(a), len(b), len(c))
	}
	// Binomial(4000, 0.25): mean 1000, sd ≈ 27.4; 5 sd either side.
	if math.Abs(float64(len(a))-1000) > 5*math.Sqrt(4000*0.25*0.75) {
		t.Errorf("%d of 4000 samples at probability 0.25", len(a))
	}
	for _, j := range a {
		if !inA[j] {
			t.Fatalf("sample %d drawn but not marked in", j)
		}
	}
	if len(inA) != len(a) {
		t.Errorf("%d marked in, %d drawn", len(inA), len(a))
	}
	if sub, in := shadowSubset(1, 0, 0, pool[:3], 0); len(sub) != 1 || !in[pool[0]] {
		t.Errorf("probability 0 gave %v: want the pool's first sample", sub)
	}
}

// The reference-model attack subtracts the reference models' mean loss
// per sample: members that are simply easy samples (every model fits them
// as well as the target does) no longer stand out. Here the target
// separates members perfectly by loss (AUC 1), and the one reference
// model has the same losses, so the calibrated scores are all 0 (AUC 0.5).
func TestReferenceAuditCalibrates(t *testing.T) {
	mem, non := []float64{0.1, 0.2, 0.15, 0.05}, []float64{1, 2, 1.5, 3}
	memIdx, nonIdx := []int32{0, 1, 2, 3}, []int32{4, 5, 6, 7}
	loss := func(j, i int, idx []int32) ([]float64, error) {
		if idx[0] == 0 {
			return mem, nil
		}
		return non, nil
	}
	plain, err := privacy.LossThresholdAudit(mem, non, 1e-5, Alpha)
	if err != nil {
		t.Fatal(err)
	}
	ref, err := referenceAudit(loss, []int{0, 1}, 0, mem, non, memIdx, nonIdx, 1e-5)
	if err != nil {
		t.Fatal(err)
	}
	if plain.AUC != 1 || ref.AUC != 0.5 {
		t.Errorf("AUC %v before calibration (want 1), %v after (want 0.5)", plain.AUC, ref.AUC)
	}
}
