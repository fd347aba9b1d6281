package main

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/trellis-fl/trellis/data"
	"github.com/trellis-fl/trellis/internal/seed"
	"github.com/trellis-fl/trellis/nn"
	"github.com/trellis-fl/trellis/privacy/inversion"
)

const (
	// pool is the training images the rounds table trains its models on,
	// the ones after the targets' (so disjoint from every target's).
	pool = 10000
	// A round of the rounds table: roundSteps SGD steps of roundBatch
	// images (the quickstart's rate), a third of a pass over the pool.
	roundSteps, roundBatch = 50, 32
	// localB is the local table's images a step.
	localB = 4
)

// trainedRounds are the rounds table's training rounds before the
// attacked one.
var trainedRounds = []int{0, 5, 20}

// localRounds is the rounds the local table's models are trained for
// first (flag -localrounds; 0: the seed-drawn start).
var localRounds int

// lenet is the CNN whose labels the rounds table attacks (convolutions
// and pooling, no batch norm or dropout).
var lenet = model{"LeNet-5", nn.Spec{Kind: "lenet5", Input: []int{1, 28, 28}, Classes: 10}}

// attacker is the dense attacker of a model at net's parameters, for
// nodes taking steps local steps.
func (s *study) attacker(net *inversion.Net, steps int) *inversion.Attacker {
	return &inversion.Attacker{Net: net, LR: s.lr, Steps: steps, MeanProbs: net.MeanProbs(s.own),
		DLG: inversion.DLGConfig{Iterations: s.iters, LR: 0.1, Lo: -s.mean / s.std, Hi: (1 - s.mean) / s.std, Prior: s.prior, InitNoise: 0.5}}
}

// labelsOnly attacks a model whose images are out of reach here (a CNN):
// the labels from its last layer alone (iDLG for one image, the counts for
// more); no reconstruction.
type labelsOnly struct {
	h         inversion.LastLayer
	lr        float64
	meanProbs []float64
}

func (a labelsOnly) Invert(view []float32, n int, _ *rand.Rand) (inversion.Outcome, error) {
	g := make([]float64, len(view))
	for i, v := range view {
		g[i] = -float64(v) / a.lr
	}
	out := inversion.Outcome{Method: "labels only"}
	if n == 1 {
		out.Labels = []int{a.h.LabelOne(g)}
	} else {
		out.Labels = a.h.LabelCounts(g, n, a.meanProbs)
	}
	return out, nil
}

// span is the indices [lo, lo+n).
func span(lo, n int) []int32 {
	idx := make([]int32, n)
	for i := range idx {
		idx[i] = int32(lo + i)
	}
	return idx
}

const roundsHeader = "| model | rounds | test acc. | batch | inversion | label recovery | recon. MSE | PSNR (dB) | baseline MSE | update norm | seconds |\n" +
	"|---|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|"

// roundsTable: the attack on one step's update from a model first trained
// for r rounds (the attacker knows that start model), for the dense
// models and LeNet-5's labels; no protection.
func (s *study) roundsTable() error {
	fmt.Printf("\nModels trained for r rounds before the attacked update (a round: %d SGD steps of %d images from a pool of %d other training images, rate %g; test accuracy on %d test images the attacker does not hold), one step, no protection:\n\n",
		roundSteps, roundBatch, pool, s.lr, 2000)
	fmt.Println(roundsHeader)
	poolIdx, accIdx, ownIdx := span(s.targets*maxK*maxB, pool), span(1000, 2000), span(0, 1000)
	for mi, md := range append(s.models[:len(s.models):len(s.models)], lenet) {
		if !s.selected(md.name, "none") {
			continue
		}
		if err := s.roundsOf(mi, md, poolIdx, accIdx, ownIdx); err != nil {
			return err
		}
	}
	return nil
}

func (s *study) roundsOf(mi int, md model, poolIdx, accIdx, ownIdx []int32) error {
	tr, err := nn.Build(md.spec, s.sd, nn.Options{Batch: roundBatch})
	if err != nil {
		return err
	}
	defer tr.Close()
	opt, err := nn.NewOptimizer(nn.OptimizerSpec{Name: "sgd", LR: s.lr}, tr.NumParams())
	if err != nil {
		return err
	}
	src := data.NewBatcher(s.train, poolIdx, seed.Stream(s.sd, seed.Train, 96, uint64(mi)), nil)
	done := 0
	for _, r := range trainedRounds {
		if r > done {
			if _, err := tr.Train(src, opt, nn.TrainConfig{Steps: (r - done) * roundSteps}, nil); err != nil {
				return err
			}
			done = r
		}
		acc, err := tr.Evaluate(data.NewEvalBatcher(s.test, accIdx, nil))
		if err != nil {
			return err
		}
		base, err := nn.Build(md.spec, s.sd, nn.Options{Batch: maxB})
		if err != nil {
			return err
		}
		if err := base.SetParams(tr.Params()); err != nil {
			base.Close()
			return err
		}
		var inv inverter
		var att *inversion.Attacker
		if md.spec.Kind == "lenet5" {
			h, err := inversion.LastLayerOf(base)
			if err != nil {
				base.Close()
				return err
			}
			probs := make([]float32, len(ownIdx)*base.Classes())
			if err := base.Outputs(data.NewEvalBatcher(s.test, ownIdx, nil), probs, nil, nil); err != nil {
				base.Close()
				return err
			}
			mp := make([]float64, base.Classes())
			for i, p := range probs {
				mp[i%len(mp)] += float64(p) / float64(len(ownIdx))
			}
			inv = labelsOnly{h: h, lr: s.lr, meanProbs: mp}
		} else {
			net, err := inversion.NetOf(base)
			if err != nil {
				base.Close()
				return err
			}
			att = s.attacker(net, 1)
			inv = att
		}
		cells := []roundCell{{1, inv, ""}, {maxB, inv, ""}}
		if att != nil { // and the batch with its true labels: what the counts' errors cost
			cells = append(cells, roundCell{maxB, oracle{att}, ", true labels"})
		}
		for _, c := range cells {
			b := c.b
			start := time.Now()
			avg, err := s.measure(base, c.inv, []uint64{uint64(mi), 96, uint64(r), uint64(b)}, job{b: b, steps: 1, p: inversion.Protection{Kind: "none"}})
			if err != nil {
				base.Close()
				return err
			}
			fmt.Printf("| %s | %d | %.1f %% | %d | %s | %.0f %% | %s | %s | %.4f | %.3f | %.0f |\n", md.name, r, 100*acc.Accuracy, b, avg.method+c.tag,
				100*avg.labels, dash(avg.mse, "%.4f"), dash(avg.psnr, "%.1f"), avg.base, avg.norm, time.Since(start).Seconds())
		}
		base.Close()
	}
	return nil
}

// roundCell is a row of the rounds table: b images a target, attacked by
// inv, the method's name suffixed with tag.
type roundCell struct {
	b   int
	inv inverter
	tag string
}

// dash formats v, or "—" for NaN (no reconstruction).
func dash(v float64, format string) string {
	if math.IsNaN(v) {
		return "—"
	}
	return fmt.Sprintf(format, v)
}

const localHeader = "| model | E | batches | attack | label recovery | recon. MSE | PSNR (dB) | baseline MSE | update norm | final J | seconds |\n" +
	"|---|---:|---|---|---:|---:|---:|---:|---:|---:|---:|"

// localTable: updates after E local steps of localB images, on one batch
// (E passes over it) or on E distinct batches, from the seed-drawn start;
// the baseline reads −u/(E·lr) as one gradient, the unrolled attack
// simulates the steps. Both attacks of a cell start from the same dummies
// (the random stream does not depend on the attack), so at E = 1 their
// rows agree.
func (s *study) localTable() error {
	from := "the seed-drawn start"
	if localRounds > 0 {
		from = fmt.Sprintf("the model trained for %d rounds (as in the rounds table)", localRounds)
	}
	fmt.Printf("\nE local SGD steps of %d images (rate %g) on one batch or on E distinct batches, from %s, no protection; baseline: −u/(E·lr) read as one gradient; unrolled: the E steps simulated on the dummies:\n\n", localB, s.lr, from)
	fmt.Println(localHeader)
	for mi, md := range s.models {
		if !s.selected(md.name, "none") {
			continue
		}
		base, err := s.startModel(mi, md, localRounds)
		if err != nil {
			return err
		}
		net, err := inversion.NetOf(base)
		if err == nil {
			err = s.localRows(mi, md, base, s.attacker(net, 0))
		}
		base.Close()
		if err != nil {
			return err
		}
	}
	return nil
}

// startModel is model md (s.models[mi]) at the seed, trained for r
// rounds first as the rounds table trains it (the same increments, so
// the same model as that table's row r), with batch maxB.
func (s *study) startModel(mi int, md model, r int) (*nn.Model, error) {
	base, err := nn.Build(md.spec, s.sd, nn.Options{Batch: maxB})
	if err != nil || r == 0 {
		return base, err
	}
	tr, err := nn.Build(md.spec, s.sd, nn.Options{Batch: roundBatch})
	if err != nil {
		base.Close()
		return nil, err
	}
	defer tr.Close()
	opt, err := nn.NewOptimizer(nn.OptimizerSpec{Name: "sgd", LR: s.lr}, tr.NumParams())
	if err != nil {
		base.Close()
		return nil, err
	}
	src := data.NewBatcher(s.train, span(s.targets*maxK*maxB, pool), seed.Stream(s.sd, seed.Train, 96, uint64(mi)), nil)
	done := 0
	for _, k := range append(trainedRounds[:len(trainedRounds):len(trainedRounds)], r) {
		if k > done && k <= r {
			if _, err := tr.Train(src, opt, nn.TrainConfig{Steps: (k - done) * roundSteps}, nil); err != nil {
				base.Close()
				return nil, err
			}
			done = k
		}
	}
	if err := base.SetParams(tr.Params()); err != nil {
		base.Close()
		return nil, err
	}
	return base, nil
}

// localRows prints the local table's rows of one model.
func (s *study) localRows(mi int, md model, base *nn.Model, att *inversion.Attacker) error {
	for _, e := range []int{1, 2, 5} {
		for _, same := range []bool{false, true} {
			if e == 1 && same {
				continue
			}
			for _, v := range []struct {
				unroll, oracle bool
				name           string
			}{{false, false, "baseline"}, {true, false, "unrolled"}, {false, true, "baseline, true labels"}, {true, true, "unrolled, true labels"}} {
				a := *att
				a.Steps, a.Batch, a.Unroll = e, localB, v.unroll
				var inv inverter = &a
				if v.oracle {
					inv = oracle{&a}
				}
				start := time.Now()
				avg, err := s.measure(base, inv, []uint64{uint64(mi), 95, uint64(e), b2u(same)}, job{b: localB, steps: e, same: same, p: inversion.Protection{Kind: "none"}})
				if err != nil {
					return err
				}
				batches, name := "distinct", v.name
				if same {
					batches = "one"
				}
				fmt.Printf("| %s | %d | %s | %s | %.0f %% | %.4f | %.1f | %.4f | %.3f | %.3g | %.0f |\n", md.name, e, batches, name,
					100*avg.labels, avg.mse, avg.psnr, avg.base, avg.norm, avg.obj, time.Since(start).Seconds())
			}
		}
	}
	return nil
}

// oracle is an attacker given the target's true labels (in step order)
// instead of its recovered ones: what the reconstruction does when the
// labels are right.
type oracle struct{ *inversion.Attacker }

func b2u(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}
