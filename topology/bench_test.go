package topology

import "testing"

// BenchmarkMobilityRound1000 builds G^t of the DMTT paper's mobility model for
// 1,000 nodes, one round per iteration: an O(N) random-walk step and the
// O(N²) contact graph (about 250,000 edges).
func BenchmarkMobilityRound1000(b *testing.B) {
	m, err := NewMobility(DefaultMobility(1000, 1))
	if err != nil {
		b.Fatal(err)
	}
	round := 0
	for b.Loop() {
		round++
		if m.At(round).N() != 1000 {
			b.Fatal("wrong graph")
		}
	}
}

// BenchmarkMobilityRound1000Connect is the same with the connectivity
// guarantee on (at this density no node is isolated: its cost is the degree
// count).
func BenchmarkMobilityRound1000Connect(b *testing.B) {
	cfg := DefaultMobility(1000, 1)
	cfg.Connect = true
	m, _ := NewMobility(cfg)
	round := 0
	for b.Loop() {
		round++
		m.At(round)
	}
}

// BenchmarkKRegular1000x5 builds the 5-regular graph on 1,000 nodes of the
// round benchmark's setup.
func BenchmarkKRegular1000x5(b *testing.B) {
	for b.Loop() {
		if _, err := KRegular(1000, 5, 1); err != nil {
			b.Fatal(err)
		}
	}
}
