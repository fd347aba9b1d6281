package trust

import "testing"

// BenchmarkRound100 is one round of the topology-trust layer for 100 nodes
// on the paper's mobility graph (A = 100, r_c = 40, v_max = 8; about 50
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
	seen0, new0 := ingested(nw)
	b.ResetTimer()
	for b.Loop() {
		nw.step(b)
	}
	seen, fresh := ingested(nw)
	b.ReportMetric(float64(seen-seen0)/float64(b.N), "claims/round")
	b.ReportMetric(float64(fresh-new0)/float64(b.N), "accepted/round")
}

// ingested counts the claims the nodes processed, and those they accepted.
func ingested(nw *network) (seen, accepted uint64) {
	for _, s := range nw.states {
		st := s.Stats()
		accepted += st.Accepted
		seen += st.Accepted
		for _, r := range st.Rejected {
			seen += r
		}
	}
	return seen, accepted
}
