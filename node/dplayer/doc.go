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
// The noise of a round is drawn from the experiment seed per node and
// round in simulation (a resumed run draws the same noise; such a run is
// not private, and the report says Seeded) or from crypto/rand. Both
// layers' Snapshot is their accountant, so a restarted node's ε continues
// from where it was and never starts again from 0.
package dplayer
