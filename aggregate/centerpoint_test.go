package aggregate

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// tukeyDepth is the Tukey depth of p written from the definition: the
// least number of points in a closed half-plane {x : u·(x − p) >= -slack},
// over the directions u just either side of each direction orthogonal to a
// point (where the count changes), plus the axis directions. The slack
// admits the float32 rounding of a computed intersection point.
func tukeyDepth(pts [][]float32, p [2]float64, slack float64) int {
	best := len(pts)
	var dirs []float64
	for _, q := range pts {
		dx, dy := float64(q[0])-p[0], float64(q[1])-p[1]
		if dx == 0 && dy == 0 {
			continue
		}
		a := math.Atan2(dy, dx)
		for _, s := range []float64{math.Pi / 2, -math.Pi / 2} {
			dirs = append(dirs, a+s-1e-7, a+s+1e-7)
		}
	}
	dirs = append(dirs, 0, math.Pi/2, math.Pi, -math.Pi/2)
	for _, a := range dirs {
		ux, uy := math.Cos(a), math.Sin(a)
		c := 0
		for _, q := range pts {
			if ux*(float64(q[0])-p[0])+uy*(float64(q[1])-p[1]) >= -slack {
				c++
			}
		}
		best = min(best, c)
	}
	return best
}

func TestCenterpoint(t *testing.T) {
	// d = 1: the median.
	if got := run(t, &Centerpoint{}, [][]float32{{4}, {-1}, {7}, {2}, {3}}); got[0] != 3 {
		t.Errorf("d = 1: %v, want 3", got)
	}
	// Square corners and center: the median (1, 1), depth 3 >= 2.
	sq := [][]float32{{0, 0}, {2, 0}, {0, 2}, {2, 2}, {1, 1}}
	if got := run(t, &Centerpoint{}, sq); !slices.Equal(got, []float32{1, 1}) {
		t.Errorf("square: %v, want [1 1]", got)
	}
	if d := tukeyDepth(sq, [2]float64{1, 1}, 0); d != 3 {
		t.Errorf("oracle depth of the square's center = %d, want 3", d)
	}
	// Random sets: the output has depth >= ceil(n/3) by the oracle (up to
	// the rounding of an intersection to float32); some sets need the
	// input and intersection candidates (weights tell).
	r := rand.New(rand.NewPCG(40, 40))
	phases := map[string]int{}
	for trial := range 300 {
		n := 3 + trial%12
		xs := make([][]float32, n)
		for i := range xs {
			// Skewed clouds push the coordinate-wise median off-center.
			x := r.NormFloat64()
			xs[i] = []float32{float32(x), float32(3*x + 0.3*r.NormFloat64())}
			if r.IntN(3) == 0 {
				xs[i][1] = float32(r.ExpFloat64() * 4)
			}
		}
		c := &Centerpoint{}
		got := make([]float32, 2)
		if err := c.Aggregate(got, xs); errors.Is(err, ErrNoCenterpoint) {
			phases[fmt.Sprintf("refused n=%d", n)]++ // no float32 point of the depth (see TestCenterpointRoundingNeverShallower)
			continue
		} else if err != nil {
			t.Fatal(err)
		}
		if d := tukeyDepth(xs, [2]float64{float64(got[0]), float64(got[1])}, 0); d < (n+2)/3 {
			t.Fatalf("trial %d, n=%d: %v has depth %d < %d", trial, n, got, d, (n+2)/3)
		}
		w := c.Weights()
		med := make([]float32, 2)
		if err := (&Median{}).Aggregate(med, xs); err != nil {
			t.Fatal(err)
		}
		switch {
		case slices.Contains(w, 1):
			phases["input"]++
		case slices.Equal(got, med):
			phases["median"]++
		default:
			phases["region"]++
		}
		if s := sum(w); math.Abs(s-1) > 1e-12 {
			t.Fatalf("weights sum to %v", s)
		}
	}
	t.Logf("candidates used: %v", phases)
	if phases["input"] == 0 || phases["median"] == 0 || phases["region"] == 0 {
		t.Errorf("the random sets did not exercise the candidates: %v", phases)
	}
}
