package topology

import (
	"fmt"
	"slices"
)

// FromEdges returns the graph on n nodes with the given edges. If directed,
// Edge{i, j} means i sends to j; otherwise it links i and j both ways and
// {i, j}, {j, i} are the same edge. Duplicates are merged. An id outside
// [0, n) or a self-loop is an error naming the edge's index. edges is not
// modified.
func FromEdges(n int, edges []Edge, directed bool) (*Graph, error) {
	if err := checkN("FromEdges", n, 1); err != nil {
		return nil, err
	}
	for k, e := range edges {
		if err := checkEdge(n, e.From, e.To); err != nil {
			return nil, fmt.Errorf("topology: FromEdges: edge %d (%d, %d): %w", k, e.From, e.To, err)
		}
	}
	return build(n, directed, normalize(slices.Clone(edges), directed)), nil
}

// checkEdge validates one edge's ids against n nodes.
func checkEdge(n, i, j int) error {
	for _, v := range [2]int{i, j} {
		if v < 0 || v >= n {
			return fmt.Errorf("node id %d out of range [0, %d)", v, n)
		}
	}
	if i == j {
		return fmt.Errorf("self-loop on node %d (self-loops are not edges)", i)
	}
	return nil
}
