package config

import (
	"strings"
	"testing"

	"github.com/BurntSushi/toml"
)

// The scale settings: a sampled partition lets more nodes than samples
// run, and is refused without per_node, beyond the pool, or with per_node
// next to another method; a rotating global sample needs a sample size
// below the test set's.
func TestScaleSettings(t *testing.T) {
	// Without sampled, 100,000 nodes on 60,000 samples is refused, naming
	// the way out.
	wantErr(t, "more nodes than samples", "nodes = 100000\n[model]\nkind = \"logreg\"\n[topology]\nkind = \"kregular\"\nk = 10",
		"nodes = 100000", "60000 training samples", `partition.method = "sampled"`)
	wantErr(t, "data.samples below nodes", "nodes = 100\n[data]\nsamples = 50", "data.samples = 50", `partition.method = "sampled"`)
	c, err := Parse([]byte("nodes = 100000\n[model]\nkind = \"logreg\"\n[topology]\nkind = \"kregular\"\nk = 10\n[partition]\nmethod = \"sampled\"\nper_node = 10"), "t.toml")
	if err != nil {
		t.Fatalf("100,000 nodes drawing 10 samples each: %v", err)
	}
	if c.Partition.PerNode != 10 {
		t.Errorf("per_node = %d", c.Partition.PerNode)
	}
	if _, err := Parse([]byte("nodes = 100\n[data]\nsamples = 50\n[partition]\nmethod = \"sampled\"\nper_node = 50"), "t.toml"); err != nil {
		t.Errorf("100 nodes drawing all 50 samples: %v", err)
	}
	wantErr(t, "sampled without per_node", "[partition]\nmethod = \"sampled\"", "partition.per_node = 0", "set per_node ≥ 1")
	wantErr(t, "per_node beyond data.samples", "[data]\nsamples = 500\n[partition]\nmethod = \"sampled\"\nper_node = 501", "partition.per_node = 501", "allowed range 1 to 500")
	wantErr(t, "per_node beyond mnist", "[partition]\nmethod = \"sampled\"\nper_node = 60001", "partition.per_node = 60001", "allowed range 1 to 60000")
	wantErr(t, "negative per_node", "[partition]\nmethod = \"sampled\"\nper_node = -2", "partition.per_node = -2", "need ≥ 1")
	wantErr(t, "per_node with dirichlet", "[partition]\nper_node = 5", "partition.per_node = 5", `only partition.method = "sampled"`, `"dirichlet"`)
	wantErr(t, "too many index entries", "nodes = 100000\n[topology]\nkind = \"kregular\"\nk = 10\n[partition]\nmethod = \"sampled\"\nper_node = 60000",
		"partition.per_node = 60000", "6000000000 entries", "lower per_node or nodes")

	if _, err := Parse([]byte("[evaluation]\nglobal_test = 100\nglobal_sample = \"rotating\""), "t.toml"); err != nil {
		t.Errorf("a rotating sample of 100: %v", err)
	}
	if _, err := Parse([]byte("[evaluation]\nglobal_test = 100\nglobal_sample = \"first\""), "t.toml"); err != nil {
		t.Errorf("the first 100: %v", err)
	}
	wantErr(t, "rotating all", "[evaluation]\nglobal_sample = \"rotating\"", "evaluation.global_sample", "global_test = −1", "nothing to rotate")
	wantErr(t, "rotating none", "[evaluation]\nglobal_test = 0\nglobal_sample = \"rotating\"", "evaluation.global_sample", "global_test = 0")
	wantErr(t, "rotating the whole set", "[evaluation]\nglobal_test = 10000\nglobal_sample = \"rotating\"", "global_test = 10000 is the whole global test set")
	wantErr(t, "unknown sample", "[evaluation]\nglobal_test = 10\nglobal_sample = \"random\"", `evaluation.global_sample = "random"`, `"rotating"`)
}

// The new keys are left out of a resolved config at their defaults, so
// existing configs keep their hash; `config defaults` describes them.
func TestScaleKeysKeepHashesAndAreDescribed(t *testing.T) {
	var b strings.Builder
	if err := toml.NewEncoder(&b).Encode(Default()); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"per_node", "global_sample"} {
		if strings.Contains(b.String(), k) {
			t.Errorf("the resolved default config names %s", k)
		}
		if !strings.Contains(Defaults(), k) {
			t.Errorf("config defaults does not describe %s", k)
		}
	}
}
