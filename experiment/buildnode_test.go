package experiment

import (
	"crypto/rand"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/trellis-fl/trellis/node"
)

// BuildNode(i) builds the same node i as the whole simulation: same data,
// same initial model, same training.
func TestBuildNodeIsTheSimulationsNode(t *testing.T) {
	c := DefaultConfig()
	c.Nodes, c.Rounds, c.FinalRounds, c.Data.Samples = 6, 2, 1, 600
	c.Model.Hidden = []int{16}
	c.Topology.Kind, c.Topology.K = "kregular", 3
	c.Strategy.Name = "dmtt"
	c.Model.Head = "evidential"
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	tt, err := c.LoadData()
	if err != nil {
		t.Fatal(err)
	}
	s, err := c.Setup(tt)
	if err != nil {
		t.Fatal(err)
	}
	all, err := s.Build()
	if err != nil {
		t.Fatal(err)
	}
	one, err := c.BuildNode(4, NewSeedKeys(c.Seed, c.Nodes), nil)
	if err != nil {
		t.Fatal(err)
	}
	hood := node.Neighborhood{In: []int{1, 2}, InDegree: []int{3, 3}, Degree: 3}
	for _, n := range []*node.Node{all.Nodes[4], one} {
		if err := n.Begin(0, hood); err != nil {
			t.Fatal(err)
		}
		if _, err := n.Train(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	if !slices.Equal(all.Nodes[4].Model().Params(), one.Model().Params()) {
		t.Fatal("BuildNode's node 4 trains differently from the simulation's")
	}
	if _, err := c.BuildNode(6, NewSeedKeys(c.Seed, c.Nodes), nil); err == nil {
		t.Fatal("node 6 of 6 built")
	}
}

// Key files written by WriteKeyFiles are read back; a wrong, corrupt or
// mismatched file is a clear error.
func TestKeyFiles(t *testing.T) {
	dir := t.TempDir()
	if err := WriteKeyFiles(dir, 3, rand.Reader); err != nil {
		t.Fatal(err)
	}
	k := KeyFiles{DirectoryPath: filepath.Join(dir, DirectoryKeyFile), PrivatePath: filepath.Join(dir, NodeKeyFile(2))}
	d, err := k.Directory()
	if err != nil || d.Len() != 3 {
		t.Fatalf("directory: %v (%v)", d, err)
	}
	id, err := k.Identity(2)
	if err != nil || id.ID() != 2 {
		t.Fatalf("identity: %v", err)
	}
	if fi, _ := os.Stat(k.PrivatePath); fi.Mode().Perm() != 0o600 {
		t.Errorf("private key file mode %v, want 0600", fi.Mode().Perm())
	}
	expect := func(err error, want string) {
		t.Helper()
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("error %v, want one containing %q", err, want)
		}
	}
	_, err = k.Identity(1)
	expect(err, "holds the key of node 2, this is node 1")
	other := t.TempDir()
	if err := WriteKeyFiles(other, 3, rand.Reader); err != nil {
		t.Fatal(err)
	}
	_, err = KeyFiles{DirectoryPath: k.DirectoryPath, PrivatePath: filepath.Join(other, NodeKeyFile(2))}.Identity(2)
	expect(err, "does not match its entry")
	bad := filepath.Join(dir, "bad.keys")
	os.WriteFile(bad, []byte("0 abcd\n"), 0o600)
	_, err = KeyFiles{DirectoryPath: bad}.Directory()
	expect(err, "line 1: key of node 0 is not 32 bytes of hex")
	os.WriteFile(bad, []byte("x "+strings.Repeat("00", 32)+"\n"), 0o600)
	_, err = KeyFiles{DirectoryPath: bad}.Directory()
	expect(err, `node id "x"`)
	_, err = KeyFiles{DirectoryPath: filepath.Join(dir, "missing")}.Directory()
	expect(err, "no such file")
}
