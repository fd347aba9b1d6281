// Command async compares synchronous rounds with asynchronous timing on
// the same virtual clock: 10 nodes (logistic regression, MNIST, a
// 4-regular graph, async_mean, which in rounds is the uniform mean), each
// node's step 1 virtual second (lognormal, spread 0.2), links 0.05–0.2 s,
// 20 % of the nodes stragglers 5× slower. A synchronous round ends when
// the slowest node has trained and its last message arrived (its virtual
// length is the largest step time plus link delay over the graph's edges,
// from the same schedule); asynchronous nodes go on at their own pace.
// It prints the honest nodes' mean global test accuracy of each at the
// same virtual times (the last round ended by then; the last window).
//
//	go run ./bench/async [-rounds 30]
//
// With -study it runs the study of docs/results/async.md instead (40
// nodes, an MLP, robust rules, Byzantine nodes; study.go; -inputs latest
// makes its asynchronous steps combine every in-neighbour's newest
// model), with -async-attacks that study's flood and stale runs.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"math"

	"github.com/trellis-fl/trellis/config"
	"github.com/trellis-fl/trellis/experiment"
	"github.com/trellis-fl/trellis/metrics"
	"github.com/trellis-fl/trellis/sim"
)

const base = `
name = "async-vs-sync"
nodes = 10
seed = 1
[data]
samples = 6000
[model]
kind = "logreg"
[training]
lr = 0.05
[topology]
kind = "kregular"
k = 4
[evaluation]
global_test = 2000
[strategy]
name = "async_mean"
`

const timing = `
[timing]
mode = "async"
max_staleness = %d
compute = "lognormal"
compute_a = 1.0
compute_b = 0.2
latency = "uniform"
latency_a = 0.05
latency_b = 0.2
stragglers = 0.2
slowdown = 5.0
window = 1.0
`

func parse(text string, rounds int) config.Config {
	c, err := config.Parse([]byte(text), "bench")
	if err != nil {
		log.Fatal(err)
	}
	c.Rounds = rounds
	return c
}

// clock is c's virtual clock (it depends on the seed, [timing] and the
// graph alone) and the virtual length of a synchronous round on it.
func clock(c config.Config) (*sim.Schedule, float64) {
	t := c.Timing
	sched, err := sim.NewSchedule(sim.Async{Compute: sim.Dist{Kind: t.Compute, A: t.ComputeA, B: t.ComputeB},
		Latency: sim.Dist{Kind: t.Latency, A: t.LatencyA, B: t.LatencyB}, Stragglers: t.Stragglers, Slowdown: t.Slowdown}, c.Nodes, c.Seed)
	if err != nil {
		log.Fatal(err)
	}
	dyn, err := c.Graph()
	if err != nil {
		log.Fatal(err)
	}
	return sched, sched.SyncRound(dyn.At(0))
}

// run returns the honest global accuracy of each record.
func run(c config.Config) []float64 {
	s := setupOf(c)
	var acc []float64
	err := s.Run(context.Background(), metrics.SinkFunc(func(r *metrics.Round) error {
		a := math.NaN()
		if r.Evaluated {
			a = r.HonestGlobalAcc
		}
		acc = append(acc, a)
		return nil
	}))
	if err != nil {
		log.Fatal(err)
	}
	return acc
}

// setupOf is c's experiment setup, its data loaded; it exits on an error.
func setupOf(c config.Config) experiment.Setup {
	tt, err := experiment.LoadData(c)
	if err != nil {
		log.Fatal(err)
	}
	s, err := experiment.SetupOf(c, tt)
	if err != nil {
		log.Fatal(err)
	}
	return s
}

// asyncInputs is the study's asynchronous runs' timing.inputs (-inputs),
// studySeed its runs' seed (-seed: the data split, the graph, the clock,
// the Byzantine and straggler sets, the training).
var (
	asyncInputs string
	studySeed   uint64 = 1
)

func main() {
	rounds := flag.Int("rounds", 30, "synchronous rounds; the asynchronous run stops at the virtual time they take")
	maxStale := flag.Int("max-staleness", 8, "timing.max_staleness of the first asynchronous run (the second has none: 100000)")
	doStudy := flag.Bool("study", false, "the study of docs/results/async.md instead (40 nodes, MLP, Byzantine nodes)")
	samples := flag.Int("samples", 6000, "-study: MNIST samples")
	frac := flag.Float64("async-frac", 0.5, "-study: the asynchronous runs' horizon, a fraction of the synchronous runs' virtual time")
	attacks := flag.Bool("async-attacks", false, "the study's flood and stale runs instead")
	flag.Uint64Var(&studySeed, "seed", 1, "-study: the seed of every run")
	flag.StringVar(&asyncInputs, "inputs", "", `-study: the asynchronous runs' timing.inputs ("new", the default, or "latest")`)
	rules := flag.String("rules", "mean,median,trimmed_mean,balance", "-study: its rows, by key (mean, median, trimmed_mean, balance, lightyear, lightyear_g1)")
	flag.Parse()
	if *attacks {
		attacksOfAsynchrony(*rounds, *samples, *frac)
		return
	}
	if *doStudy {
		study(*rounds, *samples, *frac, chosenRules(*rules))
		return
	}
	ac := parse(base+fmt.Sprintf(timing, *maxStale), 100**rounds)
	_, round := clock(ac) // a synchronous round's virtual length
	syncAcc := run(parse(base, *rounds))
	// The asynchronous run stops where the synchronous one ends.
	ac.Timing.Horizon = float64(*rounds) * round
	asyncAcc := run(ac)
	ac.Timing.MaxStaleness = 100000
	unbounded := run(ac)
	fmt.Printf("synchronous round: %.3f virtual s (the slowest node's step and link); asynchronous windows of 1 s\n\n", round)
	fmt.Printf("| virtual time (s) | synchronous rounds done | sync honest global acc | async, max_staleness %d | async, no staleness bound |\n", *maxStale)
	fmt.Println("|---:|---:|---:|---:|---:|")
	for _, at := range []float64{5, 10, 20, 40, 80, 120, float64(*rounds) * round} {
		done := int(math.Floor(at/round + 1e-9))
		s, a, u := math.NaN(), math.NaN(), math.NaN()
		if done > 0 && done <= len(syncAcc) {
			s = syncAcc[done-1]
		}
		// The window ending at the time (windows are 1 s).
		if w := int(math.Ceil(at)) - 1; w >= 0 && w < len(asyncAcc) {
			a = asyncAcc[min(w, len(asyncAcc)-1)]
		}
		if w := int(math.Ceil(at)) - 1; w >= 0 {
			u = unbounded[min(w, len(unbounded)-1)]
		}
		fmt.Printf("| %.0f | %d | %s | %s | %s |\n", at, done, pct(s), pct(a), pct(u))
	}
}

func contextBackground() context.Context { return context.Background() }

func pct(v float64) string {
	if math.IsNaN(v) {
		return "–"
	}
	return fmt.Sprintf("%.4f", v)
}
