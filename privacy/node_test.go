package privacy

import (
	"math"
	"testing"

	"github.com/trellis-fl/trellis/vec"
)

func TestNodeDP(t *testing.T) {
	n, err := NewNodeDP(2, 1.5, 1e-5, NewSeededSource(1, 2))
	if err != nil {
		t.Fatal(err)
	}
	if n.Epsilon() != 0 || n.Releases() != 0 {
		t.Errorf("before any release: ε = %v, %d releases", n.Epsilon(), n.Releases())
	}
	u := make([]float32, 1000)
	for r := range 20 {
		for i := range u {
			u[i] = 1 // norm √1000 > 2: clipped every round
		}
		rel, err := n.Release(u)
		if err != nil || !rel.Clipped || rel.Scale != 3 || math.Abs(rel.Norm-math.Sqrt(1000)) > 1e-9 {
			t.Fatalf("round %d: %+v, %v", r, rel, err)
		}
	}
	want, _, _ := EpsilonAfter(GaussianEvent{Multiplier: 1.5}, 20, 1e-5, nil)
	if relErr(n.Epsilon(), want) > 1e-12 || n.Releases() != 20 {
		t.Errorf("after 20 rounds: ε = %v (want %v), %d releases", n.Epsilon(), want, n.Releases())
	}
	// The noisy update is the clipped one plus N(0, 3²) per coordinate.
	if s := vec.Norm(u); s < 0.8*3*math.Sqrt(1000) || s > 1.2*3*math.Sqrt(1000) {
		t.Errorf("noisy update norm %v", s)
	}
	for _, c := range [][3]float64{{0, 1, 1e-5}, {1, 0, 1e-5}, {1, 1, 0}, {1, 1, 1}} {
		if _, err := NewNodeDP(c[0], c[1], c[2], NewSeededSource(1, 1)); err == nil {
			t.Errorf("clip %v, z %v, δ %v accepted", c[0], c[1], c[2])
		}
	}
	if _, err := NewNodeDP(1, 1, 1e-5, nil); err == nil {
		t.Error("nil source accepted")
	}
}

func TestDefaultDelta(t *testing.T) {
	for n, want := range map[int]float64{1: 0.1, 9: 0.1, 10: 0.1, 11: 0.01, 600: 1e-3, 1000: 1e-3, 60000: 1e-5} {
		if got := DefaultDelta(n); math.Abs(got-want) > 1e-18 || got > 1/float64(n) || got >= 1 {
			t.Errorf("DefaultDelta(%d) = %v, want %v", n, got, want)
		}
	}
}
