package data

import "fmt"

// MaxSampledEntries bounds a sampled partition's index lists (clients ×
// per client): 2^31 entries are 8 GiB of indices.
const MaxSampledEntries = 1 << 31

// partitionSampled gives each client m distinct samples of the pool,
// drawn uniformly and independently per client (client i from the stream
// of (seed, i)), so clients may share samples: for scale experiments with
// more clients than samples, or more samples per client than an exact
// partition leaves. A sample is in a given client's list with probability
// m/N (N the pool size), so the share of the pool that some client holds
// is about 1 − (1 − m/N)^clients.
//
// Each list is Floyd's sample (Bentley & Floyd 1987): for j from N−m to
// N−1 it takes a uniform t ≤ j, or j itself when t is taken already, which
// makes every m-subset equally likely in m draws; the list's order is
// the draw order, and SplitClients shuffles each list anyway. One marker
// per pool sample, cleared after each client, is all the scratch.
func partitionSampled(pool []int32, clients, m int, seed uint64) (*Partition, error) {
	n := len(pool)
	switch {
	case m < 1:
		return nil, fmt.Errorf("data: partition: sampled with %d samples per client; need at least 1", m)
	case m > n:
		return nil, fmt.Errorf("data: partition: sampled with %d distinct samples per client from a pool of %d; use at most %d", m, n, n)
	case int64(clients)*int64(m) > MaxSampledEntries:
		return nil, fmt.Errorf("data: partition: sampled: %d clients × %d samples are %d index entries (4 bytes each), more than %d; lower the samples per client", clients, m, int64(clients)*int64(m), int64(MaxSampledEntries))
	}
	sizes := make([]int, clients)
	for i := range sizes {
		sizes[i] = m
	}
	p := &Partition{Clients: layout(make([]int32, clients*m), sizes)}
	taken := make([]bool, n)
	for i, dst := range p.Clients {
		r := stream(seed, purposeSampled, uint64(i))
		k := 0
		for j := n - m; j < n; j++ {
			t := r.IntN(j + 1)
			if taken[t] {
				t = j
			}
			taken[t] = true
			dst[k] = int32(t) // a pool position until the markers are cleared
			k++
		}
		for k, t := range dst {
			taken[t] = false
			dst[k] = pool[t]
		}
	}
	return p, nil
}
