package data

import (
	"math"
	"slices"
	"testing"
)

func TestRotationRightAngles(t *testing.T) {
	// A 3×4 (H×W) image, two channels. The centre is (1.5, 1): a 180°
	// rotation maps (i, j) to (2-i, 3-j) exactly.
	src := make([]float32, 2*12)
	for i := range src {
		src[i] = float32(i * i)
	}
	rot, err := NewRotation([]int{2, 3, 4}, 180)
	if err != nil {
		t.Fatal(err)
	}
	dst := make([]float32, len(src))
	rot.Apply(dst, src)
	for ch := range 2 {
		for i := range 3 {
			for j := range 4 {
				want := src[ch*12+(2-i)*4+(3-j)]
				if got := dst[ch*12+i*4+j]; math.Abs(float64(got-want)) > 1e-3 {
					t.Errorf("180°: (%d,%d,%d) = %v, want %v", ch, i, j, got, want)
				}
			}
		}
	}
	// A square 3×3: rotating 90° counter-clockwise as displayed moves the
	// top row to the left column, read bottom-up:
	//   1 2 3       3 6 9
	//   4 5 6  -->  2 5 8
	//   7 8 9       1 4 7
	sq := []float32{1, 2, 3, 4, 5, 6, 7, 8, 9}
	want := []float32{3, 6, 9, 2, 5, 8, 1, 4, 7}
	r90, _ := NewRotation([]int{3, 3}, 90)
	got := make([]float32, 9)
	r90.Apply(got, sq)
	for i := range want {
		if math.Abs(float64(got[i]-want[i])) > 1e-5 {
			t.Fatalf("90°: got %v, want %v", got, want)
		}
	}
	// 0° and 360° are the identity.
	for _, deg := range []float64{0, 360} {
		r, _ := NewRotation([]int{1, 3, 4}, deg)
		out := make([]float32, 12)
		r.Apply(out, src[:12])
		for i := range out {
			if math.Abs(float64(out[i]-src[i])) > 1e-3 {
				t.Fatalf("%v°: %v, want %v", deg, out, src[:12])
			}
		}
	}
	// 45° on a constant image stays constant (edge clamping, weights sum to 1).
	flat := slices.Repeat([]float32{-0.42}, 28*28)
	r45, _ := NewRotation([]int{1, 28, 28}, 45)
	out := make([]float32, 28*28)
	r45.Apply(out, flat)
	for _, v := range out {
		if math.Abs(float64(v)+0.42) > 1e-6 {
			t.Fatalf("constant image changed: %v", v)
		}
	}
	if _, err := NewRotation([]int{561}, 10); err == nil {
		t.Error("rotating a vector: want an error")
	}
}

func TestPermutation(t *testing.T) {
	shape := []int{3, 2, 2}
	p := NewPermutation(shape, stream(1, purposePermutation, 0))
	src := []float32{0, 1, 2, 3, 10, 11, 12, 13, 20, 21, 22, 23}
	dst := make([]float32, 12)
	p.Apply(dst, src)
	for ch := range 3 {
		got := slices.Sorted(slices.Values(dst[ch*4 : ch*4+4]))
		if !slices.Equal(got, src[ch*4:ch*4+4]) {
			t.Fatalf("channel %d not a permutation of itself: %v", ch, dst)
		}
		for q := range 4 {
			if dst[ch*4+q]-float32(10*ch) != dst[q] {
				t.Fatalf("channels permuted differently: %v", dst)
			}
		}
	}
}

func TestFeatureShift(t *testing.T) {
	ts, err := FeatureShift([]int{1, 28, 28}, 4, ShiftConfig{Kind: Rotate})
	if err != nil {
		t.Fatal(err)
	}
	if ts[0] != nil {
		t.Error("client 0 should be unrotated")
	}
	for i, want := range []float64{0, 90, 180, 270} {
		if i > 0 && ts[i].(*Rotation).Degrees != want {
			t.Errorf("client %d rotated %v°, want %v", i, ts[i].(*Rotation).Degrees, want)
		}
	}
	a, _ := FeatureShift([]int{1, 28, 28}, 3, ShiftConfig{Kind: Permute, Seed: 4})
	b, _ := FeatureShift([]int{1, 28, 28}, 3, ShiftConfig{Kind: Permute, Seed: 4})
	for i := range a {
		if !slices.Equal(a[i].(*Permutation).Perm, b[i].(*Permutation).Perm) {
			t.Fatal("same seed, different permutations")
		}
	}
	if slices.Equal(a[0].(*Permutation).Perm, a[1].(*Permutation).Perm) {
		t.Error("clients share a permutation")
	}
	if none, err := FeatureShift([]int{5}, 2, ShiftConfig{}); err != nil || none[0] != nil || none[1] != nil {
		t.Errorf("no shift: %v %v", none, err)
	}
	if _, err := FeatureShift([]int{5}, 2, ShiftConfig{Kind: "blur"}); err == nil {
		t.Error("unknown kind: want an error")
	}
}
