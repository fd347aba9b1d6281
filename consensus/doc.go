// Package consensus holds the survey's peer-to-peer privacy methods for
// average consensus (§3.2.2 with Table 3; §3.3.2 with Table 5; §3.4.2 with
// Table 6): n nodes on a graph, each with a private scalar x_i(0), all of
// them to reach the average x̄ = (1/n) Σ x_i(0), while a curious set of
// neighbours learns as little as possible about one node's x_i(0).
//
// It is pure and I/O-free: a run is a function of the graph, the initial
// values and a seed. Every method records, per iteration, its error and
// everything each node sent to each neighbour (Trace.Msgs), which is what
// the curious-neighbour adversary (adversary.go) reads.
//
// Methods (docs/methods/p2p-consensus.md has the update rules); each is a
// function of a *Problem (and, for [111]/[112], a LaplaceDP) or a parameter
// struct with Run(p *Problem) (*Trace, error):
//
//   - Plain: x(k+1) = W x(k) with Metropolis–Hastings weights.
//   - StateDecomposition: each state split into α (exchanged) and β
//     (coupled only to its own α), ref. [164].
//   - Offsets: zero-sum offsets added in the first iterations, ref. [169].
//   - Encrypted: pairwise Paillier with individual keys and random
//     positive weights chosen half by each end of an edge (refs. [151],
//     [102], Table 5).
//   - DPHuang, DPNozari: Laplace noise of decaying variance on the states
//     (refs. [111], [112], Table 3).
//   - GaussianGossip: Gaussian noise once, then gossip (ref. [115], Algs. 1–2).
//
// Dynamic average consensus (Problem.Ref set: node i holds a reference
// signal r_i(k) and all track r̄(k); signal.go):
//
//   - PlainDynamic: x(k+1) = W x(k) + r(k+1) − r(k).
//   - DynamicDP: Laplace noise of increasing scale on the states and a
//     decreasing weight on the neighbours' (our rendering of ref. [113],
//     Table 3), with the closed form of its expected error (ExpectedMSE).
//   - DynamicDecomposition: state decomposition for dynamic consensus,
//     ref. [165] (Table 6).
//
// Directed graphs (strongly connected; Digraph builds one):
//
//   - PushSum: push-sum ratio consensus, column-stochastic weights.
//   - PushSumDecomposition: state decomposition for push-sum, ref. [166]
//     (Table 6).
//
// Recorded choices:
//
//   - Scalars, not vectors: every method here acts coordinate-wise, so a
//     vector is d independent runs; the privacy claims are per coordinate.
//   - Randomness comes from internal/seed streams named by purpose
//     (seed.Strategy for weights, shares and offsets; seed.Noise for DP
//     noise; seed.Identity for keys; seed.Mask for encryption randomness),
//     so a run repeats bit for bit. That makes every run "not private" in
//     the repository's sense: this package studies the algorithms.
//   - Sums are accumulated in float64 and the error is measured against the
//     float64 mean of the initial values.
package consensus
