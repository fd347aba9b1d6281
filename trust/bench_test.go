package trust

import "testing"

// BenchmarkRound100 is one round of the topology-trust layer for 100 nodes
// on the spec's mobility graph (A = 100, r_c = 40, v_max = 8; about 50
// neighbors each), with forwarding: every node signs its claim, ingests
// its neighbors' claims and forwards (one Ed25519 verification per new
// claim version, duplicates refused before verification), and ends the
// round. Reported per round for all 100 nodes together, after 3 warm-up
// rounds so forwards are in flight.
func BenchmarkRound100(b *testing.B) {
	nw := newNetwork(b, mobility(b, 100, 1), 1, make([]behavior, 100))
	for range 3 {
		nw.step(b)
	}
	before := ingested(nw)
	b.ResetTimer()
	for b.Loop() {
		nw.step(b)
	}
	b.ReportMetric(float64(ingested(nw)-before)/float64(b.N), "claims/round")
}

// ingested counts the claims the nodes processed, accepted or not.
func ingested(nw *network) uint64 {
	var n uint64
	for _, s := range nw.states {
		st := s.Stats()
		n += st.Accepted
		for _, r := range st.Rejected {
			n += r
		}
	}
	return n
}
