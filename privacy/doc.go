// Package privacy holds differential privacy for what a node releases: the
// Gaussian and Laplace mechanisms with clipping and their noise sources, the
// Rényi DP accountant with its calibration, and the membership-inference audit.
//
// # Node-level DP: what a node.Layer calls
//
// NodeDP bundles what follows: NewNodeDP(clip, z, delta, src), then per
// round Release(update) and Epsilon(); DefaultDelta(n) is the default δ.
// Spelled out, a node layer owns one Mechanism (NewGaussian(clip, z)), one Source
// (NewSeededSource from the experiment seed in simulation — such a run is
// "not private" — or NewCryptoSource in deployment) and one Accountant
// (NewAccountant(nil): DefaultOrders, the default order grid). Once per round,
// on the update the node is about to release — the same noisy vector goes
// to every neighbour, one release per round however many receive it:
//
//	rel, err := mech.Release(update, src) // clip in place, add noise
//	err = acct.Compose(rel.Event, 1)      // one more release
//	eps, _, err := acct.Epsilon(delta)    // the node's ε so far
//
// The node-level DP layer (dplayer.Layer, package node/dplayer) wraps
// exactly this: at the round's first exchange phase, between local
// training and the strategy's Share, it calls Release on the
// round's update (the change from the model the round started with,
// View.Start) and makes the node's model start + noisy update, so a
// strategy that shares models shares start + noisy(clipped(update)), one
// that shares updates the noisy update, and every later round starts from
// released values; its end-of-round hook reports Epsilon in the round's
// node.PrivacyReport (with Released.Norm and Clipped). docs/methods/privacy.md has the whole
// contract.
// The Event of a node-level release claims no amplification (the node
// releases every round from all of its data). Mechanisms and the accountant
// allocate nothing per round.
//
// # Sample-level DP (DP-SGD)
//
// nn.DPSGD clips per-sample gradients and adds noise every local step; a
// Stream from this package is its noise source: AddNormal and
// ScaleAddNormal draw a whole vector at once with a float32 ziggurat whose
// fast path has portable, AVX2 and AVX-512 kernels drawing the same noise
// bit for bit (gauss.go; UseNoiseKernel forces one), from xoshiro128++
// lanes when seeded or an AES-256-CTR keystream keyed from crypto/rand.
// dplayer.Sample (the node's Trainer) accounts the round's steps with
// Compose(GaussianEvent{Multiplier: z, Sampling: Poisson(q)}, steps) for
// nn.PoissonBatches, or Sampling: Unamplified() for shuffled fixed batches
// (amplification only when the sampling is really random).
//
// # Accounting and calibration
//
// RDP of the (Poisson-subsampled) Gaussian mechanism by Mironov, Talwar and
// Zhang (2019), integer and fractional orders in log space; the Laplace
// mechanism's RDP (Mironov 2017); composition by addition per order; the
// (ε, δ) conversion of Balle et al. (2020). Calibrate and Question answer
// "which σ gives ε after T steps" (trellis privacy). DefaultOrders is the
// default order grid; DenseOrders a finer one that meets published
// reference values within 1 %.
//
// The PLD accountant (ComposePLD, EpsilonPLD; pld.go) is the tighter
// alternative: privacy loss distributions of the subsampled Gaussian (both
// directions of add/remove adjacency), Gaussian and Laplace mechanisms,
// discretized pessimistically ("connect the dots"), composed by FFT and
// read out exactly as ε(δ) and δ(ε); a composition it cannot do within its
// tolerance is an error, never a smaller ε.
//
// # Audit
//
// LossThresholdAudit turns member and non-member losses of a released model
// into AUC, TPR at 1 % and 0.1 % FPR and an ε lower bound with confidence
// 1 − α, which must never exceed the accountant's ε. FitLiRA and ScoreAudit
// are LiRA (Carlini et al. 2022): per-example Gaussians of the
// logit-scaled confidence under shadow models that did and did not train
// on the example, and the likelihood ratio of the target's. Package
// privacy/audit runs these attacks on a run's final models.
package privacy
