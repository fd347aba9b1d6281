package aggregate

import (
	"math"
	"slices"
	"testing"
)

func TestGeometricMedianClosedForm(t *testing.T) {
	// Four points in convex position: the geometric median is where the
	// diagonals cross. A(0,0) C(7,5), B(6,0) D(−1,3): t·(7,5) = (6,0) +
	// s·(−7,3) gives t = 9/28, the point (9/4, 45/28). The start, the
	// coordinate-wise median, is (3, 1.5).
	quad := [][]float32{{6, 0}, {0, 0}, {-1, 3}, {7, 5}}
	gm := &GeometricMedian{}
	got := run(t, gm, quad)
	if math.Abs(float64(got[0])-9.0/4) > 1e-4 || math.Abs(float64(got[1])-45.0/28) > 1e-4 {
		t.Errorf("quadrilateral: %v, want (2.25, 1.6071)", got)
	}
	if gm.Iters() < 2 || gm.Iters() > 100 {
		t.Errorf("quadrilateral took %d updates", gm.Iters())
	}
	w := gm.Weights()
	if s := sum(w); math.Abs(s-1) > 1e-12 {
		t.Errorf("weights sum to %v", s)
	}
	// The weights are proportional to 1/||x_i − z|| (for the z before the
	// last update, which is within the tolerance of the output).
	for i, x := range quad {
		di := math.Hypot(float64(x[0]-got[0]), float64(x[1]-got[1]))
		d0 := math.Hypot(float64(quad[0][0]-got[0]), float64(quad[0][1]-got[1]))
		if r := w[i] / w[0]; math.Abs(r-d0/di) > 1e-3*r {
			t.Errorf("weight %d / weight 0 = %v, want %v", i, r, d0/di)
		}
	}

	// Even n on a line: {0, 1, 3, 10} starts at the median 2, where the
	// Weiszfeld update is (0/2 + 1/1 + 3/1 + 10/8) / (1/2 + 1 + 1 + 1/8) =
	// 5.25/2.625 = 2: a fixed point after one update, with weights
	// (1/2, 1, 1, 1/8)/2.625.
	gm = &GeometricMedian{}
	if got := run(t, gm, [][]float32{{10}, {3}, {0}, {1}}); got[0] != 2 {
		t.Errorf("{0,1,3,10}: %v, want 2", got)
	}
	if gm.Iters() != 1 {
		t.Errorf("{0,1,3,10}: %d updates, want 1", gm.Iters())
	}
	if w, want := gm.Weights(), []float64{0.125 / 2.625, 1 / 2.625, 0.5 / 2.625, 1 / 2.625}; !slices.EqualFunc(w, want, func(a, b float64) bool { return math.Abs(a-b) < 1e-15 }) {
		t.Errorf("weights %v, want %v", w, want)
	}

	// Odd n: the geometric median of a symmetric star is its center, and
	// of points on a line the middle one.
	star := [][]float32{{1, 0}, {-1, 0}, {0, 1}, {0, -1}, {0, 0}, {3, 3}, {-3, -3}}
	if got := run(t, &GeometricMedian{}, star); math.Hypot(float64(got[0]), float64(got[1])) > 1e-5 {
		t.Errorf("star: %v, want the origin", got)
	}
	if got := run(t, &GeometricMedian{}, [][]float32{{0}, {100}, {1}, {2}, {10}}); math.Abs(float64(got[0])-2) > 1e-5 {
		t.Errorf("{0,1,2,10,100}: %v, want 2", got)
	}
	// Identical inputs: that input.
	same := [][]float32{{1.5, -2}, {1.5, -2}, {1.5, -2}}
	if got := run(t, &GeometricMedian{}, same); !slices.Equal(got, same[0]) {
		t.Errorf("identical inputs: %v", got)
	}
}

// The iterations stop at the relative change Tol, or at Iterations.
func TestGeometricMedianStopping(t *testing.T) {
	quad := [][]float32{{6, 0}, {0, 0}, {-1, 3}, {7, 5}}
	one := &GeometricMedian{Iterations: 1}
	run(t, one, quad)
	if one.Iters() != 1 {
		t.Errorf("Iterations = 1: %d updates", one.Iters())
	}
	loose, tight := &GeometricMedian{Tol: 1e-2}, &GeometricMedian{Tol: 1e-9}
	a, b := run(t, loose, quad), run(t, tight, quad)
	if loose.Iters() >= tight.Iters() {
		t.Errorf("tol 1e-2 took %d updates, tol 1e-9 %d", loose.Iters(), tight.Iters())
	}
	if e := math.Hypot(float64(b[0])-9.0/4, float64(b[1])-45.0/28); e > 1e-6 {
		t.Errorf("tol 1e-9: error %v", e)
	}
	if e := math.Hypot(float64(a[0])-9.0/4, float64(a[1])-45.0/28); e > 0.1 {
		t.Errorf("tol 1e-2: error %v", e)
	}
}
