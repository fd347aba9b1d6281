package memsize

import (
	"math"
	"runtime"
	"testing"
)

// Alloc is what the runtime really spends: TotalAlloc grows by it for
// one allocation of each size (small ones by their size class, large ones
// by whole pages).
func TestAllocMatchesTheRuntime(t *testing.T) {
	// From 16 bytes: smaller pointer-free objects share the runtime's
	// 16-byte tiny blocks, which no footprint counts on.
	sizes := []int64{16, 17, 33, 1000, 4097, 32768, 32769, 100000, 1 << 20}
	sink := make([][]byte, 0, 5*len(sizes))
	for _, b := range sizes {
		// The least of five tries: another goroutine of the process (the
		// collector's, the test runner's) may allocate during one.
		got := int64(math.MaxInt64)
		for range 5 {
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			sink = append(sink, make([]byte, b))
			runtime.ReadMemStats(&after)
			got = min(got, int64(after.TotalAlloc-before.TotalAlloc))
		}
		if want := Alloc(b); got != want {
			t.Errorf("make([]byte, %d): the heap grew by %d bytes, Alloc says %d", b, got, want)
		}
	}
	runtime.KeepAlive(sink)
}

func TestSaturates(t *testing.T) {
	if got := Mul(1<<40, 1<<40); got != Max {
		t.Errorf("Mul(2^40, 2^40) = %d, want Max", got)
	}
	if got := Add(Max, 1); got != Max {
		t.Errorf("Add(Max, 1) = %d, want Max", got)
	}
	if got := Mul(3, 0, 5); got != 0 {
		t.Errorf("Mul(3, 0, 5) = %d, want 0", got)
	}
	if got := Floats(3); got != 16 {
		t.Errorf("Floats(3) = %d, want 16 (12 bytes in the 16-byte class)", got)
	}
}
