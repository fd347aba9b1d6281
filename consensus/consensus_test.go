package consensus

import (
	"math"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/trellis-fl/trellis/topology"
)

// problem is a 20-node 4-regular instance with x_i(0) uniform on [0, 1).
func problem(t *testing.T, iters int, sd uint64) *Problem {
	g, err := topology.KRegular(20, 4, 7)
	if err != nil {
		panic(err) // valid (n, k): cannot fail
	}
	r := rand.New(rand.NewPCG(sd, 99))
	x := make([]float64, g.N())
	for i := range x {
		x[i] = r.Float64()
	}
	return &Problem{G: g, X0: x, Iters: iters, Seed: sd, Record: true}
}

func TestMetropolisDoublyStochastic(t *testing.T) {
	g, err := topology.SmallWorld(30, 4, 0.3, 1)
	if err != nil {
		t.Fatal(err)
	}
	w, err := Metropolis(g)
	if err != nil {
		t.Fatal(err)
	}
	for i := range g.N() {
		row, col := 0.0, 0.0
		for j := range g.N() {
			row += w.At(i, j)
			col += w.At(j, i)
			if w.At(i, j) != w.At(j, i) || w.At(i, j) < 0 {
				t.Fatalf("w_%d%d = %v, w_%d%d = %v", i, j, w.At(i, j), j, i, w.At(j, i))
			}
		}
		if !(math.Abs(row-1) <= 1e-15) || !(math.Abs(col-1) <= 1e-15) {
			t.Fatalf("row %d sums to %v, column to %v", i, row, col)
		}
	}
}

// exact checks that the run ends within 1e-6 of the float64 mean computed
// here, independently of the trace.
func exact(t *testing.T, name string, p *Problem, tr *Trace) {
	t.Helper()
	s := 0.0
	for _, v := range p.X0 {
		s += v
	}
	avg := s / float64(len(p.X0))
	for i, v := range tr.Final {
		if !(math.Abs(v-avg) <= 1e-6) {
			t.Fatalf("%s: node %d ends at %v, average %v (error %g)", name, i, v, avg, v-avg)
		}
	}
}

func TestPlainConvergesAndLeaks(t *testing.T) {
	p := problem(t, 200, 1)
	tr, err := Plain(p)
	if err != nil {
		t.Fatal(err)
	}
	exact(t, "plain", p, tr)
	for i := range p.G.N() {
		for _, j := range p.G.Out(i) {
			c := Curious{Target: i, Colluders: []int{j}}
			if got := c.RecoverPlain(tr); got != p.X0[i] {
				t.Fatalf("one colluder %d recovers %v for x_%d(0) = %v", j, got, i, p.X0[i])
			}
		}
	}
}

func TestExactMethodsReachAverage(t *testing.T) {
	p := problem(t, 400, 2)
	sd, err := StateDecomposition{}.Run(p)
	if err != nil {
		t.Fatal(err)
	}
	exact(t, "state decomposition", p, sd)
	off, err := Offsets{}.Run(p)
	if err != nil {
		t.Fatal(err)
	}
	exact(t, "offsets", p, off)
	// The offsets really move the states: the first message is not x_i(0).
	c := Curious{Target: 0, Colluders: []int{p.G.Out(0)[0]}}
	if d := math.Abs(c.FirstMessage(off) - p.X0[0]); !(d >= 1e-3) {
		t.Fatalf("offsets: first message within %g of x_0(0)", d)
	}
}

// encrypted is one 100-iteration run of Encrypted, shared by the tests
// (each iteration is ~100 Paillier encryptions and decryptions).
var encrypted = sync.OnceValues(func() (*Problem, *Trace) {
	p := problem(nil, 100, 3)
	tr, err := Encrypted{}.Run(p)
	if err != nil {
		panic(err)
	}
	return p, tr
})

func TestEncryptedReachesAverage(t *testing.T) {
	p, tr := encrypted()
	exact(t, "encrypted", p, tr)
	// What a neighbour reads is a randomly scaled difference, never x_i.
	for _, m := range tr.Msgs {
		if m.Kind == Cipher && !math.IsNaN(m.Value) {
			t.Fatal("a ciphertext under the sender's key was readable")
		}
	}
}

// TestAllNeighboursRecover: when every neighbour of the target colludes,
// the exact methods leak x_i(0) (the condition of [164]'s privacy claim is
// tight); the coalition's estimate is checked against x_i(0).
func TestAllNeighboursRecover(t *testing.T) {
	p := problem(t, 300, 4)
	sdm := StateDecomposition{}
	sd, _ := sdm.Run(p)
	off, _ := Offsets{}.Run(p)
	for _, i := range []int{0, 5, 13} {
		c := Curious{Target: i, Colluders: p.G.Out(i)}
		if got := c.RecoverDecomp(p, sdm, sd); !(math.Abs(got-p.X0[i]) <= 1e-6) {
			t.Errorf("state decomposition: all neighbours recover %v, x_%d(0) = %v", got, i, p.X0[i])
		}
		if got := c.RecoverOffsets(p, off); !(math.Abs(got-p.X0[i]) <= 1e-6) {
			t.Errorf("offsets: all neighbours recover %v, x_%d(0) = %v", got, i, p.X0[i])
		}
	}
	q, he := encrypted()
	em := Encrypted{}
	c := Curious{Target: 3, Colluders: q.G.Out(3)}
	if got := c.RecoverEncrypted(q, em, he); !(math.Abs(got-q.X0[3]) <= 1e-6) {
		t.Errorf("encrypted: all neighbours recover %v, x_3(0) = %v", got, q.X0[3])
	}
}

func TestProblemChecked(t *testing.T) {
	p := problem(t, 5, 1)
	bad := []*Problem{
		{G: p.G, X0: p.X0[:3], Iters: 5},
		{G: p.G, X0: append(append([]float64(nil), p.X0[:19]...), math.NaN()), Iters: 5},
		{G: p.G, X0: p.X0, Iters: -1},
	}
	for k, q := range bad {
		if _, err := Plain(q); err == nil {
			t.Errorf("problem %d accepted", k)
		}
	}
	if _, err := (Offsets{L: -2}).Run(p); err == nil {
		t.Error("offsets over L = -2 accepted")
	}
	if _, err := DPNozari(p, LaplaceDP{Epsilon: 1, Q: 0.2, S: 1.5}); err == nil {
		t.Error("|s − 1| ≥ q accepted")
	}
}

// TestRepeatable: a run is a function of its problem: the same seed gives
// the same messages bit for bit, another seed other ones.
func TestRepeatable(t *testing.T) {
	run := func(sd uint64) *Trace {
		p := problem(t, 20, 8)
		p.Seed = sd
		tr, err := StateDecomposition{}.Run(p)
		if err != nil {
			t.Fatal(err)
		}
		return tr
	}
	a, b, c := run(1), run(1), run(2)
	same := func(x, y *Trace) bool {
		if len(x.Msgs) != len(y.Msgs) {
			return false
		}
		for k := range x.Msgs {
			if x.Msgs[k] != y.Msgs[k] {
				return false
			}
		}
		return true
	}
	if !same(a, b) || same(a, c) {
		t.Fatal("runs are not a function of the seed")
	}
}
