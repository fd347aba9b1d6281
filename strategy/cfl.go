package strategy

var cflRow = Row{
	Name:    "cfl",
	Summary: "two-cluster complete-linkage clustering of cosine distances; keep the own cluster",
	build:   func(Params, Values) (Strategy, error) { return &CFL{}, nil },
}

// CFL is the two-cluster selection of clustered federated learning
// (Sattler et al. 2020; docs/methods/toolbox.md, "Peer-side
// defences", CFL): complete-linkage agglomerative clustering of the node's own
// model and the arrived ones on cosine distances 1 − cos(x_a − r, x_b − r)
// (r = View.Start when present, so cosines compare updates; a zero vector
// has cosine 0) until two clusters remain; the node keeps the cluster
// holding its own model and sets x_0 to its plain mean. Merges take the
// pair of clusters with the smallest largest pairwise distance, ties to the
// pair whose first members come first in sender order. With one neighbor
// the two clusters are singletons and the node keeps x_0. No parameters.
// Kept senders get weight 1/|kept|, the others 0.
type CFL struct {
	c       cosineSet
	cluster []int // cluster label per input (label = an input index)
}

func (c *CFL) Name() string { return "cfl" }

// Share sends the trained model to every out-neighbor.
func (c *CFL) Share(v *View) []Outgoing { return shareModel(v) }

// Combine keeps the own model's cluster.
func (c *CFL) Combine(v *View, in []Incoming) (map[int]float64, error) {
	self, n, err := c.c.load(v, in)
	if err != nil {
		return nil, err
	}
	c.cluster = resize(c.cluster, n)
	for i := range c.cluster {
		c.cluster[i] = i
	}
	for clusters := n; clusters > 2; clusters-- {
		// Labels are the smallest member index, so scanning a < b over
		// labels in index order breaks ties by first members.
		bestA, bestB, best := -1, -1, 0.0
		for a := range n {
			if c.cluster[a] != a {
				continue
			}
			for b := a + 1; b < n; b++ {
				if c.cluster[b] != b {
					continue
				}
				if d := c.linkage(n, a, b); bestA < 0 || d < best {
					bestA, bestB, best = a, b, d
				}
			}
		}
		for i := range c.cluster {
			if c.cluster[i] == bestB {
				c.cluster[i] = bestA
			}
		}
	}
	for i := range c.c.keep {
		c.c.keep[i] = c.cluster[i] == c.cluster[self]
	}
	return c.c.averageKept(v, self), nil
}

// linkage is the complete-linkage distance between clusters a and b.
func (c *CFL) linkage(n, a, b int) float64 {
	d := 0.0
	for i := range n {
		if c.cluster[i] != a {
			continue
		}
		for j := range n {
			if c.cluster[j] == b {
				d = max(d, c.c.dist[i*n+j])
			}
		}
	}
	return d
}
