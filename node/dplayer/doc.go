// Package dplayer is differential privacy as node layers, at the two
// levels a run can choose (the [privacy] section's mode), each charging
// its releases to a privacy.Accountant whose ε goes into Ready as a
// node.PrivacyReport every round — RDP's, or with UseAccountant(
// privacy.MethodPLD) the PLD accountant's, falling back to RDP's bound
// (named in the report) where PLD cannot answer.
//
// Node level (Layer, New): the round's update is clipped to L2 norm C and
// noised with N(0, (zC)² I) once per round, after training and before the
// strategy shares anything, and the node keeps the noisy model. Every
// vector the node sends that round is post-processing of that one release,
// so a round is charged one unamplified Gaussian release however many
// vectors and recipients it has. A vector that is not derived from the
// noisy model alone (a gradient tracker, a model trained in Share) stops
// the round with an error: one release cannot cover it.
//
// Sample level (Sample, NewSample): DP-SGD (nn.DPSGD: per-sample clipping
// and noise every step) as the node's Trainer (node.Config.Trainer), and a
// layer that charges the round's steps when it ends: Poisson-subsampled
// with q = the Poisson rate for nn.PoissonBatches, unamplified (q = 1) for
// shuffled fixed-size batches, which are not a random sample.
//
// Pure and (0, δ) layers of the survey's Table 4 (§3.2.2), each with its
// own closed-form account instead of the Gaussian accountants: Decaying
// (ref. [117]: the round's update clipped to L1 norm C·p^k plus Laplace
// noise of scale c·q^k, pure ε), DecayingTracking (ref. [121]: gradient
// tracking's state and tracker each released with such noise, clipped
// around their previous release, two releases a round) and Ternary (ref.
// [132]: the clipped update stochastically quantized to {−B, 0, +B},
// (0, C/B)-DP a round).
//
// The noise of a round is drawn from the experiment seed per node and
// round in simulation (a resumed run draws the same noise; such a run is
// not private, and the report says Seeded) or from crypto/rand. Both
// layers' Snapshot is their accountant, so a restarted node's ε continues
// from where it was and never starts again from 0.
package dplayer
