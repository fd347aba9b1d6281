package aggregate

import (
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// liveGrowth is the bytes fn leaves allocated, the median of five tries
// (another goroutine may allocate or free during one); fn makes its
// objects anew each time and returns them to be kept.
func liveGrowth(fn func() any) int64 {
	var tries []int64
	for range 5 {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		keep := fn()
		runtime.GC()
		runtime.ReadMemStats(&after)
		runtime.KeepAlive(keep)
		tries = append(tries, int64(after.HeapAlloc)-int64(before.HeapAlloc))
	}
	slices.Sort(tries)
	return tries[len(tries)/2]
}

// What a rule keeps after aggregating n inputs of dim floats is what
// Spec.Scratch says, within a stated tolerance.
func TestScratchMatchesTheHeap(t *testing.T) {
	const n, dim = 9, 20000
	rng := rand.New(rand.NewPCG(3, 4))
	xs := make([][]float32, n)
	for i := range xs {
		xs[i] = make([]float32, dim)
		for j := range xs[i] {
			xs[i][j] = float32(rng.NormFloat64())
		}
	}
	own := make([]float32, dim)
	dst := make([]float32, dim)
	specs := append(Names(), "bucketing+mean", "nnm+krum", "clip+median", "arc+trimmed_mean")
	for _, name := range specs {
		s, err := ParseSpec(name)
		if err != nil {
			t.Fatal(err)
		}
		p := Params{F: 1}
		if s.Uses("clip") {
			p.Clip = 1
		}
		got := liveGrowth(func() any {
			r, err := s.New(p)
			if err != nil {
				t.Fatal(err)
			}
			if c, ok := r.(Centered); ok && s.AroundOwn() {
				err = c.AggregateAround(dst, own, xs)
			} else {
				err = r.Aggregate(dst, xs)
			}
			if err != nil {
				t.Fatal(err)
			}
			return r
		})
		want, what := s.Scratch(n, dim)
		t.Logf("%-20s heap %8d scratch %8d", name, got, want)
		// Buckets and clipped copies are counted as many as there are
		// inputs: an upper bound (2 per bucket by default; only the
		// largest are clipped). The rest is counted within 2 % and 2 KiB
		// (small structures, a map's buckets).
		tol := want/50 + 2048
		if strings.Contains(what, "up to") {
			if got > want+tol {
				t.Errorf("%s: %d bytes kept, more than the bound %d", name, got, want)
			}
			continue
		}
		if got < want-tol || got > want+tol {
			t.Errorf("%s: %d bytes kept, Scratch says %d (± %d)", name, got, want, tol)
		}
	}
}
