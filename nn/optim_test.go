package nn

import (
	"math"
	"strings"
	"testing"
)

func stepTwice(t *testing.T, s OptimizerSpec, g1, g2 float32) float64 {
	t.Helper()
	o, err := NewOptimizer(s, 1)
	if err != nil {
		t.Fatal(err)
	}
	w := []float32{1}
	o.Step(w, []float32{g1})
	o.Step(w, []float32{g2})
	return float64(w[0])
}

func TestOptimizersAgainstHandValues(t *testing.T) {
	// Hand computations, w0 = 1, lr = 0.1, gradients 0.5 then −0.25.
	// SGD momentum 0.9: v1 = 0.5, w1 = 0.95; v2 = 0.45 − 0.25 = 0.2, w2 = 0.93.
	// Nesterov: v1 = 0.5, step 0.5 + 0.45 = 0.95, w1 = 0.905;
	//   v2 = 0.2, step −0.25 + 0.18 = −0.07, w2 = 0.912.
	// SGD weight decay 0.1: w1 = 1 − 0.1·0.6 = 0.94; w2 = 0.94 − 0.1·(−0.25 + 0.094) = 0.9556.
	// Adam: step 1 moves by lr·g/|g| (bias correction): w1 = 0.9;
	//   m2 = 0.045 − 0.025 = 0.02, v2 = 0.999·0.00025 + 0.001·0.0625,
	//   w2 = 0.9 − 0.1·(m2/0.19)/sqrt(v2/(1 − 0.999²)).
	// AdamW wd 0.1: w ← w(1 − 0.01) before each Adam step.
	m2, v2 := 0.02, 0.999*0.00025+0.001*0.0625
	adam2 := 0.9 - 0.1*(m2/0.19)/math.Sqrt(v2/(1-0.999*0.999))
	w1 := 0.99 - 0.1
	adamw2 := w1*0.99 - 0.1*(m2/0.19)/math.Sqrt(v2/(1-0.999*0.999))
	cases := []struct {
		name string
		spec OptimizerSpec
		want float64
	}{
		{"sgd", OptimizerSpec{Name: "sgd", LR: 0.1}, 1 - 0.05 + 0.025},
		{"sgd-momentum", OptimizerSpec{Name: "sgd", LR: 0.1, Momentum: 0.9}, 0.93},
		{"sgd-nesterov", OptimizerSpec{Name: "sgd", LR: 0.1, Momentum: 0.9, Nesterov: true}, 0.912},
		{"sgd-weight-decay", OptimizerSpec{Name: "sgd", LR: 0.1, WeightDecay: 0.1}, 0.9556},
		{"adam", OptimizerSpec{Name: "adam", LR: 0.1}, adam2},
		{"adamw", OptimizerSpec{Name: "adamw", LR: 0.1, WeightDecay: 0.1}, adamw2},
	}
	for _, c := range cases {
		if got := stepTwice(t, c.spec, 0.5, -0.25); math.Abs(got-c.want) > 2e-6 {
			t.Errorf("%s: w2 = %.7f, want %.7f", c.name, got, c.want)
		}
	}
}

func TestOptimizerStateAndErrors(t *testing.T) {
	for name, want := range map[string]int{"sgd": 0, "adam": 20} {
		o, _ := NewOptimizer(OptimizerSpec{Name: name, LR: 1}, 10)
		if o.StateFloats() != want {
			t.Errorf("%s state = %d floats, want %d", name, o.StateFloats(), want)
		}
	}
	for _, s := range []OptimizerSpec{
		{Name: "sgd", LR: 0},
		{Name: "sgd", LR: math.NaN()},
		{Name: "sgd", LR: 0.1, Momentum: 1},
		{Name: "sgd", LR: 0.1, Nesterov: true},
		{Name: "adam", LR: 0.1, Beta1: 1.5},
		{Name: "rmsprop", LR: 0.1},
	} {
		if _, err := NewOptimizer(s, 1); err == nil {
			t.Errorf("%+v accepted", s)
		}
	}
	_, err := NewOptimizer(OptimizerSpec{Name: "adagrad", LR: 1}, 1)
	if err == nil || !strings.Contains(err.Error(), "adagrad") || !strings.Contains(err.Error(), "adamw") {
		t.Errorf("unknown optimizer error should name it and the choices: %v", err)
	}
}

func TestClipGlobalNorm(t *testing.T) {
	g := []float32{3, 4}
	if n := ClipGlobalNorm(g, 1); n != 5 || math.Abs(float64(g[0])-0.6) > 1e-7 || math.Abs(float64(g[1])-0.8) > 1e-7 {
		t.Errorf("clip to 1: norm %v, g %v", n, g)
	}
	g = []float32{0.3, 0.4}
	ClipGlobalNorm(g, 1)
	if g[0] != 0.3 || g[1] != 0.4 {
		t.Errorf("a gradient under the bound changed: %v", g)
	}
}

// TestSGDVectorPathMatchesFormula runs SGD over 37 parameters (vector
// blocks and a scalar tail) for three steps and compares every entry with
// the formulas evaluated in float64.
func TestSGDVectorPathMatchesFormula(t *testing.T) {
	const n = 37
	for _, s := range []OptimizerSpec{
		{Name: "sgd", LR: 0.1, WeightDecay: 0.01},
		{Name: "sgd", LR: 0.1, Momentum: 0.9, WeightDecay: 0.01},
		{Name: "sgd", LR: 0.1, Momentum: 0.9, Nesterov: true, WeightDecay: 0.01},
	} {
		o, _ := NewOptimizer(s, n)
		w := make([]float32, n)
		rw, rv := make([]float64, n), make([]float64, n)
		for i := range w {
			w[i] = float32(i%7) - 3
			rw[i] = float64(w[i])
		}
		for step := 0; step < 3; step++ {
			g := make([]float32, n)
			for i := range g {
				g[i] = float32((i*step)%5) - 2
				gi := float64(g[i]) + s.WeightDecay*rw[i]
				if s.Momentum == 0 {
					rw[i] -= s.LR * gi
					continue
				}
				rv[i] = s.Momentum*rv[i] + gi
				if s.Nesterov {
					gi += s.Momentum * rv[i]
				} else {
					gi = rv[i]
				}
				rw[i] -= s.LR * gi
			}
			o.Step(w, g)
		}
		for i := range w {
			if math.Abs(float64(w[i])-rw[i]) > 1e-5*(1+math.Abs(rw[i])) {
				t.Fatalf("%+v: w[%d] = %v, formula gives %v", s, i, w[i], rw[i])
			}
		}
	}
}

// TestMomentsFlushSubnormals: with zero gradients a velocity (and Adam's
// moments) decays into the subnormal range, where it is flushed to 0, in
// the vector blocks and the scalar tail alike (37 entries), while the
// weights stay exactly what the unflushed update gives (w − lr·v rounds to
// w for such v).
func TestMomentsFlushSubnormals(t *testing.T) {
	const n = 37
	for _, s := range []OptimizerSpec{
		{Name: "sgd", LR: 0.1, Momentum: 0.9},
		{Name: "sgd", LR: 0.1, Momentum: 0.9, Nesterov: true},
		{Name: "adam", LR: 0.1},
	} {
		o, _ := NewOptimizer(s, n)
		w, g := make([]float32, n), make([]float32, n)
		for i := range w {
			w[i], g[i] = 0.5+float32(i), 1e-3
		}
		o.Step(w, g)
		clear(g)
		ref := append([]float32(nil), w...)
		steps := 2000 // 0.9²⁰⁰⁰·1e-3 is far below 2⁻¹⁴⁹
		if s.Name == "adam" {
			steps = 200_000 // v decays by β₂ = 0.999
		}
		for range steps {
			o.Step(w, g)
		}
		var state []float32
		switch o := o.(type) {
		case *SGD:
			state = o.v
		case *Adam:
			state = append(append(state, o.m...), o.v...)
		}
		for i, x := range state {
			if x != 0 {
				t.Fatalf("%+v: moment %d is %g after %d zero gradients, want 0", s, i, x, steps)
			}
		}
		if s.Name == "adam" {
			continue // Adam keeps stepping with m/√v̂ while m is normal
		}
		// The velocity after the first step decays to 0; every weight must
		// have moved only while it was normal, the same as without flushing.
		for i := range w {
			v := float64(1e-3)
			want := float64(ref[i])
			for range 2000 {
				v *= 0.9
				if s.Nesterov {
					want -= 0.1 * 0.9 * v
				} else {
					want -= 0.1 * v
				}
			}
			if math.Abs(float64(w[i])-want) > 1e-5*math.Abs(want) {
				t.Fatalf("%+v: w[%d] = %v, unflushed formula gives %v", s, i, w[i], want)
			}
		}
	}
}

func TestFlushDenormal(t *testing.T) {
	for _, c := range []struct{ in, want float32 }{
		{math.SmallestNonzeroFloat32, 0}, {-math.SmallestNonzeroFloat32, 0},
		{math.Float32frombits(0x007fffff), 0}, {math.Float32frombits(0x00800000), math.Float32frombits(0x00800000)},
		{-math.Float32frombits(0x00800000), -math.Float32frombits(0x00800000)}, {1, 1}, {0, 0},
		{float32(math.Inf(-1)), float32(math.Inf(-1))},
	} {
		if got := flushDenormal(c.in); got != c.want {
			t.Errorf("flushDenormal(%g) = %g, want %g", c.in, got, c.want)
		}
	}
}
