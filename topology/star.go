package topology

import "fmt"

// Star returns the undirected star on n >= 1 nodes: center is linked to every
// other node and no other edge exists (n-1 edges).
func Star(n, center int) (*Graph, error) {
	if err := checkN("Star", n, 1); err != nil {
		return nil, err
	}
	if center < 0 || center >= n {
		return nil, fmt.Errorf("topology: Star: center = %d, want 0 <= center < n = %d", center, n)
	}
	es := make([]Edge, 0, n-1)
	for i := range n {
		if i != center {
			es = append(es, Edge{min(i, center), max(i, center)})
		}
	}
	return build(n, false, normalize(es, false)), nil
}
