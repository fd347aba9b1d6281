package data

import (
	"math/rand/v2"
	"slices"
	"testing"
)

func TestBatcherEpochs(t *testing.T) {
	d := labelled(100, 4, 1, 14)
	idx := []int32{3, 9, 27, 81, 5, 25, 50}
	orig := slices.Clone(idx)
	b := NewBatcher(d, idx, rand.New(rand.NewPCG(1, 2)), nil)
	x, y := make([]float32, 3), make([]int, 3)
	var firstEpoch []int32
	for epoch := range 3 {
		var seen []int32
		var sizes []int
		for n := b.Next(x, y); n > 0; n = b.Next(x, y) {
			sizes = append(sizes, n)
			for j := range n {
				s := int32(x[j]) // row i holds the value i
				if y[j] != d.Y[s] {
					t.Fatalf("label %d for sample %d, want %d", y[j], s, d.Y[s])
				}
				seen = append(seen, s)
			}
		}
		if !slices.Equal(sizes, []int{3, 3, 1}) {
			t.Errorf("batch sizes %v", sizes)
		}
		if !slices.Equal(slices.Sorted(slices.Values(seen)), slices.Sorted(slices.Values(orig))) {
			t.Fatalf("epoch %d visited %v", epoch, seen)
		}
		if epoch == 0 {
			firstEpoch = seen
		} else if epoch == 1 && slices.Equal(seen, firstEpoch) {
			t.Error("epochs 0 and 1 in the same order")
		}
		b.Reset()
	}
	if !slices.Equal(idx, orig) {
		t.Error("the caller's index list was modified")
	}
	// Without an rng: the list's order, for evaluation.
	e := NewBatcher(d, idx, nil, nil)
	big, by := make([]float32, 10), make([]int, 10)
	if n := e.Next(big, by); n != 7 || big[0] != 3 || big[6] != 50 {
		t.Errorf("evaluation order: n=%d %v", n, big[:n])
	}
}

func TestBatcherTransformAndNoAllocs(t *testing.T) {
	d, err := mnistLike(64)
	if err != nil {
		t.Fatal(err)
	}
	rot, _ := NewRotation(d.Shape, 30)
	perm := NewPermutation(d.Shape, stream(1, purposePermutation, 0))
	for _, tf := range []Transform{nil, rot, perm} {
		b := NewBatcher(d, d.All(), rand.New(rand.NewPCG(3, 4)), tf)
		x, y := make([]float32, 16*d.RowLen()), make([]int, 16)
		allocs := testing.AllocsPerRun(20, func() {
			if b.Next(x, y) == 0 {
				b.Reset()
			}
		})
		if allocs != 0 {
			t.Errorf("%T: %v allocations per batch", tf, allocs)
		}
		// The rows are the transform of the dataset's rows.
		b.Reset()
		n := b.Next(x, y)
		want := make([]float32, d.RowLen())
		for j := range n {
			s := b.order[j]
			if tf != nil {
				tf.Apply(want, d.Row(int(s)))
			} else {
				copy(want, d.Row(int(s)))
			}
			if !slices.Equal(x[j*d.RowLen():(j+1)*d.RowLen()], want) {
				t.Fatalf("%T: row %d is not the transformed sample", tf, j)
			}
		}
	}
}

// mnistLike makes a small dataset of 28×28 images with random pixels.
func mnistLike(n int) (*Dataset, error) {
	r := rand.New(rand.NewPCG(5, 6))
	d := &Dataset{Name: "mnist-like", Shape: []int{1, 28, 28}, X: make([]float32, n*784), Y: make([]int, n),
		Classes: []string{"0", "1", "2", "3", "4", "5", "6", "7", "8", "9"}}
	for i := range d.X {
		d.X[i] = r.Float32()
	}
	for i := range d.Y {
		d.Y[i] = r.IntN(10)
	}
	return d, d.Validate()
}

func TestBatcherShortBuffer(t *testing.T) {
	d := labelled(10, 2, 1, 1)
	b := NewBatcher(d, d.All(), nil, nil)
	defer func() {
		if recover() == nil {
			t.Error("x too small for y: want a panic")
		}
	}()
	b.Next(make([]float32, 2), make([]int, 3))
}

func BenchmarkBatcherMNISTRotated(b *testing.B) {
	d, _ := mnistLike(1024)
	rot, _ := NewRotation(d.Shape, 30)
	bt := NewBatcher(d, d.All(), rand.New(rand.NewPCG(1, 1)), rot)
	x, y := make([]float32, 64*784), make([]int, 64)
	for b.Loop() {
		if bt.Next(x, y) == 0 {
			bt.Reset()
		}
	}
}
