package topology

// Ring returns the undirected cycle 0-1-...-(n-1)-0 on n >= 3 nodes: every
// node has degree 2 and there are n edges. (For two nodes use Complete(2).)
func Ring(n int) (*Graph, error) {
	if err := checkN("Ring", n, 3); err != nil {
		return nil, err
	}
	es := make([]Edge, 0, n)
	for i := range n - 1 {
		es = append(es, Edge{i, i + 1})
	}
	es = append(es, Edge{0, n - 1})
	return build(n, false, normalize(es, false)), nil
}
