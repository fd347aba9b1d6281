package topology

// Dynamic is a graph sequence G^0, G^1, ... on a fixed node set. At must be a
// pure function of the round: any node or process that holds the same
// Dynamic (built from the same seed or file) gets the same G^t, whatever the
// order of its queries. Implementations are safe for concurrent use; At
// panics on a negative round.
type Dynamic interface {
	N() int
	At(round int) *Graph
}

// Static returns the Dynamic whose every round is g.
func Static(g *Graph) Dynamic { return static{g} }

type static struct{ g *Graph }

func (s static) N() int { return s.g.N() }

func (s static) At(round int) *Graph {
	checkRound(round)
	return s.g
}

func checkRound(round int) {
	if round < 0 {
		panic("topology: negative round")
	}
}
