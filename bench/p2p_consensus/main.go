// Command p2p_consensus measures the survey's peer-to-peer privacy methods
// for average consensus (package consensus) and prints the tables of
// docs/results/p2p-privacy.md:
//
//  1. the DP methods' final error, the mean squared distance of the nodes'
//     states to the true average averaged over seeds, against n and ε, with
//     the fitted log-log exponents beside the survey's stated orders
//     (Table 3);
//
//  2. the curious-neighbour reconstruction error per method and coalition
//     size (1, 2, all neighbours of the target);
//
//  3. for the dynamic (time-varying references) and directed (push-sum)
//     methods: the exact methods' error against the iteration, the DP
//     dynamic method's tracking error against ε beside its closed form, and
//     their curious-neighbour table (dynamic.go).
//
//     go run ./bench/p2p_consensus [-seeds 20] [-he-seeds 3] [-only static|dynamic]
//
// Graphs are random 4-regular (topology.KRegular, graph seed 1), or for
// push-sum a random strongly connected digraph (consensus.Digraph, graph
// seed 1); initial values uniform on [0, 1) from the run's seed.
package main

import (
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"

	"github.com/trellis-fl/trellis/consensus"
	"github.com/trellis-fl/trellis/topology"
)

const degree = 4

func instance(n, iters int, sd uint64, record bool) *consensus.Problem {
	g, err := topology.KRegular(n, degree, 1)
	if err != nil {
		fail(err)
	}
	r := rand.New(rand.NewPCG(sd, 0x5eed))
	x := make([]float64, n)
	for i := range x {
		x[i] = r.Float64()
	}
	return &consensus.Problem{G: g, X0: x, Iters: iters, Seed: sd, Record: record}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "p2p_consensus:", err)
	os.Exit(1)
}

// dpMethod runs one DP method at privacy level eps.
type dpMethod struct {
	name, survey string // the survey's stated order, as a mean-squared-error exponent pair
	wantN, wantE float64
	iters        int
	run          func(p *consensus.Problem, eps float64) (*consensus.Trace, error)
	// pred is the closed-form expected final MSE: ConvergenceVar for the
	// Laplace methods, σ²/n for the gossip (its disagreement after T
	// iterations left out).
	pred func(p *consensus.Problem, eps float64) float64
}

func laplacePred(p *consensus.Problem, eps float64) float64 {
	v, err := consensus.LaplaceDP{Epsilon: eps}.ConvergenceVar(p.G.N(), p.Iters)
	if err != nil {
		fail(err)
	}
	return v
}

func gossipPred(rnd bool) func(p *consensus.Problem, eps float64) float64 {
	return func(p *consensus.Problem, eps float64) float64 {
		s, err := consensus.GaussianGossip{Epsilon: eps, Randomized: rnd}.Sigma(p)
		if err != nil {
			fail(err)
		}
		return s * s / float64(p.G.N())
	}
}

var dpMethods = []dpMethod{
	{"[111] Laplace, decaying (q = 0.5)", "O(1/(√n ε)) accuracy → MSE n^-1 ε^-2", -1, -2, 200,
		func(p *consensus.Problem, eps float64) (*consensus.Trace, error) {
			return consensus.DPHuang(p, consensus.LaplaceDP{Epsilon: eps})
		}, laplacePred},
	{"[112] Laplace, decaying (q = 0.5, s = 1)", "O(1/(√n ε)) accuracy → MSE n^-1 ε^-2", -1, -2, 200,
		func(p *consensus.Problem, eps float64) (*consensus.Trace, error) {
			return consensus.DPNozari(p, consensus.LaplaceDP{Epsilon: eps})
		}, laplacePred},
	{"[115] Alg. 1, Gaussian, sync. gossip (T = 50)", "O(1/(n² ε)) consensus error → MSE n^-2 ε^-1", -2, -1, 50,
		func(p *consensus.Problem, eps float64) (*consensus.Trace, error) {
			return consensus.GaussianGossip{Epsilon: eps}.Run(p)
		}, gossipPred(false)},
	{"[115] Alg. 2, Gaussian, random gossip (T = 50)", "O(1/(n² ε)) consensus error → MSE n^-2 ε^-1", -2, -1, 50,
		func(p *consensus.Problem, eps float64) (*consensus.Trace, error) {
			return consensus.GaussianGossip{Epsilon: eps, Randomized: true}.Run(p)
		}, gossipPred(true)},
}

// slope is the least-squares slope of log y against log x.
func slope(x, y []float64) float64 {
	var mx, my float64
	for i := range x {
		mx += math.Log(x[i])
		my += math.Log(y[i])
	}
	mx /= float64(len(x))
	my /= float64(len(x))
	var sxy, sxx float64
	for i := range x {
		dx := math.Log(x[i]) - mx
		sxy += dx * (math.Log(y[i]) - my)
		sxx += dx * dx
	}
	return sxy / sxx
}

func dpTable(seeds int) {
	ns := []int{10, 20, 50, 100}
	es := []float64{0.1, 1, 10}
	fmt.Printf("### DP methods: final mean squared error to the true average (mean of %d seeds)\n\n", seeds)
	for _, m := range dpMethods {
		fmt.Printf("**%s**\n\n| n | ε = 0.1 | ε = 1 (± s.e.) | ε = 10 | closed form, ε = 1 |\n|---|---|---|---|---|\n", m.name)
		mse := make([][]float64, len(ns))
		pred := make([]float64, len(ns))
		for a, n := range ns {
			mse[a] = make([]float64, len(es))
			fmt.Printf("| %d |", n)
			for b, eps := range es {
				s, s2 := 0.0, 0.0
				for sd := range seeds {
					tr, err := m.run(instance(n, m.iters, uint64(sd), false), eps)
					if err != nil {
						fail(err)
					}
					s += tr.FinalMSE()
					s2 += tr.FinalMSE() * tr.FinalMSE()
				}
				mse[a][b] = s / float64(seeds)
				if eps == 1 { // the standard error of the mean over seeds
					se := math.Sqrt((s2/float64(seeds) - mse[a][b]*mse[a][b]) / float64(seeds-1))
					fmt.Printf(" %.3g ± %.2g |", mse[a][b], se)
				} else {
					fmt.Printf(" %.3g |", mse[a][b])
				}
			}
			pred[a] = m.pred(instance(n, m.iters, 0, false), 1)
			fmt.Printf(" %.3g |\n", pred[a])
		}
		// Exponents: the slope in n at each ε, and in ε at each n, averaged.
		fn := make([]float64, len(ns))
		for i, n := range ns {
			fn[i] = float64(n)
		}
		sn, se := 0.0, 0.0
		for b := range es {
			col := make([]float64, len(ns))
			for a := range ns {
				col[a] = mse[a][b]
			}
			sn += slope(fn, col) / float64(len(es))
		}
		for a := range ns {
			se += slope(es, mse[a]) / float64(len(ns))
		}
		fmt.Printf("\nfitted MSE ∝ n^%.2f ε^%.2f (closed form: n^%.2f); survey (Table 3): %s (n^%g ε^%g)\n\n",
			sn, se, slope(fn, pred), m.survey, m.wantN, m.wantE)
	}
}

// recon runs one method on a 20-node instance and returns its estimate of
// x_i(0) for coalition c.
type recon struct {
	name  string
	iters int
	run   func(p *consensus.Problem) (*consensus.Trace, func(c consensus.Curious) float64, error)
}

var recons = []recon{
	{"plain", 200, func(p *consensus.Problem) (*consensus.Trace, func(consensus.Curious) float64, error) {
		t, err := consensus.Plain(p)
		return t, func(c consensus.Curious) float64 { return c.RecoverPlain(t) }, err
	}},
	{"state decomposition [164]", 300, func(p *consensus.Problem) (*consensus.Trace, func(consensus.Curious) float64, error) {
		s := consensus.StateDecomposition{}
		t, err := s.Run(p)
		return t, func(c consensus.Curious) float64 { return c.RecoverDecomp(p, s, t) }, err
	}},
	{"zero-sum offsets [169]", 200, func(p *consensus.Problem) (*consensus.Trace, func(consensus.Curious) float64, error) {
		t, err := consensus.Offsets{}.Run(p)
		return t, func(c consensus.Curious) float64 { return c.RecoverOffsets(p, t) }, err
	}},
	{"DP Laplace [112], ε = 1", 200, func(p *consensus.Problem) (*consensus.Trace, func(consensus.Curious) float64, error) {
		t, err := consensus.DPNozari(p, consensus.LaplaceDP{Epsilon: 1})
		return t, func(c consensus.Curious) float64 { return c.RecoverDP(t) }, err
	}},
	{"DP Gaussian gossip [115] Alg. 1, ε = 1", 50, func(p *consensus.Problem) (*consensus.Trace, func(consensus.Curious) float64, error) {
		t, err := consensus.GaussianGossip{Epsilon: 1}.Run(p)
		return t, func(c consensus.Curious) float64 { return c.RecoverDP(t) }, err
	}},
	{"HE, pairwise Paillier 512-bit [151]/[102]", 100, func(p *consensus.Problem) (*consensus.Trace, func(consensus.Curious) float64, error) {
		e := consensus.Encrypted{}
		t, err := e.Run(p)
		return t, func(c consensus.Curious) float64 { return c.RecoverEncrypted(p, e, t) }, err
	}},
}

func reconTable(seeds, heSeeds int) {
	fmt.Printf("### Curious neighbours: reconstruction of x_i(0) (n = 20, k = %d, every node a target)\n\n", degree)
	fmt.Println("Mean |x̂_i − x_i(0)| (x_i(0) uniform on [0, 1)), and in brackets the share of targets recovered within 1e-6.")
	fmt.Println()
	fmt.Println("| method | final max error | 1 colluder | 2 colluders | all 4 neighbours |")
	fmt.Println("|---|---|---|---|---|")
	for _, m := range recons {
		s := seeds
		if m.name[:2] == "HE" {
			s = heSeeds
		}
		var errs, hits [3]float64
		total, finalErr := 0.0, 0.0
		for sd := range s {
			p := instance(20, m.iters, uint64(sd), true)
			t, est, err := m.run(p)
			if err != nil {
				fail(err)
			}
			finalErr = max(finalErr, t.MaxErr[len(t.MaxErr)-1])
			for i := range p.G.N() {
				nb := p.G.Out(i)
				for q, c := range [][]int{nb[:1], nb[:2], nb} {
					d := math.Abs(est(consensus.Curious{Target: i, Colluders: c}) - p.X0[i])
					errs[q] += d
					if d <= 1e-6 {
						hits[q]++
					}
				}
				total++
			}
		}
		fmt.Printf("| %s (%d seeds) | %.2g |", m.name, s, finalErr)
		for q := range errs {
			fmt.Printf(" %.3g (%.0f%%) |", errs[q]/total, 100*hits[q]/total)
		}
		fmt.Println()
	}
	fmt.Println()
}

func main() {
	seeds := flag.Int("seeds", 200, "seeds per cell")
	heSeeds := flag.Int("he-seeds", 3, "seeds of the encrypted method in the reconstruction table")
	only := flag.String("only", "", "print only the static (average-consensus) or only the dynamic and directed tables")
	flag.Parse()
	switch *only {
	case "", "static", "dynamic":
	default:
		fail(fmt.Errorf("-only %q: want static or dynamic", *only))
	}
	if *only != "dynamic" {
		dpTable(*seeds)
		reconTable(*seeds, *heSeeds)
	}
	if *only != "static" {
		exactTable(*seeds)
		dynDPTable(*seeds)
		dynRecon(*seeds)
	}
}
