// Package privacy holds differential privacy for what a node releases: the
// Gaussian and Laplace mechanisms with clipping, their noise sources (seeded
// for simulation, crypto/rand for deployment), and the Rényi DP accountant.
//
// # Node-level DP
//
// A node layer owns one Mechanism, one Source and one Accountant. Once per
// round, on the update the node is about to release (the same noisy vector
// goes to every neighbour: one release per round however many receive it):
//
//	rel := mech.Release(update, src)    // clip in place, add noise
//	acct.Compose(rel.Event, 1)          // one more release
//	eps, _ := acct.Epsilon(delta)       // the node's ε so far, for Ready/metrics
//
// A node.Layer wraps exactly this: its end-of-training hook calls Release
// on the outgoing update before the strategy shares it, and its end-of-round
// hook reports Epsilon. Node-level release has no amplification by
// subsampling (the node releases every round): its Event says so.
//
// # Sample-level DP (DP-SGD)
//
// nn.Model.TrainDP clips per-sample gradients and adds noise each step; the
// caller accounts the steps with GaussianEvent{Multiplier, Poisson(q)} when
// batches are Poisson-sampled, or Unamplified() otherwise (spec/privacy.md:
// amplification only when the sampling is really random).
//
// # Accounting
//
// RDP of the (subsampled) Gaussian mechanism by Mironov, Talwar and Zhang
// (2019), composition by addition over orders, and the (ε, δ) conversion of
// Balle et al. (2020) on the order grid of spec/privacy.md. Calibrate answers
// "which σ gives ε after T steps".
package privacy
