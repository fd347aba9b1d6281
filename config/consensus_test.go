package config

import (
	"bytes"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"
)

const consensusBase = `
name = "c"
nodes = 8
rounds = 30
[topology]
kind = "ring"
[consensus]
`

// TestConsensusDefaults: a [consensus] section that names only its method
// gets the other keys' defaults; a config without it encodes no
// consensus key, so its resolved TOML (the hash's input) is unchanged.
func TestConsensusDefaults(t *testing.T) {
	c, err := Parse([]byte(consensusBase+`method = "dp_laplace_nozari"`+"\n"), "c.toml")
	if err != nil {
		t.Fatal(err)
	}
	want := ConsensusDefault()
	want.Method = "dp_laplace_nozari"
	if *c.Consensus != want || !c.IsConsensus() || c.Label() != "dp_laplace_nozari" {
		t.Errorf("got %+v (label %q), want %+v", *c.Consensus, c.Label(), want)
	}
	if p := c.ConsensusParams(); p.Epsilon != 1 || p.Decay != 0.5 || p.Bits != 512 {
		t.Errorf("params %+v", p)
	}
	var b bytes.Buffer
	if err := toml.NewEncoder(&b).Encode(Default()); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "consensus") {
		t.Error("the defaults encode a [consensus] section: every existing config's hash would change")
	}
	// The resolved config of a run parses back to itself.
	b.Reset()
	b.WriteString(ResolvedHeader)
	_ = toml.NewEncoder(&b).Encode(c)
	back, err := Parse(b.Bytes(), "config.toml")
	if err != nil || *back.Consensus != *c.Consensus {
		t.Errorf("resolved config: %+v, %v", back.Consensus, err)
	}
}

// TestConsensusRefusals: bad values, keys of the learning run the
// consensus run would ignore, method keys the method does not read, a
// time-varying topology, and [worst_case] alongside.
func TestConsensusRefusals(t *testing.T) {
	wantErr(t, "method", consensusBase+`method = "gossip"`, `consensus.method = "gossip"`, "dp_laplace_nozari")
	wantErr(t, "dim", consensusBase+`dim = 0`, "consensus.dim = 0")
	wantErr(t, "lo ≥ hi", consensusBase+"lo = 2.0\nhi = 1.0", "consensus.lo = 2", "lo < hi")
	wantErr(t, "std", consensusBase+"init = \"normal\"\nstd = 0.0", "consensus.std = 0")
	wantErr(t, "init", consensusBase+`init = "cauchy"`, `consensus.init = "cauchy"`)
	wantErr(t, "decay", consensusBase+"method = \"dp_laplace_huang\"\ndecay = 1.0", "consensus.decay = 1")
	wantErr(t, "epsilon", consensusBase+"method = \"dp_gossip\"\nepsilon = -1.0", "consensus.epsilon = -1")
	wantErr(t, "bits", consensusBase+"method = \"paillier\"\npaillier_bits = 100", "consensus.paillier_bits = 100")
	wantErr(t, "target", consensusBase+`target = 8`, "consensus.target = 8")
	wantErr(t, "colluders", consensusBase+`colluders = 8`, "consensus.colluders = 8")
	wantErr(t, "ignored keys", `name = "c"
eval_every = 2
[model]
kind = "logreg"
[training]
lr = 0.5
[adversary]
fraction = 0.2
[consensus]
`, "adversary.fraction, eval_every, model.kind, training.lr set, but task type consensus ([consensus]) ignores them")
	wantErr(t, "drops", strings.Replace(consensusBase, "[consensus]", "drop = 0.1\n[consensus]", 1), "topology.drop set, but task type consensus")
	wantErr(t, "method keys", consensusBase+"method = \"plain\"\nepsilon = 2.0\npaillier_bits = 1024",
		`consensus.epsilon, consensus.paillier_bits set, but consensus.method = "plain" does not read them`)
	wantErr(t, "mobility", `name = "c"
[topology]
kind = "mobility"
[consensus]
`, `topology.kind = "mobility"`, "static graph")
	wantErr(t, "worst case", consensusBase+`
[worst_case.defences.median]
"strategy.name" = "robust"
`, "[consensus] and [worst_case] together")
}

// TestConsensusSweep: a sweep over methods with one ε is valid (the
// method keys are judged per run), every run is consensus with its own
// section, and the method is the runs' label, not a swept key's value
// only.
func TestConsensusSweep(t *testing.T) {
	c, err := Parse([]byte(consensusBase+`epsilon = 0.5
[sweep.grid]
"consensus.method" = ["plain", "dp_laplace_huang"]
`), "c.toml")
	if err != nil {
		t.Fatal(err)
	}
	runs, keys, err := c.Expand()
	if err != nil || len(runs) != 2 || len(keys) != 1 || keys[0] != "consensus.method" {
		t.Fatalf("runs %d, keys %v, %v", len(runs), keys, err)
	}
	if runs[0].Config.Consensus == runs[1].Config.Consensus || runs[1].Config.Consensus.Method != "dp_laplace_huang" ||
		runs[0].Config.Consensus.Method != "plain" || runs[1].Config.Consensus.Epsilon != 0.5 || c.Consensus.Method != "plain" {
		t.Errorf("runs share or lost their sections: %+v, %+v", runs[0].Config.Consensus, runs[1].Config.Consensus)
	}
	// --set of a consensus key on a learning config makes a consensus run
	// with the defaults, refused here for the learning keys it keeps.
	l, _ := Parse([]byte(`name = "l"`+"\n"), "l.toml")
	if err := l.Set("consensus.method", "offsets"); err != nil || l.Consensus == nil || l.Consensus.Dim != 1 {
		t.Errorf("set: %+v, %v", l.Consensus, err)
	}
}
