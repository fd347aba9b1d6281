package metrics

// Live is what a live viewer (the dashboard) needs of a round beyond its
// record: the round's graph and the weight each receiver gave each
// sender. It travels with the Round in memory only (Round.Live is tagged
// json:"-"), so run directories and their bytes do not change.
type Live struct {
	// In lists each node's in-neighbours in the round's graph.
	In [][]int
	// Weights is the weight each node's strategy gave each sender (its
	// own id included when it counts itself); nil for a node that did
	// not combine.
	Weights []map[int]float64
	// Rejections counts, per node, the messages it refused this round by
	// reason.
	Rejections []map[string]int
}
