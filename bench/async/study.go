package main

import (
	"cmp"
	"fmt"
	"log"
	"math"
	"strings"
	"time"

	"github.com/trellis-fl/trellis/config"
	"github.com/trellis-fl/trellis/metrics"
	"github.com/trellis-fl/trellis/sim"
)

// The study (-study): 40 nodes, an MLP on MNIST, a 6-regular graph, 20 %
// of the nodes 5× slower; without Byzantine nodes and with 20 % of them
// (alie, gaussian); synchronous rounds against asynchronous steps for the
// mean (async_mean, in rounds the uniform mean), the median, the trimmed
// mean and BALANCE. The asynchronous runs stop at a fraction (-async-frac)
// of the virtual time the synchronous rounds take.
const studyBase = `
name = "async-study"
nodes = 40
seed = 1
eval_every = %d
[data]
samples = %d
[model]
hidden = [32]
[training]
lr = 0.05
momentum = 0.5
[topology]
kind = "kregular"
k = 6
[evaluation]
global_test = 1000
`

// studyRules are the study's rows (-rules picks them by key; the first is
// the one whose config gives the clock). LIGHTYEAR is personalized: its
// honest global accuracy understates what its nodes reach on their own
// data.
var studyRules = []struct{ key, name, text string }{
	{"mean", "mean (async_mean)", "[strategy]\nname = \"async_mean\"\n"},
	{"median", "median", "[strategy]\nname = \"robust\"\nrule = \"median\"\n"},
	{"trimmed_mean", "trimmed_mean (f = auto)", "[strategy]\nname = \"robust\"\nrule = \"trimmed_mean\"\n"},
	{"balance", "balance", "[strategy]\nname = \"balance\"\n"},
	{"lightyear", "lightyear", "[strategy]\nname = \"lightyear\"\n"},
	// LIGHTYEAR without the decay of its pull (G^t with G = 1): whether
	// the pull's decay in the node's steps is what holds its
	// asynchronous runs back.
	{"lightyear_g1", "lightyear (g = 1)", "[strategy]\nname = \"lightyear\"\n[strategy.options]\ng = 1.0\n"},
}

// chosenRules are the rows -rules names, in studyRules' order.
func chosenRules(keys string) []int {
	var out []int
	want := "," + keys + ","
	for k, r := range studyRules {
		if strings.Contains(want, ","+r.key+",") {
			out = append(out, k)
		}
	}
	if len(out) == 0 {
		var all []string
		for _, r := range studyRules {
			all = append(all, r.key)
		}
		log.Fatalf("-rules %q: no row (keys: %s)", keys, strings.Join(all, ", "))
	}
	return out
}

var studyAttacks = []struct{ name, text string }{
	{"no attack", ""},
	{"20 % alie", "[adversary]\nfraction = 0.2\nattack = \"alie\"\n"},
	{"20 % gaussian (σ = 10)", "[adversary]\nfraction = 0.2\nattack = \"gaussian\"\nsigma = 10.0\n"},
}

// series is one run's records: honest global accuracy (NaN where not
// evaluated) and δ_max.
type series struct {
	acc, delta []float64
	byzSteps   int // the Byzantine nodes' training batches (NodeRound.Steps)
}

func runSeries(c config.Config) series {
	s := setupOf(c)
	var out series
	err := s.Run(contextBackground(), metrics.SinkFunc(func(r *metrics.Round) error {
		a := math.NaN()
		if r.Evaluated {
			a = r.HonestGlobalAcc
		}
		out.acc = append(out.acc, a)
		out.delta = append(out.delta, r.DeltaMax)
		for _, n := range r.Nodes {
			if n.Byzantine {
				out.byzSteps += n.Steps
			}
		}
		return nil
	}))
	if err != nil {
		log.Fatal(err)
	}
	return out
}

func maxOf(v []float64) float64 {
	m := 0.0
	for _, x := range v {
		m = max(m, x)
	}
	return m
}

// at is the last evaluated value at or before index k.
func at(v []float64, k int) float64 {
	for k = min(k, len(v)-1); k >= 0; k-- {
		if !math.IsNaN(v[k]) {
			return v[k]
		}
	}
	return math.NaN()
}

func study(rounds, samples int, frac float64, rules []int) {
	t0 := time.Now()
	parseS := func(text string) config.Config {
		c := parse(text, rounds)
		c.Seed = studySeed
		return c
	}
	// The clock: the same for every run (it depends on the seed and
	// [timing] alone).
	ac := parseS(fmt.Sprintf(studyBase, 1, samples) + studyRules[0].text + fmt.Sprintf(timing, 8))
	sched, round := clock(ac)
	T := float64(rounds) * round
	H := frac * T
	// The asynchronous runs' rounds: the most steps any node can take by
	// the horizon, so no node stops before it, and BALANCE's radius,
	// which decays with step/rounds, decays over the run as in rounds.
	asyncRounds := stepsBy(sched, H)
	fmt.Printf("40 nodes, MLP (32 hidden) on MNIST (%d samples, Dirichlet default), 6-regular graph; steps lognormal median 1 s (spread 0.2), 20 %% stragglers 5× slower, links 0.05–0.2 s; seed %d\n", samples, studySeed)
	fmt.Printf("synchronous: %d rounds of %.3f virtual s = %.1f s; asynchronous: horizon %.1f s (%.2f of it), at most %d steps, windows of 1 s, inputs %q\n\n", rounds, round, T, H, frac, asyncRounds, cmp.Or(asyncInputs, "new"))
	fmt.Println("| attack | rule | sync acc at T/4 | T/2 | T | async acc at T/8 | T/4 | T/2 | async first ≥ sync's final acc (s) | sync δ_max | async δ_max | async δ_max after T/4 | async max_staleness 8, acc at T/2 |")
	fmt.Println("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	for _, atk := range studyAttacks {
		for _, k := range rules {
			rule := studyRules[k]
			sc := parseS(fmt.Sprintf(studyBase, 1, samples) + rule.text + atk.text)
			syn := runSeries(sc)
			asyncOf := func(maxStale int) series {
				c := parseS(fmt.Sprintf(studyBase, 1, samples) + rule.text + atk.text + fmt.Sprintf(timing, maxStale))
				c.Rounds = asyncRounds
				c.Timing.Horizon, c.Timing.Inputs = H, asyncInputs
				return runSeries(c)
			}
			asy := asyncOf(100000)
			final := at(syn.acc, len(syn.acc)-1)
			first := "not by T/2"
			for w, a := range asy.acc {
				if !math.IsNaN(a) && a >= final {
					first = fmt.Sprintf("%.0f", float64(w+1))
					break
				}
			}
			bounded := "–"
			if atk.text == "" {
				b := asyncOf(8)
				bounded = pct(at(b.acc, len(b.acc)-1))
			}
			// Windows are 1 s: the one ending at x is ceil(x) − 1; the
			// rounds done by x are floor(x / round).
			w := func(x float64) int { return int(math.Ceil(x)) - 1 }
			r := func(x float64) int { return int(math.Floor(x/round+1e-9)) - 1 }
			late := 0.0
			if k := w(T / 4); k < len(asy.delta) {
				late = maxOf(asy.delta[k:])
			}
			fmt.Printf("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %.3f | %.3f | %.3f | %s |\n", atk.name, rule.name,
				pct(at(syn.acc, r(T/4))), pct(at(syn.acc, r(T/2))), pct(final),
				pct(at(asy.acc, w(T/8))), pct(at(asy.acc, w(T/4))), pct(at(asy.acc, len(asy.acc)-1)), first,
				maxOf(syn.delta), maxOf(asy.delta), late, bounded)
		}
	}
	fmt.Printf("\n(%s)\n", strings.TrimSpace(time.Since(t0).Round(time.Second).String()))
}

// attacksOfAsynchrony (-async-attacks): the setting of the study, the
// asynchronous runs only (no staleness bound, the same horizon), with the
// Byzantine nodes flooding (alie models every 0.2 s), stale (from their
// step 3 on, their step-3 models, no other attack) or inflating their
// step numbers (alie models claimed 1000 steps ahead, against the mean,
// whose weights discount by staleness).
func attacksOfAsynchrony(rounds, samples int, frac float64) {
	t0 := time.Now()
	c0 := parse(fmt.Sprintf(studyBase, 1, samples)+studyRules[0].text+fmt.Sprintf(timing, 100000), rounds)
	sched, round := clock(c0)
	H := frac * float64(rounds) * round
	fmt.Printf("asynchronous runs to %.1f virtual s, no staleness bound\n\n", H)
	asyncRounds := stepsBy(sched, H)
	fmt.Println("| attack | rule | acc at horizon | δ_max | δ_max after T/8 | Byzantine nodes' local training batches |")
	fmt.Println("|---|---|---:|---:|---:|---:|")
	alie := "[adversary]\nfraction = 0.2\nattack = \"alie\"\n"
	for _, atk := range []struct {
		name, text string
		rules      []int
		set        func(t *config.Timing)
	}{
		{"20 % alie, flooding every 0.2 s", alie, []int{0, 1, 3}, func(t *config.Timing) { t.Flood = 0.2 }},
		{"20 % stale from step 3 (no other attack)", "[adversary]\nfraction = 0.2\n", []int{0, 1, 3}, func(t *config.Timing) { t.Stale = 3 }},
		// Step inflation matters only to a rule that discounts by
		// staleness: the mean (async_mean); with both input rules.
		{"20 % alie, steps inflated by 1000", alie, []int{0}, func(t *config.Timing) { t.Inflate = 1000 }},
		{"20 % alie, steps inflated by 1000, inputs latest", alie, []int{0}, func(t *config.Timing) { t.Inflate, t.Inputs = 1000, "latest" }},
		{"20 % alie, inputs latest (no inflation)", alie, []int{0}, func(t *config.Timing) { t.Inputs = "latest" }},
	} {
		for _, rule := range atk.rules {
			c := parse(fmt.Sprintf(studyBase, 1, samples)+studyRules[rule].text+atk.text+fmt.Sprintf(timing, 100000), asyncRounds)
			c.Timing.Horizon = H
			atk.set(c.Timing)
			s := runSeries(c)
			late := 0.0
			if k := int(math.Ceil(H/4)) - 1; k < len(s.delta) {
				late = maxOf(s.delta[k:])
			}
			fmt.Printf("| %s | %s | %s | %.3f | %.3f | %d |\n", atk.name, studyRules[rule].name, pct(at(s.acc, len(s.acc)-1)), maxOf(s.delta), late, s.byzSteps)
		}
	}
	fmt.Printf("\n(%s)\n", time.Since(t0).Round(time.Second))
}

// stepsBy is the most steps a node of sched can take by virtual time h.
func stepsBy(sched *sim.Schedule, h float64) int {
	m := math.Inf(1)
	for _, s := range sched.Step {
		m = min(m, s)
	}
	return int(math.Ceil(h/m)) + 1
}
