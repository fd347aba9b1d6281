// Package inversion is what a curious neighbour learns from one shared
// round update beyond membership (package privacy/audit): the labels and
// the images of the batch behind it, for trellis's dense models (logreg
// and the ReLU MLP) under the softmax cross-entropy — the survey's
// Table 1 "data construction" attacks (refs. [19], [25]).
//
// The attacker knows the model the victim started its round from and the
// step size; a one-step update u = −lr·∇L then gives the batch's mean
// gradient −u/lr (Update runs nn's own step to form u). From it:
//
//   - labels: iDLG (LabelOne) for one sample, the last layer's bias
//     gradient's counts (LabelCounts) for a batch;
//   - images: the closed form x = gW_r/gb_r of the first layer for one
//     sample (Analytic, pooled over rows by least squares), and for a
//     batch DLG / "inverting gradients": Adam on dummy images minimizing
//     the cosine distance between their gradient and the observed one,
//     with input gradients by hand-written double backpropagation
//     (Matcher), not finite differences.
//
// After E local steps the update is no single gradient. The baseline
// reads −u/(E·lr) as one (Attacker.Steps); the stronger attack
// (Attacker.Unroll, Unrolled) simulates the victim's E SGD steps on the
// dummies and matches the simulated update to u, its input gradient exact
// by reverse mode through the steps (Hessian-vector products by the
// R-operator, HVP). Label recovery reads only the last layer, so it also
// runs on models with convolutions (LastLayerOf: any nn model under the
// softmax head); the image attacks stay dense-only.
//
// Protection models what the attacker sees instead of u: node-level DP
// through the repository's Gaussian mechanism and calibration, the sum
// of a secure-aggregation group, or one share of a state decomposition.
// Match, MSE and PSNR score reconstructions against the truth; the
// dataset's mean image is the baseline any attacker has for free.
//
// The attacker's computations are float64 on a copy of the model (Net);
// they are checked against nn's float32 gradient and finite differences.
// docs/methods/gradient-inversion.md has the formulas, bench/inversion
// the table (docs/results/gradient-inversion.md).
package inversion
