package config

import (
	"errors"
	"fmt"
	"strings"

	"github.com/trellis-fl/trellis/aggregate"
	"github.com/trellis-fl/trellis/data"
	"github.com/trellis-fl/trellis/nn"
	"github.com/trellis-fl/trellis/strategy"
	"github.com/trellis-fl/trellis/topology"
)

// ModelSpec is the configured model for the dataset's samples (MNIST's
// shape when d is nil).
func (c Config) ModelSpec(d *data.Dataset) nn.Spec {
	input, classes := []int{1, 28, 28}, 10
	if d != nil {
		input, classes = d.Shape, d.NumClasses()
	}
	return nn.Spec{Kind: c.Model.Kind, Input: input, Classes: classes, Hidden: c.Model.Hidden,
		Dropout: c.Model.Dropout, BatchNorm: c.Model.BatchNorm, Head: c.Model.Head}
}

// RuleParams are robust's rule parameters but f, for the rule s.
func (c Config) RuleParams(s aggregate.Spec) aggregate.Params {
	st := c.Strategy
	p := aggregate.Params{M: st.M, Tau: st.Tau, Iterations: st.Iterations, FromPrevious: st.FromPrevious,
		Bucket: st.Bucket, Clip: st.Clip}
	if s.Uses("bucketing") {
		p.Seed = c.Seed // the bucketing permutation stream
	}
	return p
}

// StrategyParams turns the strategy keys into strategy.New's parameters,
// checking them by building one strategy: every check of every strategy is
// strategy.New's (its registry row's), with its errors naming the config
// key.
func (c Config) StrategyParams() (strategy.Params, error) {
	st := c.Strategy
	w, err := strategy.ParseWeighting(st.Weighting)
	if err != nil {
		return strategy.Params{}, fmt.Errorf("strategy.weighting: %w", err)
	}
	if st.Exchange != "" && st.Exchange != "model" && st.Exchange != "update" {
		return strategy.Params{}, fmt.Errorf("strategy.exchange = %q: valid values are \"model\" and \"update\"", st.Exchange)
	}
	p := strategy.Params{Weighting: w, Options: st.Options, Score: st.Score, Declared: c.DeclaredFraction(),
		Updates: st.Exchange == "update"}
	if f, ok := c.ExplicitF(); ok {
		p.F = &f
	}
	if st.Name == "robust" || st.Name == "rdpfl" {
		p.Rule = st.Rule // another strategy's rule is refused by validateSet when the file sets it
	}
	sp, err := aggregate.ParseSpec(st.Rule)
	if st.Name != "robust" || err != nil {
		sp = aggregate.Spec{} // no bucketing seed: it would be a parameter set
	}
	p.RuleParams = c.RuleParams(sp)
	p.NoPrediction = st.Prediction != nil && !*st.Prediction
	p.NoClipping = st.Clipping != nil && !*st.Clipping
	if _, err := strategy.New(st.Name, p); err != nil {
		return p, configKeyErr(err)
	}
	return p, nil
}

// configKeyErr names the config key of a strategy parameter strategy.New
// refused (strategy.ParamError), so that the message says what to change.
func configKeyErr(err error) error {
	var pe *strategy.ParamError
	if !errors.As(err, &pe) {
		return err
	}
	switch pe.Key {
	case "m, tau, iterations, from_previous, bucket, clip":
		return fmt.Errorf("strategy: m, tau, iterations, from_previous, bucket and clip are parameters of strategy.name = \"robust\"'s rule, not of %q", pe.Strategy)
	case "prediction, clipping":
		return fmt.Errorf("strategy: prediction and clipping are switches of strategy.name = \"rdpfl\", not of %q", pe.Strategy)
	}
	return fmt.Errorf("strategy.%s = %v: %s (strategy.name = %q)", pe.Key, pe.Value, pe.Problem, pe.Strategy)
}

// topologyErr prefixes an error of package topology with the config
// section, unless it already names it.
func topologyErr(err error) error {
	if strings.HasPrefix(err.Error(), "topology") {
		return err
	}
	return fmt.Errorf("topology: %w", err)
}

// graph builds the configured topology for n nodes.
func (c Config) graph(n int, seed uint64) (topology.Dynamic, error) {
	t := c.Topology
	static := func(g *topology.Graph, err error) (topology.Dynamic, error) {
		if err != nil {
			return nil, topologyErr(err)
		}
		return topology.Static(g), nil
	}
	switch t.Kind {
	case "complete":
		return static(topology.Complete(n))
	case "ring":
		return static(topology.Ring(n))
	case "kregular":
		return static(topology.KRegular(n, t.K, seed))
	case "erdos_renyi":
		return static(topology.ErdosRenyi(n, t.P, seed))
	case "small_world":
		return static(topology.SmallWorld(n, t.K, t.Beta, seed))
	case "star":
		return static(topology.Star(n, 0))
	case "edge_list":
		return static(topology.LoadEdgeList(t.File, n, false))
	case "trace":
		tr, err := topology.LoadTrace(t.File, n)
		if err != nil {
			return nil, topologyErr(err)
		}
		return tr, nil
	case "mobility":
		mc := topology.DefaultMobility(n, seed)
		mc.Connect = t.Connect
		m, err := topology.NewMobility(mc)
		if err != nil {
			return nil, topologyErr(err)
		}
		return m, nil
	}
	return nil, fmt.Errorf("topology.kind = %q: want one of %v", t.Kind, Topologies)
}

// Graph is the communication graph, round by round, of the run c
// describes: the one its simulation (and a deployment's monitor) uses,
// from the config and the seed alone.
func (c Config) Graph() (topology.Dynamic, error) { return c.graph(c.Nodes, c.Seed) }
