package task

import (
	"math"
	"strings"
	"testing"

	"github.com/trellis-fl/trellis/topology"
)

// mean is the float64 mean of x over nodes, coordinate c.
func mean(x [][]float64, c int) float64 {
	s := 0.0
	for i := range x {
		s += x[i][c]
	}
	return s / float64(len(x))
}

// TestExactMethodsReachTheMean: every method without noise ends at the
// float64 mean of the initial values (computed here), on every
// coordinate, and the records' MSE is that of the final estimates.
func TestExactMethodsReachTheMean(t *testing.T) {
	g, err := topology.Complete(5)
	if err != nil {
		t.Fatal(err)
	}
	x0, err := InitialValues(5, 3, 7, Init{Dist: "uniform", A: -2, B: 3})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{"plain", "state_decomposition", "offsets", "paillier", "push_sum", "push_sum_decomposition"} {
		iters, x := 200, x0
		if m == "paillier" { // keys and encryptions: one coordinate is enough
			iters, x = 30, [][]float64{x0[0][:1], x0[1][:1], x0[2][:1], x0[3][:1], x0[4][:1]}
		}
		res, err := Execute(Spec{G: g, Method: m, X0: x, Iters: iters, Seed: 3})
		if err != nil {
			t.Fatalf("%s: %v", m, err)
		}
		dim := len(x[0])
		mse := 0.0
		for c := range dim {
			avg := mean(x, c)
			if res.Avg[c] != avg {
				t.Errorf("%s: x̄[%d] = %v, the mean is %v", m, c, res.Avg[c], avg)
			}
			for i := range 5 {
				d := res.Final[i][c] - avg
				mse += d * d / float64(5*dim)
			}
		}
		last := res.Records[len(res.Records)-1]
		if mse > 1e-12 || last.MSE > 1e-12 || math.Abs(last.MSE-mse) > 1e-18 {
			t.Errorf("%s: final MSE %g (records say %g), want ≤ 1e-12", m, mse, last.MSE)
		}
		t.Logf("%s: MSE %g", m, mse)
	}
}

// TestInitialValues: uniform draws lie in [lo, hi), differ between nodes
// and repeat with the seed.
func TestInitialValues(t *testing.T) {
	a, _ := InitialValues(50, 4, 1, Init{Dist: "uniform", A: 2, B: 5})
	b, _ := InitialValues(50, 4, 1, Init{Dist: "uniform", A: 2, B: 5})
	for i := range a {
		for c := range a[i] {
			if a[i][c] < 2 || a[i][c] >= 5 || a[i][c] != b[i][c] {
				t.Fatalf("x_%d[%d] = %v (again %v), want in [2, 5) and repeated", i, c, a[i][c], b[i][c])
			}
		}
	}
	if a[0][0] == a[1][0] {
		t.Error("two nodes drew the same value")
	}
	if _, err := InitialValues(3, 1, 1, Init{Dist: "cauchy"}); err == nil {
		t.Error("an unknown distribution was accepted")
	}
}

// TestRefusals: a directed or disconnected graph, too many colluders and
// an unknown method are refused with what is wrong.
func TestRefusals(t *testing.T) {
	x0, _ := InitialValues(4, 1, 1, Init{Dist: "uniform", A: 0, B: 1})
	ring, _ := topology.Ring(4)
	two, err := topology.FromEdges(4, []topology.Edge{{From: 0, To: 1}, {From: 2, To: 3}}, false)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		s    Spec
		want string
	}{
		{Spec{G: two, Method: "plain", X0: x0, Iters: 5}, "not connected"},
		{Spec{G: ring, Method: "plain", X0: x0, Iters: 5, Colluders: 3}, "has 2 neighbours"},
		{Spec{G: ring, Method: "gossip2", X0: x0, Iters: 5}, "want one of"},
	} {
		if _, err := Execute(c.s); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one saying %q", c.s.Method, err, c.want)
		}
	}
}

// TestCuriousPlain: under plain consensus one curious neighbour reads
// x_i(0) off the first message, so the reconstruction error is exactly 0;
// under a DP method it is the first noise draw, not 0.
func TestCuriousPlain(t *testing.T) {
	ring, _ := topology.Ring(6)
	x0, _ := InitialValues(6, 2, 4, Init{Dist: "normal", A: 1, B: 2})
	res, err := Execute(Spec{G: ring, Method: "plain", X0: x0, Iters: 3, Colluders: 1, Target: 2})
	if err != nil || res.ReconRMSE == nil || *res.ReconRMSE != 0 {
		t.Fatalf("plain: %v, %v", res.ReconRMSE, err)
	}
	res, err = Execute(Spec{G: ring, Method: "dp_laplace_nozari", Params: Params{Epsilon: 1}, X0: x0, Iters: 3, Colluders: 2, Target: 2})
	if err != nil || res.ReconRMSE == nil || !(*res.ReconRMSE > 1e-3) {
		t.Fatalf("dp_laplace_nozari: %v, %v", res.ReconRMSE, err)
	}
}

// TestDynamicMethodsTrack: on converging signals every dynamic method
// without noise ends at the average of where the signals settle (computed
// here from the signals, as r_i(k) for a k past any visible change); the
// first reference is each node's drawn value; on ramps a tracking error
// stays; the DP method's error stays above the exact ones'; one colluder
// reads r_i(0) off plain dynamic consensus's first message exactly.
func TestDynamicMethodsTrack(t *testing.T) {
	g, err := topology.KRegular(12, 4, 1)
	if err != nil {
		t.Fatal(err)
	}
	in := Init{Dist: "uniform", A: 0, B: 1}
	x0, err := InitialValues(12, 2, 5, in)
	if err != nil {
		t.Fatal(err)
	}
	for c := range 2 {
		ref, err := Signals(x0, c, 5, in, Params{})
		if err != nil {
			t.Fatal(err)
		}
		for i := range x0 {
			if ref(i, 0) != x0[i][c] {
				t.Fatalf("r_%d(0) = %v, the drawn value is %v", i, ref(i, 0), x0[i][c])
			}
		}
	}
	for _, m := range []string{"dynamic_plain", "dynamic_state_decomposition"} {
		res, err := Execute(Spec{G: g, Method: m, X0: x0, Init: in, Iters: 400, Seed: 5})
		if err != nil {
			t.Fatalf("%s: %v", m, err)
		}
		for c := range 2 {
			ref, _ := Signals(x0, c, 5, in, Params{})
			settled := 0.0
			for i := range x0 {
				settled += ref(i, 10_000) / float64(len(x0))
			}
			for i := range x0 {
				if d := math.Abs(res.Final[i][c] - settled); d > 1e-6 {
					t.Errorf("%s: node %d coordinate %d ends %g from the settled average", m, i, c, d)
				}
			}
		}
		ramp, err := Execute(Spec{G: g, Method: m, X0: x0, Init: in, Iters: 400, Seed: 5, Params: Params{Signal: "ramp"}})
		if err != nil {
			t.Fatalf("%s ramp: %v", m, err)
		}
		if last := ramp.Records[399].MaxAbsErr; !(last > 1e-4 && last < 1) {
			t.Errorf("%s: ramp tracking error %g, want a lag that stays, bounded", m, last)
		}
	}
	dp, err := Execute(Spec{G: g, Method: "dynamic_dp_laplace", X0: x0, Init: in, Iters: 100, Seed: 5, Params: Params{Epsilon: 1, Sensitivity: 1}})
	if err != nil {
		t.Fatal(err)
	}
	if dp.Records[99].MSE < 1e-3 {
		t.Errorf("dynamic DP at ε = 1: final MSE %g, want the noise to show", dp.Records[99].MSE)
	}
	one, err := Execute(Spec{G: g, Method: "dynamic_plain", X0: x0, Init: in, Iters: 10, Seed: 5, Colluders: 1, Target: 3})
	if err != nil {
		t.Fatal(err)
	}
	if one.ReconRMSE == nil || *one.ReconRMSE != 0 {
		t.Errorf("plain dynamic consensus, one colluder: reconstruction error %v, want exactly 0", one.ReconRMSE)
	}
	if _, err := Execute(Spec{G: g, Method: "dynamic_plain", X0: x0, Init: in, Iters: 10, Params: Params{Signal: "sine"}}); err == nil || !strings.Contains(err.Error(), "sine") {
		t.Errorf("an unknown signal: %v", err)
	}
}
