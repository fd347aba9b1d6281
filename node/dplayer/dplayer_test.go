package dplayer

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/trellis-fl/trellis/internal/seed"
	"github.com/trellis-fl/trellis/nn"
	"github.com/trellis-fl/trellis/node"
	"github.com/trellis-fl/trellis/node/internal/nodetest"
	"github.com/trellis-fl/trellis/node/trustlayer"
	"github.com/trellis-fl/trellis/privacy"
	"github.com/trellis-fl/trellis/strategy"
	"github.com/trellis-fl/trellis/trust"
	"github.com/trellis-fl/trellis/wire"
)

func bigModel(t *testing.T, in int) *nn.Model {
	t.Helper()
	m, err := nn.Build(nn.Spec{Kind: "logreg", Input: []int{in}, Classes: 2}, 1, nn.Options{Batch: 4})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestDPLayerNoiseIsZC drives the layer alone (Begin, Outbox, End): with no
// training the release is start + N(0, (zC)²) per coordinate, and an update
// far over the bound is clipped to norm C before the noise.
func TestDPLayerNoiseIsZC(t *testing.T) {
	m := bigModel(t, 5000) // 10002 parameters
	const clip, z, delta = 0.5, 1.3, 1e-5
	l, err := New(0, m, seed.Seeded(7), clip, z, delta)
	if err != nil {
		t.Fatal(err)
	}
	start := append([]float32(nil), m.Params()...)
	if err := l.Begin(0, node.Neighborhood{}); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Outbox(0); err != nil {
		t.Fatal(err)
	}
	var s, s2 float64
	w := m.Params()
	for i := range w {
		d := float64(w[i] - start[i])
		s += d
		s2 += d * d
	}
	n := float64(len(w))
	mean, sd := s/n, math.Sqrt(s2/n-(s/n)*(s/n))
	// Standard errors: sd/√n ≈ 0.0065 for the mean, sd/√(2n) ≈ 0.46 % for sd.
	if math.Abs(mean) > 4*z*clip/math.Sqrt(n) || math.Abs(sd/(z*clip)-1) > 0.03 {
		t.Errorf("noise mean %.4f sd %.4f, want 0 and zC = %.4f", mean, sd, z*clip)
	}
	// A second Outbox in the same round draws nothing more.
	before := append([]float32(nil), w...)
	if _, err := l.Outbox(1); err != nil {
		t.Fatal(err)
	}
	for i := range w {
		if w[i] != before[i] {
			t.Fatal("a second exchange phase noised the model again")
		}
	}

	// Round 1: an update of norm 100 with noise negligible: clipped to C.
	l2, err := New(0, m, seed.Seeded(7), clip, 1e-9, delta)
	if err != nil {
		t.Fatal(err)
	}
	if err := l2.Begin(1, node.Neighborhood{}); err != nil {
		t.Fatal(err)
	}
	start = append(start[:0], w...)
	for i := range w {
		w[i] += float32(100 / math.Sqrt(n))
	}
	if _, err := l2.Outbox(0); err != nil {
		t.Fatal(err)
	}
	var norm2 float64
	for i := range w {
		d := float64(w[i] - start[i])
		norm2 += d * d
	}
	var rd node.Ready
	if err := l2.End(&rd); err != nil {
		t.Fatal(err)
	}
	p := nodetest.Privacy(rd)
	if got := math.Sqrt(norm2); math.Abs(got-clip) > 1e-4 || !p.Clipped || math.Abs(p.Norm-100) > 1e-3 {
		t.Errorf("released update norm %.6f (report norm %.4f clipped %v), want %v", got, p.Norm, p.Clipped, clip)
	}
}

// TestDPLayerEpsilonIsTheAccountants: after k rounds the privacy report
// exactly what privacy.EpsilonAfter gives for k unamplified Gaussian
// releases, and (k = 1) no more than the classic bound's ε when that is < 1.
func TestDPLayerEpsilonIsTheAccountants(t *testing.T) {
	m := bigModel(t, 3)
	const clip, z, delta = 1.0, 5.0, 1e-5
	l, err := New(3, m, seed.Seeded(1), clip, z, delta)
	if err != nil {
		t.Fatal(err)
	}
	for r := range 4 {
		if err := l.Begin(r, node.Neighborhood{}); err != nil {
			t.Fatal(err)
		}
		if _, err := l.Outbox(0); err != nil {
			t.Fatal(err)
		}
		var rd node.Ready
		if err := l.End(&rd); err != nil {
			t.Fatal(err)
		}
		want, _, err := privacy.EpsilonAfter(privacy.GaussianEvent{Multiplier: z, Sampling: privacy.Unamplified()}, r+1, delta, nil)
		if err != nil {
			t.Fatal(err)
		}
		p := nodetest.Privacy(rd)
		if p.Epsilon != want || p.Releases != r+1 || p.Delta != delta || p.Multiplier != z || p.Clip != clip || !p.Seeded || p.Mode != "node" {
			t.Errorf("round %d: report %+v, want ε %v after %d releases", r, p, want, r+1)
		}
		if r == 0 {
			if classic := math.Sqrt(2*math.Log(1.25/delta)) / z; p.Epsilon > classic {
				t.Errorf("one release: ε %v above the classic bound %v", p.Epsilon, classic)
			}
		}
	}
}

// multiShare sends the model to each neighbour one by one and the update
// to all: one release per round covers them all.
type multiShare struct {
	strategy.FedAvg
	upd []float32
}

func (s *multiShare) Share(v *strategy.View) []strategy.Outgoing {
	w := v.Model.Params()
	s.upd = make([]float32, len(w))
	for i := range w {
		s.upd[i] = w[i] - v.Start[i]
	}
	var out []strategy.Outgoing
	for _, j := range v.Neighbors {
		out = append(out, strategy.Outgoing{To: j, Tag: strategy.TagModel, Vector: w})
	}
	return append(out, strategy.Outgoing{To: strategy.Broadcast, Tag: strategy.TagUpdate, Vector: s.upd})
}

func (s *multiShare) Combine(*strategy.View, []strategy.Incoming) (map[int]float64, error) {
	return nil, nil
}

// tagShare sends one vector of the given tag.
type tagShare struct {
	strategy.FedAvg
	tag string
}

func (s *tagShare) Share(v *strategy.View) []strategy.Outgoing {
	return []strategy.Outgoing{{To: strategy.Broadcast, Tag: s.tag, Vector: v.Model.Params()}}
}

func dpNode(t *testing.T, st strategy.Strategy, random seed.Source) (*node.Node, *Layer) {
	t.Helper()
	ids, dir := wire.SimIdentities(3, 4)
	var l *Layer
	n := nodetest.NewNode(t, 0, ids, dir, st, func(c *node.Config) {
		var err error
		if random != nil {
			c.Random = random
		} else {
			random = seed.Seeded(c.Seed)
		}
		if l, err = New(0, c.Model, random, 1, 1, 1e-3); err != nil {
			t.Fatal(err)
		}
		c.Layers = []node.Layer{l}
		params := c.Model.NumParams()
		c.NewOptimizer = func() (nn.Optimizer, error) { return nn.NewOptimizer(nn.OptimizerSpec{LR: 0.1}, params) }
		if st.Name() == "dmtt" { // DMTT needs the trust layer, which goes first
			tl, err := trustlayer.New(c.Identity, c.Directory, trust.DefaultConfig())
			if err != nil {
				t.Fatal(err)
			}
			c.Layers = []node.Layer{tl, l}
		}
	})
	return n, l
}

// TestDPLayerOneReleasePerRound: a strategy that sends the model to three
// neighbours separately and the update to all is charged one release a
// round; what goes out is the noisy model (the one the node keeps) and
// the noisy update.
func TestDPLayerOneReleasePerRound(t *testing.T) {
	n, l := dpNode(t, &multiShare{}, nil)
	hood := node.Neighborhood{In: []int{1, 2, 3}, InDegree: []int{3, 3, 3}, Degree: 3}
	for r := range 3 {
		nodetest.Begin(t, r, hood, n)
		start := append([]float32(nil), l.start...) // the model at Begin
		out := nodetest.Outbox(t, n)
		if len(out) != 4 {
			t.Fatalf("round %d: %d messages, want 4", r, len(out))
		}
		w := n.Model().Params()
		for _, m := range out[:3] {
			for i := range w {
				if m.Payload.Data[i] != w[i] {
					t.Fatalf("round %d: the model sent to %d is not the node's noisy model", r, m.To)
				}
			}
		}
		noise := false
		for i := range w {
			if out[3].Payload.Data[i] != w[i]-start[i] {
				t.Fatalf("round %d: the update sent is not noisy model − start", r)
			}
			noise = noise || w[i] != start[i]
		}
		if !noise {
			t.Fatal("no noise")
		}
		rd := nodetest.End(t, n, node.EndOptions{Keep: true})
		if nodetest.Privacy(rd) == nil || nodetest.Privacy(rd).Releases != r+1 {
			t.Fatalf("round %d: report %+v, want %d releases", r, nodetest.Privacy(rd), r+1)
		}
	}
}

// TestDPLayerRefusesWhatItCannotCover: a tracker vector, or a "model" that
// is not the node's noisy model, stops the release with an error.
func TestDPLayerRefusesWhatItCannotCover(t *testing.T) {
	for _, tag := range []string{strategy.TagTracker, "custom"} {
		n, _ := dpNode(t, &tagShare{tag: tag}, nil)
		nodetest.Begin(t, 0, node.Neighborhood{In: []int{1}}, n)
		if _, _, err := n.Outbox(); err == nil || !strings.Contains(err.Error(), tag) {
			t.Errorf("tag %q: error %v, want a refusal naming it", tag, err)
		}
	}
	n, _ := dpNode(t, &fakeModel{}, nil)
	nodetest.Begin(t, 0, node.Neighborhood{In: []int{1}}, n)
	if _, _, err := n.Outbox(); err == nil || !strings.Contains(err.Error(), "noisy model") {
		t.Errorf("a model other than the node's: error %v", err)
	}
}

type fakeModel struct{ strategy.FedAvg }

func (*fakeModel) Share(v *strategy.View) []strategy.Outgoing {
	x := make([]float32, len(v.Model.Params()))
	return []strategy.Outgoing{{To: strategy.Broadcast, Tag: strategy.TagModel, Vector: x}}
}

// TestDPLayerNoiseSource: seeded noise is reproducible per node and round
// and differs between rounds; crypto noise (seed.Mixed with seed.Noise)
// is reported unseeded and differs between identical runs.
func TestDPLayerNoiseSource(t *testing.T) {
	draw := func(random seed.Source, r int) ([]float32, *node.PrivacyReport) {
		n, _ := dpNode(t, &tagShare{tag: strategy.TagModel}, random)
		hood := node.Neighborhood{In: []int{1}}
		for k := 0; k <= r; k++ {
			if err := n.Begin(k, hood); err != nil {
				t.Fatal(err)
			}
			nodetest.Outbox(t, n)
			if k < r {
				nodetest.End(t, n, node.EndOptions{Keep: true})
			}
		}
		w := append([]float32(nil), n.Model().Params()...)
		rd := nodetest.End(t, n, node.EndOptions{Keep: true})
		return w, nodetest.Privacy(rd)
	}
	a, pa := draw(nil, 1)
	b, _ := draw(nil, 1)
	c, _ := draw(nil, 0)
	if !pa.Seeded || !slices.Equal(a, b) || slices.Equal(a, c) {
		t.Errorf("seeded: same run equal %v, other round equal %v, seeded %v", slices.Equal(a, b), slices.Equal(a, c), pa.Seeded)
	}
	mixed := seed.Mixed{Seed: 1, Crypto: []uint64{seed.Noise}}
	x, px := draw(mixed, 0)
	y, _ := draw(mixed, 0)
	if px.Seeded || slices.Equal(x, y) {
		t.Errorf("crypto noise: seeded %v, two runs equal %v", px.Seeded, slices.Equal(x, y))
	}
}

// TestSampleDPLayerCharges: the DP-SGD layer trains through Config.Trainer
// and charges the round's steps — Poisson-subsampled with q when the
// batches are Poisson samples, unamplified for shuffled batches — exactly
// as the accountant does for the same events.
func TestSampleDPLayerCharges(t *testing.T) {
	for _, c := range []struct {
		cfg  nn.DPConfig
		samp privacy.Sampling
	}{
		{nn.DPConfig{Clip: 1, Multiplier: 1.1, Sampling: nn.PoissonBatches, Rate: 0.5}, privacy.Poisson(0.5)},
		{nn.DPConfig{Clip: 1, Multiplier: 1.1}, privacy.Unamplified()},
	} {
		ids, dir := wire.SimIdentities(3, 2)
		var l *Sample
		n := nodetest.NewNode(t, 0, ids, dir, strategy.Local{}, func(cf *node.Config) {
			var err error
			if l, err = NewSample(0, cf.Model, seed.Seeded(1), c.cfg, 1e-3); err != nil {
				t.Fatal(err)
			}
			cf.Layers, cf.Trainer = []node.Layer{l}, l
			cf.Train = nn.TrainConfig{Steps: 3}
		})
		var rd node.Ready
		for r := range 2 {
			nodetest.Begin(t, r, node.Neighborhood{In: []int{1}}, n)
			nodetest.Outbox(t, n)
			rd = nodetest.End(t, n, node.EndOptions{})
		}
		want, _, err := privacy.EpsilonAfter(privacy.GaussianEvent{Multiplier: 1.1, Sampling: c.samp}, 6, 1e-3, nil)
		if err != nil {
			t.Fatal(err)
		}
		if p := nodetest.Privacy(rd); p == nil || p.Epsilon != want || p.Releases != 6 || p.Mode != "sample" || p.Sampling != c.samp.String() {
			t.Errorf("%v: report %+v, want ε %v after 6 steps", c.samp, p, want)
		}
	}
}

// TestDPLayerWithEveryStrategy: with every built-in strategy, the release
// passes the layer's check (every vector derived from the noisy model), or
// the round stops with an error for the two that send what one release
// cannot cover (gradient tracking's tracker, Ditto's model trained in
// Share).
func TestDPLayerWithEveryStrategy(t *testing.T) {
	// ADMM sends ρ·x_i + w_ij: its dual w_ij carries past rounds' neighbour
	// messages, not the round's noisy update alone.
	refused := map[string]bool{"gradient_tracking": true, "gradient_tracking_sd": true, "function_sharing": true, "ditto": true, "admm": true}
	for _, name := range strategy.Names() {
		var p strategy.Params
		if name == "robust" || name == "rdpfl" {
			p.Rule = "median"
		}
		st, err := strategy.New(name, p)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		n, _ := dpNode(t, st, nil)
		var out []*wire.Message
		for r := range 2 { // Ditto shares from its second round on
			nodetest.Begin(t, r, node.Neighborhood{In: []int{1, 2}, InDegree: []int{2, 2}, Degree: 2}, n)
			if out, _, err = n.Outbox(); err != nil {
				break
			}
			if _, err = n.End(node.EndOptions{}); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
		}
		switch {
		case refused[name] && err == nil:
			t.Errorf("%s: released %d messages, want a refusal", name, len(out))
		case !refused[name] && err != nil:
			t.Errorf("%s: %v", name, err)
		}
	}
}
