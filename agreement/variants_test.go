package agreement

import (
	"math"
	"math/rand/v2"
	"testing"
)

// randomOutputs draws n samples of k classes with d features.
func randomOutputs(r *rand.Rand, n, k, d int) *Outputs {
	o := &Outputs{N: n, Classes: k, Dim: d, Probs: make([]float32, n*k), Features: make([]float32, n*d)}
	for a := range n {
		var s float64
		for j := range k {
			v := r.Float64() + 0.1
			o.Probs[a*k+j] = float32(v)
			s += v
		}
		for j := range k {
			o.Probs[a*k+j] /= float32(s)
		}
	}
	for i := range o.Features {
		o.Features[i] = float32(r.NormFloat64())
	}
	return o
}

// addVacuity makes o an evidential head's outputs. S = K/u must exceed K
// so that every α_j = p_j S is above 1: u in [0.05, 0.09].
func addVacuity(r *rand.Rand, o *Outputs) {
	o.Vacuity = make([]float32, o.N)
	for a := range o.Vacuity {
		o.Vacuity[a] = float32(0.05 + 0.04*r.Float64())
	}
}

// By hand: features 1 and −1, 3 classes: K = 3·(φ_a φ_b + 1) = [[6, 0], [0, 6]].
func TestLogitKernelHandValues(t *testing.T) {
	o := &Outputs{N: 2, Classes: 3, Dim: 1, Probs: []float32{0.2, 0.3, 0.5, 0.9, 0.05, 0.05}, Features: []float32{1, -1}}
	var k Kernel
	if err := k.LogitKernel(o); err != nil {
		t.Fatal(err)
	}
	for i, want := range []float64{6, 0, 0, 6} {
		if k.K[i] != want {
			t.Errorf("K = %v, want [6 0 0 6]", k.K)
			break
		}
	}
	// Blind to the probabilities: another model with the same features agrees fully.
	o2 := *o
	o2.Probs = []float32{0.9, 0.05, 0.05, 0.2, 0.3, 0.5}
	var k2 Kernel
	if err := k2.LogitKernel(&o2); err != nil {
		t.Fatal(err)
	}
	if got := CKA(&k, &k2); math.Abs(got-1) > 1e-12 {
		t.Errorf("logit kernels of equal features: CKA %v, want 1", got)
	}
}

// Alignment of I and the all-ones 2×2 is 2/(√2·2) = 1/√2; of a kernel and
// a scaled copy 1; with a zero kernel 0. Unlike CKA, a common offset counts.
func TestAlignmentHandValues(t *testing.T) {
	id, ones := kernelOf([]float64{1, 0, 0, 1}, 2), kernelOf([]float64{1, 1, 1, 1}, 2)
	if got := Alignment(id, ones); math.Abs(got-1/math.Sqrt2) > 1e-15 {
		t.Errorf("Alignment(I, 11ᵀ) = %v, want 1/√2", got)
	}
	if got := Alignment(id, kernelOf([]float64{4, 0, 0, 4}, 2)); math.Abs(got-1) > 1e-15 {
		t.Errorf("Alignment(I, 4I) = %v, want 1", got)
	}
	if got := Alignment(id, kernelOf([]float64{0, 0, 0, 0}, 2)); got != 0 {
		t.Errorf("Alignment with a zero kernel = %v, want 0", got)
	}
	if CKA(ones, ones) != 0 || Alignment(ones, ones) != 1 {
		t.Error("a constant kernel: CKA should see nothing, alignment full agreement")
	}
}

// The paper's kernel is the sum of the class blocks, so (centering being
// linear) its centred kernel is the sum of theirs; a model scores 1 with
// itself; and one that swaps two classes keeps the paper's ntk score at 1
// (tr(M_a M_bᵀ) is blind to a relabelling) but not the classwise one.
func TestClassKernels(t *testing.T) {
	for _, evidential := range []bool{false, true} {
		r := rand.New(rand.NewPCG(11, 12))
		const n, k, d = 6, 3, 4
		o := randomOutputs(r, n, k, d)
		if evidential {
			addVacuity(r, o)
		}
		var whole Kernel
		var blocks ClassKernels
		if err := whole.Compute(o); err != nil {
			t.Fatal(err)
		}
		if err := blocks.Compute(o); err != nil {
			t.Fatal(err)
		}
		for i, want := range whole.Centered {
			var sum float64
			for c := range k {
				sum += blocks.Centered[c*n*n+i]
			}
			if math.Abs(sum-want) > 1e-12*(1+math.Abs(want)) {
				t.Fatalf("evidential %v: Σ_c centred block = %v, centred kernel %v", evidential, sum, want)
			}
		}
		if got := ClasswiseCKA(&blocks, &blocks); math.Abs(got-1) > 1e-12 {
			t.Errorf("evidential %v: classwise score with itself %v, want 1", evidential, got)
		}
		swapped := *o
		swapped.Probs = append([]float32(nil), o.Probs...)
		for a := range n {
			swapped.Probs[a*k], swapped.Probs[a*k+1] = o.Probs[a*k+1], o.Probs[a*k]
		}
		var ws Kernel
		var bs ClassKernels
		if err := ws.Compute(&swapped); err != nil {
			t.Fatal(err)
		}
		if err := bs.Compute(&swapped); err != nil {
			t.Fatal(err)
		}
		if got := CKA(&whole, &ws); math.Abs(got-1) > 1e-9 {
			t.Errorf("evidential %v: spec ntk of a class-swapped copy %v, want 1", evidential, got)
		}
		if got := ClasswiseCKA(&blocks, &bs); got > 0.999 {
			t.Errorf("evidential %v: classwise score of a class-swapped copy %v, want below 1", evidential, got)
		}
	}
}
