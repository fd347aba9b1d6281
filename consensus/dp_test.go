package consensus

import (
	"math"
	"testing"

	"github.com/trellis-fl/trellis/topology"
)

// meanVar returns the sample mean and variance of xs.
func meanVar(xs []float64) (float64, float64) {
	m := 0.0
	for _, x := range xs {
		m += x
	}
	m /= float64(len(xs))
	v := 0.0
	for _, x := range xs {
		v += (x - m) * (x - m)
	}
	return m, v / float64(len(xs)-1)
}

func TestLaplaceInversion(t *testing.T) {
	// E|X| = b and Var X = 2b² for X ~ Lap(0, b).
	p := &Problem{Seed: 3}
	const n, b = 200000, 1.5
	xs := make([]float64, n)
	abs := 0.0
	eta := make([]float64, 1)
	for k := range n {
		p.Seed = uint64(k)
		LaplaceDP{Epsilon: 1, Q: 0.5}.noise(p, b, 0, eta)
		xs[k] = eta[0]
		abs += math.Abs(eta[0])
	}
	m, v := meanVar(xs)
	if !(math.Abs(m) <= 0.02) || !(math.Abs(abs/n-b) <= 0.02) || !(math.Abs(v/(2*b*b)-1) <= 0.03) {
		t.Fatalf("mean %v, E|X| %v (want %v), var %v (want %v)", m, abs/n, b, v, 2*b*b)
	}
}

// TestNozariUnbiased: over seeds, the agreed value of ref. [112]'s
// algorithm has mean x̄ and the variance 2 s² c² (1 − q^{2T}) / (n (1 − q²))
// of its closed form, and the nodes agree (the spread around their own
// mean vanishes).
func TestNozariUnbiased(t *testing.T) {
	const seeds = 400
	for _, d := range []LaplaceDP{{Epsilon: 1, Q: 0.5}, {Epsilon: 0.5, Q: 0.8, S: 1.3}} {
		p := problem(t, 120, 0)
		p.Record = false
		var final []float64
		for sd := range seeds {
			p.Seed = uint64(sd)
			tr, err := DPNozari(p, d)
			if err != nil {
				t.Fatal(err)
			}
			m, v := meanVar(tr.Final)
			if !(v <= 1e-18) {
				t.Fatalf("seed %d: nodes still disagree (variance %g)", sd, v)
			}
			final = append(final, m-tr.Avg)
		}
		want, err := d.ConvergenceVar(p.G.N(), p.Iters)
		if err != nil {
			t.Fatal(err)
		}
		m, v := meanVar(final)
		if se := math.Sqrt(want / seeds); !(math.Abs(m) <= 4*se) {
			t.Errorf("%+v: mean offset %v, more than 4 standard errors (%v)", d, m, se)
		}
		if !(math.Abs(v/want-1) <= 0.25) {
			t.Errorf("%+v: variance %v, closed form %v", d, v, want)
		}
	}
}

// TestHuangIsNozariOnRegular: on a d-regular graph ref. [111]'s equal
// weights are I − L/(d+1), which is ref. [112]'s update with s = 1 and
// h = 1/(d+1): the runs coincide. On a star they do not: ref. [111]'s
// row-stochastic weights agree on the (d_i + 1)-weighted mean.
func TestHuangIsNozariOnRegular(t *testing.T) {
	p := problem(t, 60, 9)
	d := LaplaceDP{Epsilon: 1}
	a, err := DPHuang(p, d)
	if err != nil {
		t.Fatal(err)
	}
	b, err := DPNozari(p, d)
	if err != nil {
		t.Fatal(err)
	}
	for i := range a.Final {
		if !(math.Abs(a.Final[i]-b.Final[i]) <= 1e-12) {
			t.Fatalf("node %d: %v against %v", i, a.Final[i], b.Final[i])
		}
	}

	g, err := topology.Star(10, 0)
	if err != nil {
		t.Fatal(err)
	}
	x := make([]float64, 10)
	x[0] = 1 // x̄ = 0.1; the (d_i+1)-weighted mean is 10/(10 + 9·2) = 10/28
	s := &Problem{G: g, X0: x, Iters: 200}
	var hm, nm float64
	const seeds = 200
	for sd := range seeds {
		s.Seed = uint64(sd)
		h, err := DPHuang(s, LaplaceDP{Epsilon: 10})
		if err != nil {
			t.Fatal(err)
		}
		nz, err := DPNozari(s, LaplaceDP{Epsilon: 10})
		if err != nil {
			t.Fatal(err)
		}
		hm += h.Final[0] / seeds
		nm += nz.Final[0] / seeds
	}
	if !(math.Abs(hm-10.0/28) <= 0.02) || !(math.Abs(nm-0.1) <= 0.02) {
		t.Fatalf("star: [111] mean %v (want 10/28), [112] mean %v (want 0.1)", hm, nm)
	}
}

// TestPairFactor against two hand counts: with one iteration v sees only
// x_w(0) of its neighbours, so the factor is d/(n − 1) on a d-regular
// graph; on the complete graph W = J/n, and two iterations add n − 1
// messages per receiver each carrying 1/n of every x_u: 1 + (n − 1)/n.
func TestPairFactor(t *testing.T) {
	p := problem(t, 1, 1)
	f, err := GaussianGossip{Epsilon: 1}.PairFactor(p)
	if err != nil {
		t.Fatal(err)
	}
	if want := 4.0 / 19; !(math.Abs(f-want) <= 1e-15) {
		t.Fatalf("one iteration: %v, want %v", f, want)
	}
	g, err := topology.Complete(8)
	if err != nil {
		t.Fatal(err)
	}
	c := &Problem{G: g, X0: make([]float64, 8), Iters: 2}
	f, err = GaussianGossip{Epsilon: 1}.PairFactor(c)
	if err != nil {
		t.Fatal(err)
	}
	if want := 1 + 7.0/8; !(math.Abs(f-want) <= 1e-12) {
		t.Fatalf("complete graph, two iterations: %v, want %v", f, want)
	}
}

// TestGaussianGossip: the agreed value is x̄ + mean(η), so over seeds the
// final mean squared error is σ²/n (plus a disagreement that T = 60
// iterations make negligible), and unbiased; Alg. 2 alike.
func TestGaussianGossip(t *testing.T) {
	const seeds = 300
	for _, rnd := range []bool{false, true} {
		p := problem(t, 60, 0)
		p.Record = false
		gg := GaussianGossip{Epsilon: 1, Randomized: rnd}
		var mse, bias []float64
		for sd := range seeds {
			p.Seed = uint64(sd)
			sigma := 0.7
			tr, err := gg.RunSigma(p, sigma)
			if err != nil {
				t.Fatal(err)
			}
			mse = append(mse, tr.FinalMSE()/(sigma*sigma/float64(p.G.N())))
			m, _ := meanVar(tr.Final)
			bias = append(bias, m-tr.Avg)
		}
		mm, _ := meanVar(mse)
		bm, _ := meanVar(bias)
		if !(math.Abs(mm-1) <= 0.2) || !(math.Abs(bm) <= 4*0.7/math.Sqrt(20*seeds)) {
			t.Errorf("randomized=%v: MSE/(σ²/n) = %v, bias %v", rnd, mm, bm)
		}
	}
	// σ follows the calibration: mean pairwise ε = α Δ² F / (2σ²).
	p := problem(t, 30, 0)
	gg := GaussianGossip{Epsilon: 0.5}
	sigma, _ := gg.Sigma(p)
	f, _ := gg.PairFactor(p)
	if eps := 2 * f / (2 * sigma * sigma); !(math.Abs(eps-0.5) <= 1e-12) {
		t.Fatalf("σ = %v gives ε = %v", sigma, eps)
	}
}

// TestLaplaceCoupling checks the ε of Scale by the coupling it rests on:
// x'_i(0) = x_i(0) + δ with η'_i(k) = η_i(k) − (1 − s)^k δ gives every
// message of every node the same value, and the log-ratio of the two noise
// paths' Laplace densities, Σ_k |(1 − s)^k δ| / (c q^k), is ε.
func TestLaplaceCoupling(t *testing.T) {
	for _, d := range []LaplaceDP{{Epsilon: 1, Q: 0.5}, {Epsilon: 0.3, Q: 0.8, S: 1.3}, {Epsilon: 2, Q: 0.6, S: 0.7}} {
		p := problem(t, 80, 11)
		const i, delta = 4, 1.0 // δ = the adjacency bound
		a, err := DPNozari(p, d)
		if err != nil {
			t.Fatal(err)
		}
		q := *p
		q.X0 = append([]float64(nil), p.X0...)
		q.X0[i] += delta
		s := d.s()
		d2 := d
		d2.Shift = func(j, k int) float64 {
			if j != i {
				return 0
			}
			return -math.Pow(1-s, float64(k)) * delta
		}
		b, err := DPNozari(&q, d2)
		if err != nil {
			t.Fatal(err)
		}
		for k := range a.Msgs {
			if !(math.Abs(a.Msgs[k].Value-b.Msgs[k].Value) <= 1e-12) {
				t.Fatalf("%+v: message %d differs: %v against %v", d, k, a.Msgs[k].Value, b.Msgs[k].Value)
			}
		}
		c, err := d.Scale()
		if err != nil {
			t.Fatal(err)
		}
		loss := 0.0
		for k := range 2000 { // the series, to well past float64 precision
			loss += delta * math.Pow(math.Abs(1-s)/d.q(), float64(k)) / c
		}
		if !(math.Abs(loss-d.Epsilon) <= 1e-9) {
			t.Fatalf("%+v: the coupling's loss is %v, want ε = %v", d, loss, d.Epsilon)
		}
	}
}

// TestGossipOrderInN: with T fixed, the calibrated error σ²/n of ref.
// [115] falls as n^-2 (the survey's 1/(n² ε)) once the graph mixes: the
// slope between n = 20 and n = 80 on 4-regular graphs is checked to be
// within 0.15 of −2.
func TestGossipOrderInN(t *testing.T) {
	pred := func(n int) float64 {
		g, err := topology.KRegular(n, 4, 1)
		if err != nil {
			t.Fatal(err)
		}
		p := &Problem{G: g, X0: make([]float64, n), Iters: 40}
		s, err := GaussianGossip{Epsilon: 1}.Sigma(p)
		if err != nil {
			t.Fatal(err)
		}
		return s * s / float64(n)
	}
	slope := math.Log(pred(80)/pred(20)) / math.Log(4)
	if !(math.Abs(slope+2) <= 0.15) {
		t.Fatalf("σ²/n ∝ n^%.3f, want about n^-2", slope)
	}
}
