package data

// partitionIID shuffles the pool and cuts it into clients consecutive runs of
// near-equal size (the first len%clients clients get one more sample).
func partitionIID(pool []int32, clients int, seed uint64) *Partition {
	perm := append([]int32(nil), pool...)
	shuffle32(stream(seed, purposeIID, 0), perm)
	sizes := make([]int, clients)
	for i := range sizes {
		sizes[i] = len(perm) / clients
		if i < len(perm)%clients {
			sizes[i]++
		}
	}
	return &Partition{Clients: layout(perm, sizes)}
}
