package data

import (
	"bufio"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// mappedRSS is the resident bytes of this process's mappings of path
// (/proc/self/smaps).
func mappedRSS(t *testing.T, path string) int64 {
	t.Helper()
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Skipf("no /proc/self/smaps: %v", err)
	}
	defer f.Close()
	var rss int64
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		switch {
		case len(fields) >= 5 && strings.Contains(fields[0], "-") && !strings.HasSuffix(fields[0], ":"):
			in = len(fields) >= 6 && fields[len(fields)-1] == path
		case in && fields[0] == "Rss:":
			kb, err := strconv.ParseInt(fields[1], 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			rss += kb << 10
		}
	}
	return rss
}

// Reading the whole test set of a shared file leaves at most about one
// stream window of it in the process's resident set: a node process's
// memory is not the 31 MB MNIST test set it evaluates on at every round.
// The same pass with the pages kept (no dropper) holds the whole set, so
// the measure can tell the two apart.
func TestSharedTestSetIsStreamed(t *testing.T) {
	const rows, rowLen = 3000, 784 // 9.4 MB of float32, several windows
	test := &Dataset{Name: "test", Shape: []int{rowLen}, Classes: []string{"a", "b"}, X: make([]float32, rows*rowLen), Y: make([]int, rows)}
	for i := range test.X {
		test.X[i] = float32(i%1013) * 0.5
	}
	train := &Dataset{Name: "train", Shape: []int{rowLen}, Classes: test.Classes, X: make([]float32, 4*rowLen), Y: make([]int, 4)}
	path := filepath.Join(t.TempDir(), "data")
	if err := WriteShared(path, TrainTest{Train: train, Test: test}, nil); err != nil {
		t.Fatal(err)
	}
	s, err := OpenShared(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.Test.stream == nil {
		t.Fatal("the test set of a shared file is not streamed")
	}
	pass := func() {
		b := NewBatcher(s.Test, s.Test.All(), nil, nil)
		x, y := make([]float32, 32*rowLen), make([]int, 32)
		sum := float32(0)
		for n := b.Next(x, y); n > 0; n = b.Next(x, y) {
			for _, v := range x[:n*rowLen] {
				sum += v
			}
		}
		if sum == 0 {
			t.Fatal("the pass read nothing")
		}
	}
	setBytes := int64(rows * rowLen * 4)
	pass()
	// Besides the window: the labels' and the train set's pages, a page
	// at each section's edge.
	if got, most := mappedRSS(t, path), int64(SharedStreamWindow)+64<<10; got > most {
		t.Errorf("after a streamed pass %d bytes of the file are resident, want ≤ %d (the test set is %d)", got, most, setBytes)
	}
	kept := s.Test.stream
	s.Test.stream = nil
	pass()
	if got := mappedRSS(t, path); got < setBytes {
		t.Errorf("a pass that keeps its pages leaves %d bytes resident, fewer than the set's %d: the measure cannot tell", got, setBytes)
	}
	s.Test.stream = kept
}
