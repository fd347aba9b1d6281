package data

import "fmt"

// partitionNatural keeps each group (FEMNIST writer, HAR or PAMAP2 subject)
// on one client. With clients == 0 there is one client per group present in
// the pool, in group-id order. With fewer clients than groups, the groups
// are shuffled and dealt round-robin, so a client may hold several groups;
// more clients than groups is an error unless empty clients are allowed.
func partitionNatural(pool []int32, groups []int32, numGroups, clients int, allowEmpty bool, seed uint64) (*Partition, error) {
	count := make([]int, numGroups)
	for _, i := range pool {
		count[groups[i]]++
	}
	var present []int32
	for g, n := range count {
		if n > 0 {
			present = append(present, int32(g))
		}
	}
	if clients == 0 {
		clients = len(present)
	} else {
		if clients > len(present) && !allowEmpty {
			return nil, fmt.Errorf("data: partition: %d clients but only %d groups; a natural partition cannot fill them (set AllowEmpty)", clients, len(present))
		}
		if clients < len(present) {
			shuffle32(stream(seed, purposeNatural, 0), present)
		}
	}
	sizes := make([]int, clients)
	for j, g := range present {
		sizes[j%clients] += count[g]
	}
	// Each client's list holds its groups in dealing order, each group's
	// samples in pool order.
	byGroup := layout(make([]int32, len(pool)), count)
	next := make([]int, numGroups)
	for _, i := range pool {
		g := groups[i]
		byGroup[g][next[g]] = i
		next[g]++
	}
	p := &Partition{Clients: layout(make([]int32, len(pool)), sizes)}
	fill := make([]int, clients)
	for j, g := range present {
		c := j % clients
		fill[c] += copy(p.Clients[c][fill[c]:], byGroup[g])
	}
	return p, nil
}
