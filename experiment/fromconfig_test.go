package experiment

import (
	"strings"
	"testing"

	"github.com/trellis-fl/trellis/config"
)

func TestInitPerNode(t *testing.T) {
	for _, c := range []struct {
		init string
		same bool
	}{{"same", true}, {"per_node", false}} {
		cfg, err := config.Parse([]byte("init = \""+c.init+"\"\nnodes = 3\n[model]\nhidden = [4]"), "t")
		if err != nil {
			t.Fatal(err)
		}
		s, err := SetupOf(cfg, loadMNIST(t))
		if err != nil {
			t.Fatal(err)
		}
		s.Pool = 300
		b, err := s.Build()
		if err != nil {
			t.Fatal(err)
		}
		a, z := b.Nodes[0].Model().Params(), b.Nodes[2].Model().Params()
		if (a[0] == z[0] && a[1] == z[1]) != c.same {
			t.Errorf("init = %s: nodes 0 and 2 start alike = %v", c.init, !c.same)
		}
	}
	if _, err := config.Parse([]byte(`init = "random"`), "t"); err == nil || !strings.Contains(err.Error(), "per_node") {
		t.Errorf("bad init: %v", err)
	}
}
