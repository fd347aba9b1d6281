package topology

// Complete returns the undirected complete graph on n >= 1 nodes: every pair
// of distinct nodes is linked (n(n-1)/2 edges).
func Complete(n int) (*Graph, error) {
	if err := checkN("Complete", n, 1); err != nil {
		return nil, err
	}
	es := make([]Edge, 0, n*(n-1)/2)
	for i := range n {
		for j := i + 1; j < n; j++ {
			es = append(es, Edge{i, j})
		}
	}
	return build(n, false, es), nil
}
