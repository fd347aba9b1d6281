package experiment

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"sync"

	"github.com/trellis-fl/trellis/data"
	"github.com/trellis-fl/trellis/internal/seed"
	"github.com/trellis-fl/trellis/metrics"
	"github.com/trellis-fl/trellis/nn"
	"github.com/trellis-fl/trellis/node"
	"github.com/trellis-fl/trellis/privacy"
	"github.com/trellis-fl/trellis/sim"
)

// This file is LiRA for a run's audit (privacy.FitLiRA): shadow models
// of an audited node are trained the way the node trains — its model,
// optimizer, batch, local epochs and rounds, its DP setting with its noise
// multiplier and δ — but alone (strategy local), each on a random subset
// of the node's pool, its training and test samples, that takes each
// sample with probability |train| / |pool| (so a shadow's training set is
// as large as the node's, on average). A sample of the node is then "in"
// for the shadows that drew it and "out" for the others. For strategy
// local the shadows are exact replicas of the node's training; for a
// collaborative run they leave out what the neighbours' models bring in,
// which makes the attack weaker, never invalid (every test's certified ε
// lower bound holds whatever the test).

// auditPurpose names the audit's own random streams (which samples a
// shadow trains on, its seed, the scored subsets): not one of
// internal/seed's purposes, so independent of every stream of the run.
const auditPurpose uint64 = 0x6175646974 // "audit"

// liraTarget is one audited node.
type liraTarget struct {
	node        int
	train, test []int32 // its splits: the pool is train ∪ test
	mem, non    []int32 // the scored members and non-members
	shift       data.Transform
	model       *nn.Model
}

// confidence is LiRA's statistic φ = log(p/(1 − p)) of model m on samples
// idx (p the probability of the true label): from the cross-entropy loss
// for a softmax head (privacy.LogitConfidence), from the probabilities
// otherwise (clamped to [10⁻⁷, 1 − 10⁻⁷], float32's resolution).
func confidence(m *nn.Model, d *data.Dataset, idx []int32, shift data.Transform) ([]float64, error) {
	out := make([]float64, len(idx))
	b := data.NewBatcher(d, idx, nil, shift)
	if m.Head().Name() == "softmax" {
		if _, err := m.SampleLosses(b, out); err != nil {
			return nil, err
		}
		for i, l := range out {
			out[i] = privacy.LogitConfidence(l)
		}
		return out, nil
	}
	k := m.Classes()
	probs := make([]float32, len(idx)*k)
	if err := m.Outputs(b, probs, nil, nil); err != nil {
		return nil, err
	}
	for i, j := range idx {
		p := min(max(float64(probs[i*k+d.Y[j]]), 1e-7), 1-1e-7)
		out[i] = math.Log(p / (1 - p))
	}
	return out, nil
}

// shadowSubset is shadow k of node i's training set: each sample of the
// pool with probability pi, from the audit's stream for (i, k); never empty.
func shadowSubset(s uint64, i, k int, pool []int32, pi float64) (sub []int32, in map[int32]bool) {
	r := seed.Stream(s, auditPurpose, 1, uint64(i), uint64(k))
	in = make(map[int32]bool, len(pool))
	for _, j := range pool {
		if r.Float64() < pi {
			sub = append(sub, j)
			in[j] = true
		}
	}
	if len(sub) == 0 {
		sub, in[pool[0]] = pool[:1], true
	}
	return sub, in
}

// trainShadow trains shadow k of node i on the samples sub, as node i
// trains (see the file comment): a one-node experiment of s's model,
// training, rounds and DP setting, with node i's feature shift, seeded
// from the audit's stream for (i, k). train is node i's training split
// size, which fixes the noise multiplier and δ (the node's, even where
// the shadow's own size would calibrate another).
func (s Setup) trainShadow(ctx context.Context, i, k int, sub []int32, train int, shift data.Transform) (*nn.Model, error) {
	sh := s
	sh.Nodes, sh.Pool, sh.Partition, sh.Shift, sh.Fractions = 1, 64, data.PartitionConfig{Method: data.IID}, data.ShiftConfig{}, data.Fractions{}
	sh.Graph, sh.Strategy = nil, nil // one node, local
	sh.Byzantine, sh.ByzantineIDs, sh.Attack, sh.Drop = 0, nil, nil, 0
	sh.SameForAll, sh.ByzantineIdle, sh.Claims = false, false, sim.ClaimAttack{}
	sh.Trust, sh.GlobalTest, sh.EvalEvery = nil, 0, 0
	sh.WireRoundTrip, sh.Timings, sh.Random, sh.Workers, sh.NoVerifyCache = false, nil, nil, 1, true
	sh.Seed = seed.Derive(s.Seed, auditPurpose, 2, uint64(i), uint64(k))
	if s.Privacy != nil {
		nd, err := s.nodeDP(train)
		if err != nil {
			return nil, err
		}
		p := *s.Privacy
		p.Multiplier, p.TargetEpsilon, p.Delta = nd.z, 0, nd.delta
		sh.Privacy = &p
	}
	p, err := sh.plan()
	if err != nil {
		return nil, err
	}
	p.splits = []data.ClientSplit{{Train: sub, Test: sub[:1]}}
	p.shift = []data.Transform{shift}
	keys := NewSeedKeys(sh.Seed, 1)
	n, err := p.node(0, keys)
	if err != nil {
		return nil, err
	}
	cfg := sim.Config{Rounds: sh.Rounds, EvalEvery: sh.Rounds, Graph: p.graph, Identities: keys.ids, Seed: sh.Seed, Workers: 1}
	if err := sim.Run(ctx, cfg, []*node.Node{n}, metrics.SinkFunc(func(*metrics.Round) error { return nil })); err != nil {
		n.Model().Close()
		return nil, err
	}
	return n.Model(), nil
}

// liraAudit runs LiRA on target t with k shadow models (trained
// workers at a time) and returns the attack's result and the scores of
// the scored members and non-members (higher: more likely a member).
func (s Setup) liraAudit(ctx context.Context, d *data.Dataset, t liraTarget, k, workers int, delta float64) (*privacy.AuditResult, []float64, []float64, error) {
	pool := append(append([]int32(nil), t.train...), t.test...)
	scored := append(append([]int32(nil), t.mem...), t.non...)
	pi := float64(len(t.train)) / float64(len(pool))
	shadows := make([]privacy.Shadow, k)
	errs := make([]error, k)
	jobs := make(chan int)
	var wg sync.WaitGroup
	for range max(1, min(workers, k)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				sub, in := shadowSubset(s.Seed, t.node, j, pool, pi)
				m, err := s.trainShadow(ctx, t.node, j, sub, len(t.train), t.shift)
				if err != nil {
					errs[j] = fmt.Errorf("shadow %d: %w", j, err)
					continue
				}
				phi, err := confidence(m, d, scored, t.shift)
				m.Close()
				if err != nil {
					errs[j] = fmt.Errorf("shadow %d: %w", j, err)
					continue
				}
				sh := privacy.Shadow{Phi: phi, In: make([]bool, len(scored))}
				for e, x := range scored {
					sh.In[e] = in[x]
				}
				shadows[j] = sh
			}
		}()
	}
	for j := range k {
		jobs <- j
	}
	close(jobs)
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, nil, nil, err
		}
	}
	// Carlini et al. fit one variance per side below 64 shadows.
	fit, err := privacy.FitLiRA(shadows, k < 64)
	if err != nil {
		return nil, nil, nil, err
	}
	phi, err := confidence(t.model, d, scored, t.shift)
	if err != nil {
		return nil, nil, nil, err
	}
	scores, err := fit.Scores(phi)
	if err != nil {
		return nil, nil, nil, err
	}
	mem, non := scores[:len(t.mem)], scores[len(t.mem):]
	r, err := privacy.ScoreAudit(mem, non, delta, AuditAlpha)
	if err != nil {
		return nil, nil, nil, err
	}
	return &r, mem, non, nil
}

// auditWorkers is how many shadow models train at once.
func auditWorkers(s Setup) int {
	if s.Workers > 0 {
		return s.Workers
	}
	return runtime.GOMAXPROCS(0)
}
