package nn

import (
	"math"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/trellis-fl/trellis/internal/memsize"
)

var footprintSpecs = []Spec{
	{Kind: "logreg", Input: []int{1, 28, 28}, Classes: 10},
	{Kind: "logreg", Input: []int{561}, Classes: 6},
	{Kind: "mlp", Input: []int{1, 28, 28}, Classes: 10, Hidden: []int{256, 128}},
	{Kind: "mlp", Input: []int{20}, Classes: 3, Hidden: []int{7}, Dropout: 0.3},
	{Kind: "mlp", Input: []int{3, 8, 8}, Classes: 4, Hidden: []int{16, 8, 5}, BatchNorm: true, Dropout: 0.1, Head: "evidential"},
	{Kind: "mlp", Input: []int{5}, Classes: 2},
	{Kind: "femnist_cnn", Input: []int{1, 28, 28}, Classes: 62},
	{Kind: "lenet5", Input: []int{1, 28, 28}, Classes: 10},
	{Kind: "lenet5", Input: []int{3, 32, 32}, Classes: 10},
}

// A footprint's counts are a built model's, exactly: parameters, state,
// feature width, layers and Model.MemoryBytes.
func TestFootprintCountsTheBuiltModel(t *testing.T) {
	for _, s := range footprintSpecs {
		for _, batch := range []int{1, 7, 32} {
			m, err := Build(s, 1, Options{Batch: batch})
			if err != nil {
				t.Fatal(err)
			}
			f, err := s.Footprint(batch)
			if err != nil {
				t.Fatal(err)
			}
			if f.Params != int64(m.NumParams()) || f.State != int64(len(m.State())) || f.Feature != int64(m.FeatureSize()) ||
				len(f.Layers) != len(m.layers) || f.MemoryBytes(batch) != int64(m.MemoryBytes()) {
				t.Errorf("%s %v batch %d: footprint %d params, %d state, feature %d, %d layers, %d bytes; model %d, %d, %d, %d, %d",
					s.Kind, s.Hidden, batch, f.Params, f.State, f.Feature, len(f.Layers), f.MemoryBytes(batch),
					m.NumParams(), len(m.State()), m.FeatureSize(), len(m.layers), m.MemoryBytes())
			}
			m.Close()
		}
	}
	for _, s := range []Spec{{Kind: "lenet5", Input: []int{1, 32, 32}, Classes: 10}, {Kind: "nosuch", Input: []int{4}, Classes: 2},
		{Kind: "mlp", Input: []int{4}, Classes: 1}, {Kind: "mlp", Input: []int{4}, Classes: 2, Hidden: []int{0}},
		{Kind: "mlp", Input: []int{4}, Classes: 2, Head: "nosuch"}} {
		if _, err := s.Footprint(4); err == nil {
			t.Errorf("%+v: no error", s)
		}
	}
	if _, err := footprintSpecs[0].Footprint(0); err == nil {
		t.Error("batch 0: no error")
	}
}

// A huge model is counted, not allocated.
func TestFootprintOfAHugeModel(t *testing.T) {
	f, err := Spec{Kind: "mlp", Input: []int{1000000}, Classes: 10, Hidden: []int{1000000}}.Footprint(64)
	if err != nil {
		t.Fatal(err)
	}
	if want := int64(1000000*1000000 + 1000000 + 1000000*10 + 10); f.Params != want {
		t.Errorf("params %d, want %d", f.Params, want)
	}
}

// heapGrowth is the bytes fn allocates.
func heapGrowth(fn func()) int64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	return int64(after.TotalAlloc - before.TotalAlloc)
}

// liveGrowth is the bytes fn leaves allocated.
func liveGrowth(fn func()) int64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	fn()
	runtime.GC()
	runtime.ReadMemStats(&after)
	return int64(after.HeapAlloc) - int64(before.HeapAlloc)
}

// What the runtime really allocates matches the footprint: Build's heap
// growth is the parameters, gradients, state and buffers plus the layer
// structures, the wide convolutions' row offsets and the matrix engine
// (under 32 KiB here); a first training step leaves the engine's
// workspace; NewDPSGD allocates PerSample (and its structure).
func TestFootprintMatchesTheHeap(t *testing.T) {
	const slack = 32 << 10
	for _, s := range footprintSpecs {
		if s.BatchNorm { // DP-SGD refuses batch norm; the rest is tested by the other specs
			continue
		}
		const batch = 16
		f, err := s.Footprint(batch)
		if err != nil {
			t.Fatal(err)
		}
		// The least of three tries: another goroutine of the process (the
		// collector's, the test runner's) may allocate during one.
		built, step, dp := int64(math.MaxInt64), int64(math.MaxInt64), int64(math.MaxInt64)
		for range 3 {
			var m *Model
			built = min(built, heapGrowth(func() { m, err = Build(s, 1, Options{Batch: batch}) }))
			if err != nil {
				t.Fatal(err)
			}
			x := make([]float32, batch*size(s.Input))
			y := make([]int, batch)
			rng := rand.New(rand.NewPCG(1, 2))
			step = min(step, liveGrowth(func() { _, err = m.Gradient(x, y, batch, rng) }))
			if err != nil {
				t.Fatal(err)
			}
			dp = min(dp, heapGrowth(func() { _, err = NewDPSGD(m, DPConfig{Clip: 1}, nil) }))
			if err != nil {
				t.Fatal(err)
			}
			m.Close()
		}
		want := 2*memsize.Floats(f.Params) + memsize.Floats(f.State) + f.Buffers
		if built < want || built > want+slack {
			t.Errorf("%s %v: Build allocated %d bytes, footprint %d (+ at most %d)", s.Kind, s.Hidden, built, want, slack)
		}
		// The workspace is a lower bound within 35 %: the FEMNIST CNN's
		// step keeps 2.24 MB of packing buffers against 1.74 MB counted (its
		// Winograd filters' packed copies are undercounted).
		if step < f.Workspace || step > f.Workspace*135/100+slack {
			t.Errorf("%s %v: a first step left %d bytes allocated, workspace %d (+ at most 35 %% and %d)", s.Kind, s.Hidden, step, f.Workspace, slack)
		}
		// Besides PerSample, NewDPSGD allocates its own structure (under
		// 1 KiB).
		if dp < f.PerSample || dp > f.PerSample+1024 {
			t.Errorf("%s %v: NewDPSGD allocated %d bytes, footprint %d (+ at most 1 KiB)", s.Kind, s.Hidden, dp, f.PerSample)
		}
	}
}
