package attack

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/trellis-fl/trellis/vec"
)

// TestGaussianNormKeepsTheHonestNorm: the crafted vector's norm is the
// mean norm of the honest payloads (3 and 5 here: 4), it is the Gaussian
// draw b + σ·N(0, 1) rescaled (same stream, same direction), and it needs
// the view.
func TestGaussianNormKeepsTheHonestNorm(t *testing.T) {
	v := &View{Honest: [][]float32{{3, 0, 0, 0}, {0, 0, 3, 4}}}
	own := []float32{1, 2, 3, 4}
	a, err := New("gaussian_norm", Params{Sigma: 10})
	if err != nil {
		t.Fatal(err)
	}
	dst := make([]float32, 4)
	if err := a.Craft(dst, v, own, 0, 1, rand.New(rand.NewPCG(1, 2))); err != nil {
		t.Fatal(err)
	}
	if n := vec.Norm(dst); math.Abs(n-4) > 1e-5 {
		t.Errorf("norm %v, want 4", n)
	}
	g := make([]float32, 4)
	if err := (Gaussian{Sigma: 10}).Craft(g, nil, own, 0, 1, rand.New(rand.NewPCG(1, 2))); err != nil {
		t.Fatal(err)
	}
	gn := vec.Norm(g)
	for i := range g {
		if math.Abs(float64(g[i])*4/gn-float64(dst[i])) > 1e-4 {
			t.Errorf("coordinate %d: %v, want the Gaussian draw rescaled %v", i, dst[i], float64(g[i])*4/gn)
		}
	}
	if err := a.Craft(dst, nil, own, 0, 1, rand.New(rand.NewPCG(1, 2))); !errors.Is(err, ErrNoView) {
		t.Errorf("no view: %v", err)
	}
	if _, err := New("gaussian_norm", Params{}); err == nil {
		t.Error("sigma 0 accepted")
	}
}
