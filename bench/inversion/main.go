// Command inversion measures what a curious neighbour reconstructs from
// one shared round update of trellis's dense models on MNIST (package
// privacy/inversion): label recovery rate and reconstruction error
// against the dataset-mean baseline, per model × protection × batch size.
//
//	go run ./bench/inversion [-targets 20] [-iters 300] [-hidden 256,128] [-tables main,dp,steps,rounds,local] [-localrounds 0]
//
// Each target is a node's batch of B training images (samples of its own,
// disjoint from every other target's); its update is one SGD step of rate
// -lr from the model's seed-drawn start (nn's own step). A secure-
// aggregation group adds the updates of K − 1 other nodes' batches. The
// attacker's own data is 1,000 MNIST test images (its prior image and
// mean prediction). The rounds table attacks models first trained for r
// rounds on a pool of other training images (and LeNet-5's labels); the
// local table updates of E local steps, read as one gradient or unrolled
// (from the seed-drawn start, or after -localrounds rounds of training). Everything is seeded: the table is the same on every
// run and machine up to float rounding.
package main

import (
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/trellis-fl/trellis/data"
	"github.com/trellis-fl/trellis/internal/cpu"
	"github.com/trellis-fl/trellis/internal/seed"
	"github.com/trellis-fl/trellis/nn"
	"github.com/trellis-fl/trellis/privacy/inversion"
)

func main() {
	targets := flag.Int("targets", 20, "targets (victim batches) per table cell")
	iters := flag.Int("iters", 300, "DLG iterations")
	hidden := flag.String("hidden", "256,128", "the MLP's hidden widths (trellis's default MNIST MLP)")
	lr := flag.Float64("lr", 0.05, "the nodes' local step size")
	seedFlag := flag.Uint64("seed", 1, "seed of models, noise and DLG starts")
	workers := flag.Int("workers", runtime.NumCPU(), "targets attacked in parallel")
	only := flag.String("only", "", "run only the rows whose model or protection contains this")
	tables := flag.String("tables", "main,dp,steps", "which tables: main (model × protection × batch), dp (DP over ε, one image), sd (state decomposition over ρ, one image), steps (4 local steps), rounds (models trained for r rounds, LeNet-5's labels), local (E local steps: one-gradient baseline and unrolled attack)")
	flag.IntVar(&localRounds, "localrounds", 0, "rounds the local table's models are trained for first (as in the rounds table)")
	flag.Parse()
	if err := run(*targets, *iters, *hidden, *lr, *seedFlag, *workers, *only, *tables); err != nil {
		fmt.Fprintln(os.Stderr, "inversion:", err)
		os.Exit(1)
	}
}

const (
	maxK, maxB = 10, 8
	delta      = 1e-3 // the privacy presets' δ
	clip       = 1.0  // and clip
	rounds     = 10   // the quickstart's rounds: the DP budget covers 10 releases
)

func run(targets, iters int, hiddenFlag string, lr float64, sd uint64, workers int, only, tables string) error {
	want := func(t string) bool { return strings.Contains(","+tables+",", ","+t+",") }
	var hid []int
	for _, f := range strings.Split(hiddenFlag, ",") {
		h, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			return fmt.Errorf("-hidden %q: %v", hiddenFlag, err)
		}
		hid = append(hid, h)
	}
	per := maxK * maxB
	// The targets' images, then the pool the rounds table trains on.
	tt, err := data.MNISTShard(func(d *data.Dataset) ([]int32, error) { return d.All()[:targets*per+pool], nil })
	if err != nil {
		return err
	}
	train, test := tt.Train, tt.Test
	D := train.RowLen()
	mean, std := float64(train.Norm.Mean[0]), float64(train.Norm.Std[0])
	// The attacker's own data: 1,000 test images.
	own := make([]float64, 1000*D)
	prior := make([]float64, D)
	row := make([]float32, D)
	for i := range 1000 {
		test.CopyRow(row, i)
		for j, v := range row {
			own[i*D+j] = float64(v)
			prior[j] += float64(v) / 1000
		}
	}
	priorPix := inversion.Pixels(prior, mean, std)

	models := []model{
		{"logreg", nn.Spec{Kind: "logreg", Input: []int{1, 28, 28}, Classes: 10}},
		{"MLP " + hiddenFlag, nn.Spec{Kind: "mlp", Input: []int{1, 28, 28}, Hidden: hid, Classes: 10}},
	}
	protections := []inversion.Protection{
		{Kind: "none"},
		{Kind: "dp", Epsilon: 8, Delta: delta, Clip: clip, Rounds: rounds},
		{Kind: "dp", Epsilon: 1, Delta: delta, Clip: clip, Rounds: rounds},
		{Kind: "secagg", K: 4},
		{Kind: "secagg", K: 10},
		{Kind: "sd", Rho: 1},
	}
	fmt.Printf("# %s\n", machine())
	fmt.Printf("# MNIST, %d targets a cell, local step lr %g, DLG %d Adam iterations (lr 0.1, cosine decay), seed %d\n", targets, lr, iters, sd)
	for _, p := range protections {
		if p.Kind == "dp" && want("main") { // the main table's DP rows
			z, err := p.Multiplier()
			if err != nil {
				return err
			}
			fmt.Printf("# %s: clip %g, noise multiplier z = %.4f (privacy.Calibrate, δ = %g, %d rounds, RDP), noise sd %.4f a coordinate\n", p.Name(), clip, z, delta, rounds, z*clip)
		}
	}
	st := &study{models: models, own: own, prior: prior, priorPix: priorPix, train: train, test: test,
		targets: targets, iters: iters, workers: workers, lr: lr, sd: sd, only: only, mean: mean, std: std}
	if want("main") {
		if err := st.mainTable(protections); err != nil {
			return err
		}
	}
	if want("dp") {
		if err := st.dpTable(); err != nil {
			return err
		}
	}
	if want("sd") {
		if err := st.sdTable(); err != nil {
			return err
		}
	}
	if want("steps") {
		if err := st.stepsTable(); err != nil {
			return err
		}
	}
	if want("rounds") {
		if err := st.roundsTable(); err != nil {
			return err
		}
	}
	if want("local") {
		return st.localTable()
	}
	return nil
}

type model struct {
	name string
	spec nn.Spec
}

// study is what every table shares: the models, the attacker's own data
// and their mean image (prior, normalized; priorPix, in pixels), the
// targets' data, and the run's settings.
type study struct {
	models                  []model
	own, prior, priorPix    []float64
	train, test             *data.Dataset
	targets, iters, workers int
	lr                      float64
	sd                      uint64
	only                    string
	mean, std               float64
}

// header is every table's head.
const header = "| model | protection | batch | inversion | label recovery | recon. MSE | PSNR (dB) | baseline MSE | update norm | seconds |\n" +
	"|---|---|---:|---|---:|---:|---:|---:|---:|---:|"

// eachModel builds, for each model keep accepts, the model, its inversion
// and an attacker of nodes taking steps local steps, and runs f on them
// (mi is the model's place in s.models, for the cells' random streams).
func (s *study) eachModel(keep func(model) bool, steps int, f func(mi int, md model, base *nn.Model, att *inversion.Attacker) error) error {
	for mi, md := range s.models {
		if !keep(md) {
			continue
		}
		base, err := nn.Build(md.spec, s.sd, nn.Options{Batch: maxB})
		if err != nil {
			return err
		}
		net, err := inversion.NetOf(base)
		if err != nil {
			base.Close()
			return err
		}
		err = f(mi, md, base, s.attacker(net, steps))
		base.Close()
		if err != nil {
			return err
		}
	}
	return nil
}

// selected says whether -only keeps a row of the model named name under
// the protection named prot.
func (s *study) selected(name, prot string) bool {
	return s.only == "" || strings.Contains(name, s.only) || strings.Contains(prot, s.only)
}

// mainTable: model × protection × batch size.
func (s *study) mainTable(protections []inversion.Protection) error {
	fmt.Println()
	fmt.Println(header)
	all := func(model) bool { return true }
	return s.eachModel(all, 0, func(mi int, md model, base *nn.Model, att *inversion.Attacker) error {
		for pi, p := range protections {
			if !s.selected(md.name, p.Name()) {
				continue
			}
			for _, b := range []int{1, maxB} {
				if err := s.cell(md.name, base, att, []uint64{uint64(mi), uint64(pi), uint64(b)}, b, 1, p); err != nil {
					return err
				}
			}
		}
		return nil
	})
}

// dpTable: where DP stops the attack, node-level DP over a range of ε,
// one image (the analytic inversion and iDLG, which take no time).
func (s *study) dpTable() error {
	fmt.Printf("\nNode-level DP from ε = 8 up, one image a target (clip %g, δ = %g, %d rounds; z from privacy.Calibrate):\n\n", clip, delta, rounds)
	var ps []inversion.Protection
	for _, eps := range []float64{8, 64, 512, 4096, 32768, 262144} {
		ps = append(ps, inversion.Protection{Kind: "dp", Epsilon: eps, Delta: delta, Clip: clip, Rounds: rounds})
	}
	return s.sweepTable("DP", 98, ps)
}

// sdTable: state decomposition over the offset's scale ρ, one image (the
// analytic inversion and iDLG).
func (s *study) sdTable() error {
	fmt.Printf("\nState decomposition over the offset's scale ρ (s = ρ‖u‖/√d a coordinate), one image a target:\n\n")
	var ps []inversion.Protection
	for _, rho := range []float64{1, 4, 16, 64, 256} {
		ps = append(ps, inversion.Protection{Kind: "sd", Rho: rho})
	}
	return s.sweepTable("state decomp.", 97, ps)
}

// sweepTable prints the one-image table of each model (those -only
// selects, by model or by label) under each protection of ps; stream keeps
// its cells' random streams apart from the other tables'.
func (s *study) sweepTable(label string, stream uint64, ps []inversion.Protection) error {
	fmt.Println(header)
	keep := func(md model) bool { return s.selected(md.name, label) }
	return s.eachModel(keep, 0, func(mi int, md model, base *nn.Model, att *inversion.Attacker) error {
		for pi, p := range ps {
			if err := s.cell(md.name, base, att, []uint64{uint64(mi), stream, uint64(pi)}, 1, 1, p); err != nil {
				return err
			}
		}
		return nil
	})
}

// stepsTable: a node's update after several local steps (nodes train
// locally before they share): 4 steps of B samples each, no protection;
// the attack reads −u/(4 lr) as the mean gradient of the 4B samples.
func (s *study) stepsTable() error {
	const steps = 4
	fmt.Printf("\nAfter %d local steps of B samples each (no protection; the view covers %d·B samples):\n\n", steps, steps)
	fmt.Println(header)
	keep := func(md model) bool { return s.selected(md.name, "none") }
	return s.eachModel(keep, steps, func(mi int, md model, base *nn.Model, att *inversion.Attacker) error {
		for _, b := range []int{1, maxB} {
			if err := s.cell(md.name, base, att, []uint64{uint64(mi), 99, uint64(b)}, b, steps, inversion.Protection{Kind: "none"}); err != nil {
				return err
			}
		}
		return nil
	})
}

// cell attacks targets batches of b samples (each node takes steps local
// steps) under protection p and prints the table row of the means.
func (s *study) cell(name string, base *nn.Model, att *inversion.Attacker, ids []uint64, b, steps int, p inversion.Protection) error {
	start := time.Now()
	avg, err := s.measure(base, att, ids, job{b: b, steps: steps, p: p})
	if err != nil {
		return err
	}
	method := "analytic"
	if b*steps*p.Group() > 1 {
		method = "DLG"
	}
	fmt.Printf("| %s | %s | %d | %s | %.0f %% | %.4f | %.1f | %.4f | %.3f | %.0f |\n", name, p.Name(), b, method,
		100*avg.labels, avg.mse, avg.psnr, avg.base, avg.norm, time.Since(start).Seconds())
	return nil
}

// inverter is an attack on a view: inversion.Attacker, or labelsOnly.
type inverter interface {
	Invert(view []float32, n int, rng *rand.Rand) (inversion.Outcome, error)
}

// job is what each target of a cell does: local steps of b samples,
// on one batch repeated (same) or on distinct batches, its update seen
// through protection p.
type job struct {
	b, steps int
	same     bool
	p        inversion.Protection
	lr       float64 // the victim's rate (measure sets it)
}

// measure attacks the cell's targets in parallel and returns the mean
// score (mse, psnr NaN when inv reconstructs no images).
func (s *study) measure(base *nn.Model, inv inverter, ids []uint64, jb job) (score, error) {
	targets := s.targets
	jb.lr = s.lr
	res := make([]score, targets)
	var wg sync.WaitGroup
	next := make(chan int)
	var firstErr error
	var mu sync.Mutex
	for range max(s.workers, 1) {
		m := base.Clone()
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer m.Close()
			for t := range next {
				rng := seed.Stream(s.sd, seed.Attack, append(ids[:len(ids):len(ids)], uint64(t))...)
				sc, err := attack(m, inv, s.train, t*maxK*maxB, jb, rng, s.priorPix, s.mean, s.std)
				if err != nil {
					mu.Lock()
					firstErr = err
					mu.Unlock()
				}
				res[t] = sc
			}
		}()
	}
	for t := range targets {
		next <- t
	}
	close(next)
	wg.Wait()
	if firstErr != nil {
		return score{}, firstErr
	}
	var avg score
	for _, sc := range res {
		avg.labels += sc.labels / float64(targets)
		avg.mse += sc.mse / float64(targets)
		avg.psnr += sc.psnr / float64(targets)
		avg.base += sc.base / float64(targets)
		avg.norm += sc.norm / float64(targets)
		avg.obj += sc.obj / float64(targets)
	}
	avg.method = res[0].method
	return avg, nil
}

// score is one target's: the fraction of its labels recovered, its images'
// mean reconstruction MSE and PSNR (pixels in [0, 1]), the mean image's
// MSE, the norm of its update, the attack's final objective and its
// method.
type score struct {
	labels, mse, psnr, base, norm, obj float64
	method                             string
}

func attack(m *nn.Model, inv inverter, train *data.Dataset, lo int, jb job,
	rng *rand.Rand, prior []float64, mean, std float64) (score, error) {
	D := train.RowLen()
	b, steps, p := jb.b, jb.steps, jb.p
	k := p.Group()
	updates := make([][]float32, k)
	var truth []float64
	var labels []int
	n := b * steps // one node's samples
	if jb.same {
		n = b
	}
	x := make([]float32, n*D)
	y := make([]int, n)
	for j := range k {
		for i := range n {
			train.CopyRow(x[i*D:(i+1)*D], lo+j*n+i)
			y[i] = train.Y[lo+j*n+i]
		}
		if j == 0 {
			for _, v := range x {
				truth = append(truth, float64(v))
			}
			labels = append(labels, y...)
		}
		xs, ys := x, y
		if jb.same { // E passes over the one batch
			xs, ys = nil, nil
			for range steps {
				xs, ys = append(xs, x...), append(ys, y...)
			}
		}
		u, err := inversion.Update(m, xs, ys, b, jb.lr)
		if err != nil {
			return score{}, err
		}
		updates[j] = u
	}
	var s score
	for _, v := range updates[0] {
		s.norm += float64(v) * float64(v)
	}
	s.norm = math.Sqrt(s.norm)
	view, err := p.View(updates, rng)
	if err != nil {
		return score{}, err
	}
	if o, ok := inv.(oracle); ok && k == 1 {
		a := *o.Attacker
		a.Labels = labels
		inv = &a
	}
	out, err := inv.Invert(view, n*k, rng)
	if err != nil {
		return score{}, err
	}
	guess := out.Labels
	if k > 1 {
		guess = inversion.TopLabels(out.Labels, n)
	}
	s.labels = float64(inversion.LabelHits(guess, labels)) / float64(n)
	s.obj, s.method = out.Objective, out.Method
	if out.Recon == nil {
		s.mse, s.psnr = math.NaN(), math.NaN()
		for i := range n {
			s.base += inversion.MSE(prior, inversion.Pixels(truth[i*D:(i+1)*D], mean, std)) / float64(n)
		}
		return s, nil
	}
	truthPix := inversion.Pixels(truth, mean, std)
	errs := inversion.Match(truthPix, inversion.Pixels(out.Recon, mean, std), D)
	for i, e := range errs {
		s.mse += e / float64(n)
		s.psnr += inversion.PSNR(max(e, 1e-10)) / float64(n)
		s.base += inversion.MSE(prior, truthPix[i*D:(i+1)*D]) / float64(n)
	}
	return s, nil
}

// machine is the CPU model and the core count, for the record.
func machine() string {
	return fmt.Sprintf("%s, %d CPUs, %s", cpu.ModelName(), runtime.NumCPU(), runtime.Version())
}
