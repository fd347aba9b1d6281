package aggregate

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
)

// exactDepthOracle is the Tukey depth of the float32 point p among pts in
// exact rational arithmetic: the least number of points q with
// u·(q − p) >= 0 over the directions u = side·(rot90(v_i) + s·δ·v_i),
// v_i = q_i − p, side, s = ±1, for an infinitesimal δ > 0 (symbolic
// perturbation: these are the directions just either side of every
// critical one, in both orientations, so every arc of directions where the
// count is constant is visited). With no point other than p, it is n.
func exactDepthOracle(pts [][]float32, p [2]float32) int {
	rat := func(v float32) *big.Rat { return new(big.Rat).SetFloat64(float64(v)) }
	px, py := rat(p[0]), rat(p[1])
	type v2 struct{ x, y *big.Rat }
	var vs []v2
	coincident := 0
	for _, q := range pts {
		x, y := new(big.Rat).Sub(rat(q[0]), px), new(big.Rat).Sub(rat(q[1]), py)
		if x.Sign() == 0 && y.Sign() == 0 {
			coincident++
			continue
		}
		vs = append(vs, v2{x, y})
	}
	best := len(pts)
	mul := func(a, b *big.Rat) *big.Rat { return new(big.Rat).Mul(a, b) }
	for _, vi := range vs {
		for _, side := range []int{1, -1} {
			for _, s := range []int{1, -1} {
				c := coincident
				for _, vj := range vs {
					cross := new(big.Rat).Sub(mul(vi.x, vj.y), mul(vi.y, vj.x)).Sign() * side
					dot := new(big.Rat).Add(mul(vi.x, vj.x), mul(vi.y, vj.y)).Sign() * side * s
					if cross > 0 || cross == 0 && dot > 0 {
						c++
					}
				}
				best = min(best, c)
			}
		}
	}
	return best
}

// The oracle on hand-checked sets.
func TestExactDepthOracle(t *testing.T) {
	sq := [][]float32{{0, 0}, {2, 0}, {0, 2}, {2, 2}, {1, 1}}
	for _, c := range []struct {
		p    [2]float32
		want int
	}{{[2]float32{1, 1}, 3}, {[2]float32{0, 0}, 1}, {[2]float32{1, 0}, 1}, {[2]float32{5, 5}, 0}, {[2]float32{0.5, 0.5}, 1}} {
		if got := exactDepthOracle(sq, c.p); got != c.want {
			t.Errorf("depth of %v in the square = %d, want %d", c.p, got, c.want)
		}
	}
	// The corners alone: the center is the crossing of the diagonals, of
	// depth 2; a point just off it has depth 1.
	corners := sq[:4]
	if got := exactDepthOracle(corners, [2]float32{1, 1}); got != 2 {
		t.Errorf("depth of the corners' center = %d, want 2", got)
	}
	if got := exactDepthOracle(corners, [2]float32{1, math.Nextafter32(1, 2)}); got != 1 {
		t.Errorf("depth just above the corners' center = %d, want 1", got)
	}
}

// A convex quadrilateral whose deep region (depth 2) is the single
// crossing of its diagonals, (35/12, 35/12), not a float32 point: no
// float32 point has depth 2, so the rule must refuse, not return the
// rounded crossing (depth 1).
func TestCenterpointRoundingNeverShallower(t *testing.T) {
	quad := [][]float32{{0, 0}, {5, 0}, {3, 3}, {0, 7}}
	c := &Centerpoint{}
	dst := make([]float32, 2)
	err := c.Aggregate(dst, quad)
	if err == nil {
		if d := exactDepthOracle(quad, [2]float32{dst[0], dst[1]}); d < 2 {
			t.Fatalf("quadrilateral: returned %v of exact depth %d < 2", dst, d)
		}
	} else {
		t.Logf("quadrilateral: %v", err)
	}
	// Random sets, some with tiny deep regions: a returned point has the
	// promised depth exactly.
	r := rand.New(rand.NewPCG(75, 75))
	refused, byN := 0, map[int]int{}
	for trial := range 300 {
		n := 3 + trial%10
		xs := make([][]float32, n)
		for i := range xs {
			a := r.Float64() * 6.283
			rad := 1 + 1e-3*r.NormFloat64() // near a circle: thin deep regions
			if trial%3 == 0 {
				rad = r.ExpFloat64()
			}
			xs[i] = []float32{float32(rad * math.Cos(a)), float32(rad * math.Sin(a))}
		}
		err := c.Aggregate(dst, xs)
		if err != nil {
			refused++
			byN[n]++
			continue
		}
		if d, need := exactDepthOracle(xs, [2]float32{dst[0], dst[1]}), (n+2)/3; d < need {
			t.Fatalf("trial %d, n = %d: returned %v of exact depth %d < %d", trial, n, dst, d, need)
		}
	}
	t.Logf("refused %d of 300 (no float32 point of the depth found), by n: %v", refused, byN)
}
