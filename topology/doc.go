// Package topology holds the communication graphs of decentralized learning:
// static graphs (complete, ring, k-regular, Erdős–Rényi, small-world, star,
// edge lists), dynamic ones (torus mobility, contact traces), drops, metrics.
//
// Recorded choices:
//
//   - A Graph is immutable, on nodes 0..N-1, with sorted adjacency in
//     compressed rows; Out(i) is whom i sends to, In(i) whom it receives
//     from. Undirected graphs store both directions. Self-loops are never
//     edges (an edge list or trace naming one is an error, not ignored);
//     duplicate edges are merged.
//   - Randomness: every generator takes a seed, expanded by SplitMix64 of
//     (seed, purpose, index) into a PCG from math/rand/v2 (stream.go). No
//     global RNG; maps are only probed, never iterated.
//   - KRegular starts from a circulant and randomizes it with 20·m switch
//     (double edge swap) steps, which always succeeds, instead of the
//     configuration model with rejection, which fails for k beyond about 6.
//   - Mobility is the DMTT paper's §V-C exactly: A = 100, vmax = 8, edge iff
//     torus distance < r_c = 40 (strict), one seeded generator read in a
//     documented order (mobility.go), so any process rebuilds G^t from the
//     seed and t. Queries may come in any order: the latest state and a
//     checkpoint every 64 rounds are kept, so going back replays at most 63
//     O(N) steps. The connectivity guarantee links each node isolated when
//     its turn comes (id order) to its nearest peer, ties to the lower id.
//   - Floating point: products that feed a sum are rounded explicitly
//     (float64(x*y)), which forbids FMA fusion, so positions and distances
//     are bit-identical on every platform. The contact test compares squared
//     distances with a threshold equivalent to sqrt(d²) < r_c (torus.go).
//   - Contact traces (CSV round,i,j) have period last round + 1 and wrap.
//   - Drops are a hash of (seed, round, from, to) (drop.go), independent of
//     the order of queries; each direction of a link drops independently.
//   - Out-of-range node ids and negative rounds are programming errors and
//     panic, except in HasEdge, which answers false so it can screen
//     untrusted ids. Constructors validate arguments and return errors
//     naming the value and the allowed range.
package topology
