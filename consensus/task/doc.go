// Package task is the consensus task type: what `trellis run` does with a
// config's [consensus] section (the survey's private average consensus,
// §3.2.2, §3.3.2, §3.4.2; package consensus has the methods). It holds
// the one table from a method's name to its run (Methods: a new method is
// one row), the initial values drawn from the seed, and the run of a
// method over a vector of dim coordinates, each an independent scalar run
// of package consensus, reduced to one record per iteration.
//
// It is pure and I/O-free like package consensus; experiment writes its
// records into a run directory. Recorded choices:
//
//   - Coordinate c of the vector runs with the seed seed.Derive(seed,
//     seed.Strategy, coordStream, c), so its weights, shares, offsets,
//     keys and noise are independent of the other coordinates'.
//   - Initial values: x_i(0)[c] uniform on [lo, hi) or normal (mean, std),
//     one stream per node under seed.Init.
//   - The error of iteration k is over nodes and coordinates: MSE the mean
//     of (x_i(k)[c] − x̄[c])², MaxAbsErr the largest |x_i(k)[c] − x̄[c]|,
//     x̄[c] the float64 mean of the initial values.
//   - Dynamic methods (Method.Dynamic) track reference signals that
//     start at the drawn values (Signals: converging or ramp, a drift per
//     node from its own stream); their errors are against r̄(k) of the
//     iteration, their secret r_i(0).
//   - The push-sum methods take the undirected graph as a symmetric
//     digraph.
//   - The curious neighbours are the first colluders of the target's
//     neighbours (in the graph's order); their reconstruction error is the
//     root mean square over coordinates of the method's Curious estimate
//     minus the target's x_i(0)[c].
package task
