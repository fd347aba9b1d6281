package data

import "fmt"

// partitionShards gives each client k distinct classes . Over a random order of the K
// classes present in the pool and a random order of the clients, the i-th
// client holds classes i·k, …, i·k+k-1 (mod K), so every class is held by
// ⌊Ck/K⌋ or ⌈Ck/K⌉ clients; each class's shuffled samples are then split
// evenly (±1) among its holders. Requires k ≤ K and C·k ≥ K, so that every
// sample has a client. A client can end empty only when its classes have
// fewer samples than holders; unless allowed, fillEmpty then moves samples.
func partitionShards(pool []int32, labels []int, numClasses, clients, k int, allowEmpty bool, seed uint64) (*Partition, error) {
	r := stream(seed, purposeShards, 0)
	all := byClass(pool, labels, numClasses)
	var present []int
	for c, idx := range all {
		if len(idx) > 0 {
			present = append(present, c)
		}
	}
	kk := len(present)
	switch {
	case k < 1:
		return nil, fmt.Errorf("data: partition: shards need ClassesPerClient ≥ 1, got %d", k)
	case k > kk:
		return nil, fmt.Errorf("data: partition: %d classes per client but the pool holds %d classes", k, kk)
	case clients*k < kk:
		return nil, fmt.Errorf("data: partition: %d clients × %d classes cannot cover %d classes; some samples would have no client", clients, k, kk)
	}
	classOrder := r.Perm(kk)
	clientOrder := r.Perm(clients)
	holders := make([][]int, numClasses) // class -> clients holding it, in assignment order
	for i, ci := range clientOrder {
		for j := range k {
			c := present[classOrder[(i*k+j)%kk]]
			holders[c] = append(holders[c], ci)
		}
	}
	counts := make([][]int, numClasses)
	for c, idx := range all {
		counts[c] = make([]int, clients)
		shuffle32(r, idx)
		h := holders[c]
		for j, ci := range h {
			counts[c][ci] = len(idx) / len(h)
			if j < len(idx)%len(h) {
				counts[c][ci]++
			}
		}
	}
	if !allowEmpty {
		fillEmpty(counts, clients)
	}
	return fromCounts(all, counts, clients), nil
}
