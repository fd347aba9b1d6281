package wire

import (
	"math"
	"testing"
)

// TestFirstNonFinite puts each non-finite value, and the finite values
// nearest to them, at every position of slices long enough to cross the
// scan's 256-element blocks.
func TestFirstNonFinite(t *testing.T) {
	bad := []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)),
		math.Float32frombits(0x7f800001), math.Float32frombits(0xffffffff)}
	edge := []float32{math.MaxFloat32, -math.MaxFloat32, math.Float32frombits(0x7f7fffff),
		math.Float32frombits(0x80000001), float32(math.Copysign(0, -1))}
	for _, n := range []int{0, 1, 2, 255, 256, 257, 600} {
		xs := make([]float32, n)
		for i := range xs {
			xs[i] = edge[i%len(edge)]
		}
		if got := firstNonFinite(xs); got != -1 {
			t.Fatalf("n=%d finite slice: %d", n, got)
		}
		for i := range n {
			for _, b := range bad {
				old := xs[i]
				xs[i] = b
				if n > 1 && i+1 < n { // a later bad value must not win
					xs[n-1] = b
				}
				if got := firstNonFinite(xs); got != i {
					t.Fatalf("n=%d: %v at %d found at %d", n, b, i, got)
				}
				xs[i] = old
				xs[n-1] = edge[(n-1)%len(edge)]
			}
		}
	}
}
