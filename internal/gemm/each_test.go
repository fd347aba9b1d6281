package gemm

import (
	"runtime"
	"sync/atomic"
	"testing"
)

// TestEachCoversEveryItemOnce: for every engine width and item count, Each
// hands each item to exactly one call, in contiguous ranges, with worker
// indices below Threads, and the worker-0 range runs on the caller.
func TestEachCoversEveryItemOnce(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	for _, threads := range []int{1, 2, 3, 4} {
		e := New(threads)
		for _, n := range []int{0, 1, 2, 3, 5, 8, 64} {
			seen := make([]atomic.Int32, n)
			var bad atomic.Int32
			e.Each(n, func(w, lo, hi int) {
				if w < 0 || w >= threads || lo > hi {
					bad.Add(1)
				}
				if e.Serial(w).Threads() != 1 {
					bad.Add(1)
				}
				for i := lo; i < hi; i++ {
					seen[i].Add(1)
				}
			})
			if bad.Load() != 0 {
				t.Fatalf("threads %d, n %d: a call had a bad worker index or range", threads, n)
			}
			for i := range seen {
				if c := seen[i].Load(); c != 1 {
					t.Fatalf("threads %d, n %d: item %d ran %d times", threads, n, i, c)
				}
			}
		}
		e.Close()
	}
}

// TestSerialKeepsTheKernel: a worker's engine multiplies with its parent's
// micro-kernel, so a product inside Each rounds as one outside it does.
func TestSerialKeepsTheKernel(t *testing.T) {
	for _, e := range []*Engine{New(2), NewPortable(2), New(1)} {
		for w := 0; w < e.Threads(); w++ {
			if s := e.Serial(w); s.Kernel() != e.Kernel() || s.Threads() != 1 {
				t.Errorf("Serial(%d) of a %s engine: %s kernel, %d threads", w, e.Kernel(), s.Kernel(), s.Threads())
			}
		}
		e.Close()
	}
}

// TestEachAllocatesNothing with a function value built once.
func TestEachAllocatesNothing(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	e := New(2)
	defer e.Close()
	var sink [64]float32
	fn := func(w, lo, hi int) {
		for i := lo; i < hi; i++ {
			sink[i]++
		}
	}
	e.Each(64, fn)
	if a := testing.AllocsPerRun(50, func() { e.Each(64, fn) }); a != 0 {
		t.Errorf("%v allocations per Each", a)
	}
}
