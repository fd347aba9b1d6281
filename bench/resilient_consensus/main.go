// Command resilient_consensus runs synchronous resilient vector consensus
// on a complete graph and on a random k-regular one (the survey, §4.5.1,
// Table 8) and prints Markdown tables for
// docs/results/resilient-consensus.md:
//
//	go run ./bench/resilient_consensus [-T 20] [-seeds 5] [-attacks 0] [-mean=false]
//
// n nodes, f of them Byzantine, vectors of d coordinates. Every round each
// honest node replaces its vector by a rule applied to its own vector and
// those it received from its in-neighbours (all n − 1 on the complete
// graph, k on the k-regular one): safe_area (aggregate.SafeArea, f), msr around the
// own vector (f), trimmed_mean (f), centerpoint_lp (aggregate.CenterpointLP:
// Tukey depth ⌈n/(d+1)⌉, f only checked), tverberg (aggregate.TverbergPoint,
// f + 1 parts), and for d = 2 the float32-exact Tukey-depth centerpoint
// (aggregate.Centerpoint, no f). Byzantine nodes send what an attack of package
// attack crafts from their own (initial) vector, or a fixed point, per
// receiver and round. Honest initial vectors are uniform in the unit cube
// ("cube") or uniform probability vectors ("simplex", the survey's
// Example 5: their hull is flat, in the plane Σ x = 1).
//
// Columns per rule: "out" is the largest distance, over honest nodes and
// rounds, by which a vector left the convex hull of the honest initial
// vectors (a lower bound on the Euclidean distance to the hull: the
// largest violation of a facet's plane, or the distance off the hull's
// affine span), relative to the hull's spread (the largest distance of an
// honest initial vector from their mean); "agree" is the largest distance
// between two honest vectors after T rounds relative to the same at round
// 0. Values are the worst over the seeds.
package main

import (
	"errors"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"strings"

	"github.com/trellis-fl/trellis/aggregate"
	"github.com/trellis-fl/trellis/attack"
	"github.com/trellis-fl/trellis/internal/cpu"
	"github.com/trellis-fl/trellis/topology"
)

// validTol is the "out" below which a run counts as valid: the rules'
// float32 outputs are rounded by 2^-24 of a coordinate.
const validTol = 1e-6

type setting struct {
	d, n, f int
	init    string
	k       int // 0: complete graph; else a random k-regular graph
}

type byz struct {
	name  string
	craft func(dst, own, recv []float32, honest [][]float32, from, to, round int, rng *rand.Rand) error
}

func main() {
	T := flag.Int("T", 20, "rounds")
	seeds := flag.Int("seeds", 5, "seeds per setting (the worst is shown)")
	nattacks := flag.Int("attacks", 0, "attacks per setting, the first ones of the list (0: all)")
	mean := flag.Bool("mean", true, "print the last table, the mean over subsets (C(n, f) safe areas per node and round)")
	radon := flag.Bool("radon", false, "the iterated Radon point's table instead: settings with the (d+2)^⌈log₂(f+1)⌉ inputs it needs, against tverberg, centerpoint_lp and the coordinate-wise rules")
	flag.Parse()
	fmt.Printf("Machine: %s, %s/%s. %d rounds, worst of %d seeds; validity tolerance %g.\n\n", cpu.ModelName(), runtime.GOOS, runtime.GOARCH, *T, *seeds, validTol)
	settings := []setting{
		{2, 7, 2, "cube", 0}, {2, 10, 2, "cube", 0}, {2, 10, 2, "simplex", 0},
		{3, 13, 2, "cube", 0}, {3, 13, 2, "simplex", 0},
		{2, 12, 2, "cube", 8}, {2, 12, 2, "simplex", 8},
	}
	ruleSet := func(s setting) []string {
		rules := []string{"safe_area", "msr", "trimmed_mean", "centerpoint_lp", "tverberg"}
		if s.d == 2 {
			rules = append(rules, "centerpoint")
		}
		return rules
	}
	if *radon {
		// (d+2)^h inputs for 2^h >= f + 1 parts: 16 in the plane for
		// f = 2, 3; 25 in space for f = 2, 3; 64 in the plane for f up
		// to 7, where tverberg's exact search is refused.
		settings = []setting{
			{2, 16, 3, "cube", 0}, {2, 16, 3, "simplex", 0},
			{3, 25, 3, "cube", 0}, {2, 64, 7, "cube", 0},
		}
		ruleSet = func(setting) []string { return []string{"radon", "tverberg", "centerpoint_lp", "msr", "trimmed_mean"} }
		*mean = false
	}
	for _, s := range settings {
		rules := ruleSet(s)
		graph, inputs := "complete graph", s.n
		if s.k > 0 {
			graph, inputs = fmt.Sprintf("random %d-regular graph", s.k), s.k+1
		}
		if *radon {
			fmt.Printf("**d = %d, n = %d, f = %d, %s, %s** (radon needs %d inputs ≥ (d+2)^⌈log₂(f+1)⌉ = %d; tverberg ≥ (d+1)f + 1 = %d)\n\n", s.d, s.n, s.f, s.init, graph, inputs, aggregate.RadonInputs(s.d, aggregate.RadonLevels(s.f)), (s.d+1)*s.f+1)
		} else {
			fmt.Printf("**d = %d, n = %d, f = %d, %s, %s** (safe_area needs %d inputs ≥ max(3f + 1, (d+1)f + 1) = %d)\n\n", s.d, s.n, s.f, s.init, graph, inputs, max(3*s.f+1, (s.d+1)*s.f+1))
		}
		fmt.Print("| attack |")
		for _, r := range rules {
			fmt.Printf(" %s out | %s agree |", r, r)
		}
		fmt.Print("\n|---|")
		for range rules {
			fmt.Print("---:|---:|")
		}
		fmt.Println()
		as := attacks(s)
		if *nattacks > 0 {
			as = as[:min(*nattacks, len(as))]
		}
		for _, b := range as {
			row(s, b, rules, *T, *seeds)
		}
		fmt.Println()
	}
	if !*mean {
		return
	}
	// The averaging over subsets (subsetMean): C(n, f) safe areas a node
	// and round, so one setting, the two per-receiver attacks, and fewer
	// seeds.
	ms := min(*seeds, 3)
	fmt.Printf("**Mean over subsets (the averaging of [194, 223]), d = 2, n = 10, f = 2, complete graph, worst of %d seeds** (needs n − f = 8 inputs ≥ max(3f + 1, (d+1)f + 1) = 7)\n\n", ms)
	fmt.Println("| initial vectors, attack | safe_area out | safe_area agree | safe_area_mean out | safe_area_mean agree |")
	fmt.Println("|---|---:|---:|---:|---:|")
	for _, init := range []string{"cube", "simplex"} {
		s := setting{2, 10, 2, init, 0}
		for _, b := range attacks(s)[:2] {
			b.name = init + ", " + b.name
			row(s, b, []string{"safe_area", "safe_area_mean"}, *T, ms)
		}
	}
}

// row prints one attack's row: per rule, "out" and "agree", worst over
// the seeds.
func row(s setting, b byz, rules []string, T, seeds int) {
	fmt.Printf("| %s |", b.name)
	for _, r := range rules {
		var out, agree float64
		var fail error
		for seed := range seeds {
			o, a, err := run(s, r, b, T, uint64(seed))
			if err != nil {
				fail = err
				break
			}
			out, agree = max(out, o), max(agree, a)
		}
		if fail != nil {
			fmt.Printf(" error: %s | |", short(fail))
			continue
		}
		mark := "✓"
		if out > validTol {
			mark = "✗"
		}
		fmt.Printf(" %s %.2g | %.2g |", mark, out, agree)
	}
	fmt.Println()
}

// attacks are the Byzantine behaviours: attacks of package attack applied
// to the Byzantine node's own initial vector (gaussian and ALIE see the
// current honest vectors), two fixed points, and a copy of the receiver's
// own vector.
func attacks(s setting) []byz {
	lib := func(name string, p attack.Params) byz {
		a, err := attack.New(name, p)
		if err != nil {
			panic(err)
		}
		label := name
		if name == "gaussian" {
			label = fmt.Sprintf("gaussian σ=%g (per receiver)", p.Sigma)
		}
		return byz{label, func(dst, own, _ []float32, honest [][]float32, from, to, round int, rng *rand.Rand) error {
			v := &attack.View{Round: round, Honest: honest, Senders: s.n, Attackers: s.f, Tag: "model"}
			return a.Craft(dst, v, own, from, to, rng)
		}}
	}
	fixed := func(name string, p func(honest [][]float32, k int) float32) byz {
		return byz{name, func(dst, _, _ []float32, honest [][]float32, _, _, _ int, _ *rand.Rand) error {
			for k := range dst {
				dst[k] = p(honest, k)
			}
			return nil
		}}
	}
	// To each receiver, a copy of the receiver's own vector (equivocation:
	// every node sees its own value f + 1 times).
	echo := byz{"echo the receiver (per receiver)", func(dst, _, recv []float32, _ [][]float32, _, _, _ int, _ *rand.Rand) error {
		copy(dst, recv)
		return nil
	}}
	return []byz{
		echo,
		lib("gaussian", attack.Params{Sigma: 1}),
		lib("sign_flip", attack.Params{}),
		lib("alie", attack.Params{}),
		fixed("far point (100, …)", func([][]float32, int) float32 { return 100 }),
		// Each coordinate just below the honest minimum: the survey's
		// Example 5 pull on the coordinate-wise rules.
		fixed("below every honest minimum", func(honest [][]float32, k int) float32 {
			m := float32(math.Inf(1))
			for _, h := range honest {
				m = min(m, h[k])
			}
			return m - 0.05
		}),
	}
}

// run is one consensus run: the worst "out" over honest nodes and rounds,
// and the final disagreement relative to the initial one.
func run(s setting, ruleName string, b byz, T int, seed uint64) (float64, float64, error) {
	rng := rand.New(rand.NewPCG(seed, uint64(s.d*1000+s.n)))
	x := make([][]float32, s.n)
	for i := range x {
		x[i] = initial(rng, s)
	}
	// Byzantine ids: spread over the id range.
	isByz := make([]bool, s.n)
	for j := range s.f {
		isByz[(2*j+1)*s.n/(2*s.f)] = true
	}
	var honest0 [][]float64
	for i := range x {
		if !isByz[i] {
			honest0 = append(honest0, to64(x[i]))
		}
	}
	neighbours := func(i int) []int {
		var out []int
		for j := range s.n {
			if j != i {
				out = append(out, j)
			}
		}
		return out
	}
	if s.k > 0 {
		g, err := topology.KRegular(s.n, s.k, seed+1)
		if err != nil {
			return 0, 0, err
		}
		neighbours = g.In
	}
	h := newHull(honest0)
	dis0 := disagreement(honest0)
	var r aggregate.Rule
	switch ruleName {
	case "centerpoint":
		r = &aggregate.Centerpoint{}
	case "safe_area_mean":
		r = &subsetMean{f: s.f}
	default:
		var err error
		if r, err = aggregate.New(ruleName, s.f); err != nil {
			return 0, 0, err
		}
	}
	var out float64
	next := make([][]float32, s.n)
	for i := range next {
		next[i] = make([]float32, s.d)
	}
	for round := range T {
		var cur [][]float32
		for i := range x {
			if !isByz[i] {
				cur = append(cur, x[i])
			}
		}
		for i := range x {
			if isByz[i] {
				continue
			}
			var in [][]float32
			for _, j := range neighbours(i) {
				if !isByz[j] {
					in = append(in, x[j])
					continue
				}
				v := make([]float32, s.d)
				arng := rand.New(rand.NewPCG(seed, uint64(((round*s.n)+j)*s.n+i)))
				if err := b.craft(v, x[j], x[i], cur, j, i, round, arng); err != nil {
					return 0, 0, err
				}
				in = append(in, v)
			}
			var err error
			if c, ok := r.(aggregate.Centered); ok && ruleName == "msr" {
				err = c.AggregateAround(next[i], x[i], in)
			} else {
				// Own vector first, then the others in sender-id order
				// (the rules see the multiset; only the mean would not).
				err = r.Aggregate(next[i], append([][]float32{x[i]}, in...))
			}
			if err != nil {
				return 0, 0, err
			}
			out = max(out, h.out(to64(next[i]))/h.spread)
		}
		for i := range x {
			if !isByz[i] {
				copy(x[i], next[i])
			}
		}
	}
	var honest [][]float64
	for i := range x {
		if !isByz[i] {
			honest = append(honest, to64(x[i]))
		}
	}
	return out, disagreement(honest) / dis0, nil
}

func initial(rng *rand.Rand, s setting) []float32 {
	v := make([]float32, s.d)
	if s.init == "cube" {
		for k := range v {
			v[k] = float32(rng.Float64())
		}
		return v
	}
	// Uniform on the probability simplex: normalized exponentials.
	e := make([]float64, s.d)
	var sum float64
	for k := range e {
		e[k] = rng.ExpFloat64()
		sum += e[k]
	}
	for k := range v {
		v[k] = float32(e[k] / sum)
	}
	return v
}

func to64(v []float32) []float64 {
	out := make([]float64, len(v))
	for k, x := range v {
		out[k] = float64(x)
	}
	return out
}

func disagreement(pts [][]float64) float64 {
	var m float64
	for i := range pts {
		for j := range i {
			m = max(m, dist(pts[i], pts[j]))
		}
	}
	return m
}

func dist(a, b []float64) float64 {
	var s float64
	for k := range a {
		s += (a[k] - b[k]) * (a[k] - b[k])
	}
	return math.Sqrt(s)
}

func short(err error) string {
	s := err.Error()
	if errors.Is(err, aggregate.ErrNoCenterpoint) {
		return "no centerpoint"
	}
	if len(s) > 60 {
		s = s[:60] + "…"
	}
	return strings.ReplaceAll(s, "|", "/")
}
