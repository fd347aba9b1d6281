package audit

import (
	"context"
	"fmt"
	"math"
	"sync"

	"github.com/trellis-fl/trellis/data"
	"github.com/trellis-fl/trellis/internal/seed"
	"github.com/trellis-fl/trellis/nn"
	"github.com/trellis-fl/trellis/privacy"
)

// This file is LiRA for a run's audit (privacy.FitLiRA): shadow models
// of an audited node are trained the way the node trains (Target.Shadow),
// each on a random subset of the node's pool, its training and test
// samples, that takes each sample with probability |train| / |pool| (so a
// shadow's training set is as large as the node's, on average). A sample
// of the node is then "in" for the shadows that drew it and "out" for the
// others. For strategy local the shadows are exact replicas of the node's
// training; for a collaborative run they leave out what the neighbours'
// models bring in, which makes the attack weaker, never invalid (every
// test's certified ε lower bound holds whatever the test).

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
	r := seed.Stream(s, purpose, 1, uint64(i), uint64(k))
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

// lira runs LiRA on target lt with k shadow models (trained t.Workers at
// a time) and returns the attack's result and the scores of the scored
// members and non-members (higher: more likely a member).
func (t Target) lira(ctx context.Context, lt liraTarget, k int, delta float64) (*privacy.AuditResult, []float64, []float64, error) {
	if t.Shadow == nil {
		return nil, nil, nil, fmt.Errorf("no shadow model trainer")
	}
	pool := append(append([]int32(nil), lt.train...), lt.test...)
	scored := append(append([]int32(nil), lt.mem...), lt.non...)
	pi := float64(len(lt.train)) / float64(len(pool))
	shadows := make([]privacy.Shadow, k)
	errs := make([]error, k)
	jobs := make(chan int)
	var wg sync.WaitGroup
	for range max(1, min(t.Workers, k)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				sub, in := shadowSubset(t.Seed, lt.node, j, pool, pi)
				shadowSeed := seed.Derive(t.Seed, purpose, 2, uint64(lt.node), uint64(j))
				m, err := t.Shadow(ctx, lt.node, shadowSeed, sub, len(lt.train), lt.shift)
				if err != nil {
					errs[j] = fmt.Errorf("shadow %d: %w", j, err)
					continue
				}
				phi, err := confidence(m, t.Train, scored, lt.shift)
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
	phi, err := confidence(lt.model, t.Train, scored, lt.shift)
	if err != nil {
		return nil, nil, nil, err
	}
	scores, err := fit.Scores(phi)
	if err != nil {
		return nil, nil, nil, err
	}
	mem, non := scores[:len(lt.mem)], scores[len(lt.mem):]
	r, err := privacy.ScoreAudit(mem, non, delta, Alpha)
	if err != nil {
		return nil, nil, nil, err
	}
	return &r, mem, non, nil
}
