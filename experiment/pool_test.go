package experiment

import (
	"testing"

	"github.com/trellis-fl/trellis/config"
	"github.com/trellis-fl/trellis/metrics"
	"github.com/trellis-fl/trellis/sim"
	"github.com/trellis-fl/trellis/wire"
)

// A simulation's models share one pool of scratch, which grows to the
// nodes computing at once (the workers), and hold their parameters and
// state only; a node process's model (BuildNode) owns its scratch.
func TestSimulatedModelsShareAPool(t *testing.T) {
	c := config.Default()
	c.Nodes, c.Rounds, c.Data.Samples = 6, 2, 600
	c.Model.Hidden = []int{16}
	c.Strategy.Name = "dmtt" // its combine runs passes (Validate) in End
	c.Model.Head = "evidential"
	s := validSetup(t, c)
	const workers = 2
	s.Workers = workers
	b, err := s.Build()
	if err != nil {
		t.Fatal(err)
	}
	pool := b.Nodes[0].Model().Pool()
	for i, n := range b.Nodes {
		m := n.Model()
		if m.Pool() == nil || m.Pool() != pool {
			t.Fatalf("node %d's model does not take its scratch from the run's pool", i)
		}
		if want := 4 * (m.NumParams() + len(m.State())); m.MemoryBytes() != want {
			t.Errorf("node %d's model holds %d bytes, want %d (parameters and state)", i, m.MemoryBytes(), want)
		}
	}
	if err := sim.Run(t.Context(), b.Config, b.Nodes, metrics.SinkFunc(func(*metrics.Round) error { return nil })); err != nil {
		t.Fatal(err)
	}
	if n := pool.Size(); n < 1 || n > workers {
		t.Errorf("the pool made %d scratches for %d workers", n, workers)
	}
	one, err := BuildNode(c, 1, wire.NewSeedKeys(c.Seed, c.Nodes), nil)
	if err != nil {
		t.Fatal(err)
	}
	if one.Model().Pool() != nil {
		t.Error("a node process's model takes its scratch from a pool")
	}
}

// validSetup is the setup of c, which must validate, on its dataset.
func validSetup(t *testing.T, c config.Config) Setup {
	t.Helper()
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	tt, err := LoadData(c)
	if err != nil {
		t.Fatal(err)
	}
	s, err := SetupOf(c, tt)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
