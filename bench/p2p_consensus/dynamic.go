package main

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/trellis-fl/trellis/consensus"
)

// The tables of the dynamic (time-varying references) and directed
// (push-sum) methods: -only dynamic prints just these.

// dynInstance is instance's graph with references r_i(k) = a_i + b_i 0.9^k
// (a_i uniform on [0, 1), b_i on [−1, 1)), or ramps r_i(k) = a_i + s_i k
// with s_i uniform on [−0.01, 0.01).
func dynInstance(n, iters int, sd uint64, record, ramp bool) *consensus.Problem {
	p := instance(n, iters, sd, record)
	r := rand.New(rand.NewPCG(sd, 0xd7a))
	a, b := make([]float64, n), make([]float64, n)
	for i := range a {
		a[i], b[i] = r.Float64(), 2*r.Float64()-1
	}
	p.X0 = nil
	if ramp {
		for i := range b {
			b[i] *= 0.01
		}
		p.Ref = consensus.Ramp(a, b)
	} else {
		p.Ref = consensus.Converging(a, b, 0.9)
	}
	return p
}

// diInstance is a strongly connected digraph on n nodes (the ring plus two
// random arcs per node, consensus.Digraph, graph seed 1) with x_i(0)
// uniform on [0, 1).
func diInstance(n, iters int, sd uint64, record bool) *consensus.Problem {
	g, err := consensus.Digraph(n, 2, 1)
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

var checkpoints = []int{10, 50, 100, 200, 400}

// exactTable: the exact methods' largest node error against the
// iteration, mean over seeds.
func exactTable(seeds int) {
	fmt.Printf("### Dynamic and directed exact methods: largest error max_i |x_i(k) − target(k)| (n = 20, mean of %d seeds)\n\n", seeds)
	fmt.Println("Dynamic rows track r̄(k) on the 4-regular graph; push-sum rows average x(0) on the digraph (ratio estimates).")
	fmt.Println()
	fmt.Print("| method | references |")
	for _, k := range checkpoints {
		fmt.Printf(" k = %d |", k)
	}
	fmt.Print("\n|---|---|")
	for range checkpoints {
		fmt.Print("---|")
	}
	fmt.Println()
	T := checkpoints[len(checkpoints)-1]
	rows := []struct {
		name, refs string
		run        func(sd uint64) (*consensus.Trace, error)
	}{
		{"plain dynamic consensus", "converging", func(sd uint64) (*consensus.Trace, error) {
			return consensus.PlainDynamic(dynInstance(20, T, sd, false, false))
		}},
		{"state decomposition [165]", "converging", func(sd uint64) (*consensus.Trace, error) {
			return consensus.DynamicDecomposition{}.Run(dynInstance(20, T, sd, false, false))
		}},
		{"plain dynamic consensus", "ramps", func(sd uint64) (*consensus.Trace, error) {
			return consensus.PlainDynamic(dynInstance(20, T, sd, false, true))
		}},
		{"state decomposition [165]", "ramps", func(sd uint64) (*consensus.Trace, error) {
			return consensus.DynamicDecomposition{}.Run(dynInstance(20, T, sd, false, true))
		}},
		{"push-sum", "– (static x(0))", func(sd uint64) (*consensus.Trace, error) {
			return consensus.PushSum(diInstance(20, T, sd, false))
		}},
		{"push-sum state decomposition [166]", "– (static x(0))", func(sd uint64) (*consensus.Trace, error) {
			return consensus.PushSumDecomposition{}.Run(diInstance(20, T, sd, false))
		}},
	}
	for _, r := range rows {
		sum := make([]float64, len(checkpoints))
		for sd := range seeds {
			t, err := r.run(uint64(sd))
			if err != nil {
				fail(err)
			}
			for c, k := range checkpoints {
				sum[c] += t.MaxErr[k] / float64(seeds)
			}
		}
		fmt.Printf("| %s | %s |", r.name, r.refs)
		for _, v := range sum {
			fmt.Printf(" %.3g |", v)
		}
		fmt.Println()
	}
	fmt.Println()
}

// dynDPTable: DynamicDP's final tracking MSE against ε, measured and the
// closed form, for the two adjacencies, and its decay with k at one ε.
func dynDPTable(seeds int) {
	const T = 200
	es := []float64{1, 10, 100}
	fmt.Printf("### Dynamic consensus with Laplace noise of increasing scale (our rendering of [113]): final tracking MSE (n = 20, T = %d, converging references, mean of %d seeds; closed form, averaged over the same seeds' references, in brackets)\n\n", T, seeds)
	fmt.Println("ν_k = ν_0 (k+1)^0.2, γ_k = (k+1)^-0.8; adjacency |r'_i(k) − r_i(k)| ≤ ρ^k.")
	fmt.Println()
	fmt.Print("| adjacency | ε accounted over |")
	for _, e := range es {
		fmt.Printf(" ε = %g: ν_0 | MSE (closed form) |", e)
	}
	fmt.Print("\n|---|---|")
	for range es {
		fmt.Print("---|---|")
	}
	fmt.Println()
	type row struct {
		name, horizon string
		rho           float64
	}
	var curve []float64
	for _, r := range []row{{"ρ = 1 (differ by up to 1 at every k)", "the run's 200 iterations", 1}, {"ρ = 0.9 (differ by up to 0.9^k)", "every k ≥ 0", 0.9}} {
		fmt.Printf("| %s | %s |", r.name, r.horizon)
		for _, e := range es {
			d := consensus.DynamicDP{Epsilon: e, Rho: r.rho}
			nu0, err := d.Scale(T)
			if err != nil {
				fail(err)
			}
			mse, want := 0.0, 0.0
			var c []float64
			for sd := range seeds {
				p := dynInstance(20, T, uint64(sd), false, false)
				t, err := d.Run(p)
				if err != nil {
					fail(err)
				}
				// The closed form's noiseless part depends on the seed's
				// references, so it is averaged over the same seeds.
				w, _, err := d.ExpectedMSE(p)
				if err != nil {
					fail(err)
				}
				want += w / float64(seeds)
				mse += t.FinalMSE() / float64(seeds)
				if r.rho < 1 && e == 10 {
					if c == nil {
						c = make([]float64, len(t.MSE))
					}
					for k, v := range t.MSE {
						c[k] += v / float64(seeds)
					}
				}
			}
			if c != nil {
				curve = c
			}
			fmt.Printf(" %.3g | %.3g (%.3g) |", nu0, mse, want)
		}
		fmt.Println()
	}
	fmt.Println()
	fmt.Print("Tracking MSE against k, ρ = 0.9, ε = 10:")
	for _, k := range []int{1, 10, 50, 100, 200} {
		fmt.Printf(" k = %d: %.3g;", k, curve[k])
	}
	fmt.Println()
	fmt.Println()
}

// dynRecon: the curious-neighbour table for the new methods. Dynamic
// rows estimate the target's first reference r_i(0) or its last one
// r_i(T−1); push-sum rows x_i(0). Coalitions: the target's first, first
// two, or all neighbours (on the digraph: the first one or two
// out-neighbours, and all in- and out-neighbours).
func dynRecon(seeds int) {
	const T = 300
	fmt.Printf("### Curious neighbours, dynamic and directed methods (n = 20, every node a target, %d seeds)\n\n", seeds)
	fmt.Println("Mean |x̂ − secret|, and in brackets the share of targets recovered within 1e-6.")
	fmt.Println()
	fmt.Println("| method | secret | 1 colluder | 2 colluders | all neighbours |")
	fmt.Println("|---|---|---|---|---|")
	type est func(c consensus.Curious) float64
	rows := []struct {
		name, secret string
		directed     bool
		run          func(p *consensus.Problem) (*consensus.Trace, est, error)
		truth        func(p *consensus.Problem, i int) float64
	}{
		{"plain dynamic consensus", "r_i(0)", false, func(p *consensus.Problem) (*consensus.Trace, est, error) {
			t, err := consensus.PlainDynamic(p)
			return t, func(c consensus.Curious) float64 { return c.RecoverDynamicPlain(p, t, false) }, err
		}, first},
		{"plain dynamic consensus", "r_i(T−1)", false, func(p *consensus.Problem) (*consensus.Trace, est, error) {
			t, err := consensus.PlainDynamic(p)
			return t, func(c consensus.Curious) float64 { return c.RecoverDynamicPlain(p, t, true) }, err
		}, last},
		{"DP dynamic [113], ε = 10, ρ = 0.9", "r_i(0)", false, func(p *consensus.Problem) (*consensus.Trace, est, error) {
			t, err := consensus.DynamicDP{Epsilon: 10, Rho: 0.9}.Run(p)
			return t, func(c consensus.Curious) float64 { return c.FirstMessage(t) }, err
		}, first},
		{"DP dynamic [113], ε = 10, ρ = 0.9", "r_i(T−1)", false, func(p *consensus.Problem) (*consensus.Trace, est, error) {
			d := consensus.DynamicDP{Epsilon: 10, Rho: 0.9}
			t, err := d.Run(p)
			return t, func(c consensus.Curious) float64 { return c.RecoverDynamicDP(p, d, t) }, err
		}, last},
		{"state decomposition [165]", "r_i(0)", false, func(p *consensus.Problem) (*consensus.Trace, est, error) {
			s := consensus.DynamicDecomposition{}
			t, err := s.Run(p)
			return t, func(c consensus.Curious) float64 { return c.RecoverDecomp(p, s.StateDecomposition, t) }, err
		}, first},
		{"state decomposition [165]", "r_i(T−1)", false, func(p *consensus.Problem) (*consensus.Trace, est, error) {
			s := consensus.DynamicDecomposition{}
			t, err := s.Run(p)
			return t, func(c consensus.Curious) float64 { return c.RecoverDecomp(p, s.StateDecomposition, t) }, err
		}, last},
		{"push-sum (digraph)", "x_i(0)", true, func(p *consensus.Problem) (*consensus.Trace, est, error) {
			t, err := consensus.PushSum(p)
			return t, func(c consensus.Curious) float64 { return c.RecoverPushSum(t) }, err
		}, func(p *consensus.Problem, i int) float64 { return p.X0[i] }},
		{"push-sum state decomposition [166] (digraph)", "x_i(0)", true, func(p *consensus.Problem) (*consensus.Trace, est, error) {
			t, err := consensus.PushSumDecomposition{}.Run(p)
			return t, func(c consensus.Curious) float64 { return c.RecoverPushSumDecomp(p, t) }, err
		}, func(p *consensus.Problem, i int) float64 { return p.X0[i] }},
	}
	for _, r := range rows {
		var errs, hits [3]float64
		total := 0.0
		for sd := range seeds {
			var p *consensus.Problem
			if r.directed {
				p = diInstance(20, T, uint64(sd), true)
			} else {
				p = dynInstance(20, T, uint64(sd), true, false)
			}
			t, e, err := r.run(p)
			if err != nil {
				fail(err)
			}
			_ = t
			for i := range p.G.N() {
				out := p.G.Out(i)
				all := slices.Clone(out)
				for _, j := range p.G.In(i) {
					if !slices.Contains(all, j) {
						all = append(all, j)
					}
				}
				two := out[:min(2, len(out))]
				for q, c := range [][]int{out[:1], two, all} {
					d := math.Abs(e(consensus.Curious{Target: i, Colluders: c}) - r.truth(p, i))
					errs[q] += d
					if d <= 1e-6 {
						hits[q]++
					}
				}
				total++
			}
		}
		fmt.Printf("| %s | %s |", r.name, r.secret)
		for q := range errs {
			fmt.Printf(" %.3g (%.0f%%) |", errs[q]/total, 100*hits[q]/total)
		}
		fmt.Println()
	}
	fmt.Println()
}

func first(p *consensus.Problem, i int) float64 { return p.Ref(i, 0) }
func last(p *consensus.Problem, i int) float64  { return p.Ref(i, p.Iters-1) }
