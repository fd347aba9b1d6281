package nn

import (
	"math"
	"testing"
)

func TestDigammaTrigammaClosedForms(t *testing.T) {
	const euler = 0.57721566490153286060
	cases := []struct{ x, psi, psi1 float64 }{
		{1, -euler, math.Pi * math.Pi / 6},
		{0.5, -euler - 2*math.Ln2, math.Pi * math.Pi / 2},
		{2, 1 - euler, math.Pi*math.Pi/6 - 1},
		{4, 1 + 0.5 + 1.0/3 - euler, math.Pi*math.Pi/6 - 1 - 0.25 - 1.0/9},
	}
	for _, c := range cases {
		if d := digamma(c.x); math.Abs(d-c.psi) > 1e-12 {
			t.Errorf("digamma(%v) = %.15g, want %.15g", c.x, d, c.psi)
		}
		if d := trigamma(c.x); math.Abs(d-c.psi1) > 1e-11 {
			t.Errorf("trigamma(%v) = %.15g, want %.15g", c.x, d, c.psi1)
		}
	}
	// Derivative chain lnΓ → ψ → ψ' by central differences over a range.
	for _, x := range []float64{0.05, 0.3, 1.7, 5.9, 6.1, 42, 1e3} {
		h := 1e-5 * x
		dl := (lgamma(x+h) - lgamma(x-h)) / (2 * h)
		if math.Abs(dl-digamma(x)) > 1e-6*math.Max(1, math.Abs(dl)) {
			t.Errorf("d lnΓ/dx at %v = %v, digamma = %v", x, dl, digamma(x))
		}
		dp := (digamma(x+h) - digamma(x-h)) / (2 * h)
		if math.Abs(dp-trigamma(x)) > 1e-5*math.Max(1, math.Abs(dp)) {
			t.Errorf("d ψ/dx at %v = %v, trigamma = %v", x, dp, trigamma(x))
		}
	}
}

func TestSoftplusSigmoid(t *testing.T) {
	for _, z := range []float64{-50, -3, 0, 2, 29, 31, 80} {
		want := math.Log1p(math.Exp(z))
		if math.IsInf(want, 1) || z > 30 {
			want = z + math.Log1p(math.Exp(-z))
		}
		if got := softplus(z); math.Abs(got-want) > 1e-12*math.Max(1, math.Abs(want)) {
			t.Errorf("softplus(%v) = %v, want %v", z, got, want)
		}
	}
	if sigmoid(0) != 0.5 {
		t.Errorf("sigmoid(0) = %v", sigmoid(0))
	}
}

func TestEvidentialHandValues(t *testing.T) {
	// Logits chosen so alpha = softplus(z)+1 is exact: z → −∞ gives alpha 1.
	// With z = [0, 0] (K = 2), alpha = 1 + ln 2 each, p = 0.5, S = 2+2ln2.
	h := &Evidential{}
	z := []float32{0, 0}
	loss, err := h.Loss(z, []int{0}, 1, 2, nil)
	if err != nil {
		t.Fatal(err)
	}
	S := 2 + 2*math.Ln2
	want := 0.25 + 0.25 + 2*0.25/(S+1)
	if math.Abs(loss-want) > 1e-9 {
		t.Errorf("evidential loss = %v, want %v", loss, want)
	}
	u := make([]float32, 1)
	h.Vacuity(z, u, 1, 2)
	if math.Abs(float64(u[0])-2/S) > 1e-6 {
		t.Errorf("vacuity = %v, want %v", u[0], 2/S)
	}
	// KL(Dir(1) || Dir(1)) = 0: a confident correct sample has alpha~ = 1.
	h.Lambda = 1
	h.NoVariance = true
	z = []float32{30, -200} // alpha ≈ [31, 1]
	loss, _ = h.Loss(z, []int{0}, 1, 2, nil)
	p0 := 31.0 / 32
	if want := 2 * (1 - p0) * (1 - p0); math.Abs(loss-want) > 1e-6 {
		t.Errorf("confident sample loss = %v, want %v (KL term must vanish)", loss, want)
	}
	if AnnealedLambda(0, 10, 0.1) != 0 || AnnealedLambda(5, 10, 0.1) != 0.1 || math.Abs(AnnealedLambda(2, 10, 0.1)-0.04) > 1e-15 {
		t.Errorf("annealing schedule wrong: %v %v %v", AnnealedLambda(0, 10, 0.1), AnnealedLambda(2, 10, 0.1), AnnealedLambda(5, 10, 0.1))
	}
}
