package experiment

import "github.com/trellis-fl/trellis/topology"

// Graph is the communication graph, round by round, of the run c
// describes: the one its simulation (and a deployment's monitor) uses,
// from the config and the seed alone, for a viewer of a finished run.
func (c Config) Graph() (topology.Dynamic, error) { return c.graph(c.Nodes, c.Seed) }
