package aggregate

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

// Checks shared by the tests of the low-dimensional rules (safe_area,
// centerpoint_lp, tverberg, radon).

// refusal is one case of a low-dimensional rule's refusals: n inputs of d
// coordinates (refusalPoints) with f, the error the refusal must wrap and
// the words it must say.
type refusal struct {
	n, d, f int
	is      error
	want    []string
}

// refusalPoints are n distinct inputs of d coordinates.
func refusalPoints(n, d int) [][]float64 {
	return gen(n, d, func(i, k int) float64 { return float64(i*i%7 + k*i) })
}

// checkRefusals runs point (the rule with f) on each case's inputs.
func checkRefusals(t *testing.T, point func(f int, x []float64, pts [][]float64) error, cases []refusal) {
	t.Helper()
	for _, c := range cases {
		err := point(c.f, make([]float64, c.d), refusalPoints(c.n, c.d))
		if !errors.Is(err, c.is) {
			t.Errorf("n=%d d=%d f=%d: %v, want %v", c.n, c.d, c.f, err, c.is)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("n=%d d=%d f=%d: %q does not say %q", c.n, c.d, c.f, err, w)
			}
		}
	}
}

// partitioned is a low-dimensional rule that returns its partition.
type partitioned interface {
	Point(dst []float64, pts [][]float64) error
	Partition() [][]int
	Weights() []float64
}

// checkNegativeF: r, with f = −1, refuses naming it and then has neither a
// partition nor weights.
func checkNegativeF(t *testing.T, r partitioned) {
	t.Helper()
	if err := r.Point(make([]float64, 2), refusalPoints(4, 2)); err == nil || !strings.Contains(err.Error(), "f = -1") {
		t.Errorf("f = -1: %v", err)
	}
	if r.Partition() != nil || r.Weights() != nil {
		t.Error("partition or weights after a refusal")
	}
}

// checkPartition checks a partition of the inputs pts (indices) that
// certifies the point x: wantParts disjoint non-empty parts covering N
// inputs, x in the hull of each (partDist, within safeTol of the inputs'
// spread), and one part all honest (its inputs all among honest).
func checkPartition(t *testing.T, what string, pts, honest [][]float64, x []float64, parts [][]int, wantParts, N int) {
	t.Helper()
	var all []int
	honestPart := false
	for _, p := range parts {
		if len(p) == 0 {
			t.Errorf("%s: an empty part in %v", what, parts)
			continue
		}
		all = append(all, p...)
		sub := make([][]float64, len(p))
		clean := true
		for i, j := range p {
			sub[i] = pts[j]
			clean = clean && slices.ContainsFunc(honest, func(hp []float64) bool { return slices.Equal(hp, pts[j]) })
		}
		honestPart = honestPart || clean
		if ds := partDist(sub, x); ds > safeTol*spread(pts) {
			t.Errorf("%s: %v is %.3g from the hull of part %v", what, x, ds, p)
		}
	}
	slices.Sort(all)
	if len(parts) != wantParts || len(all) != N || len(slices.Compact(all)) != N {
		t.Errorf("%s: %d parts of %d inputs (%d distinct), want %d disjoint parts of %d", what, len(parts), len(all), len(slices.Compact(all)), wantParts, N)
	}
	if !honestPart {
		t.Errorf("%s: no part is all honest: %v", what, parts)
	}
}
