// Package agreement scores how much two models agree, for LIGHTYEAR's peer
// selection (the LIGHTYEAR paper, §4.5): the final-layer NTK
// compared by centered kernel alignment (function space), the calibration
// score of the authors' public code, and the cosine of the parameter
// vectors (parameter space). Every score lies in [0, 1].
//
// Choices recorded here:
//   - The NTK kernel is the final layer's only (no backward pass): with
//     features φ and probabilities p = h(z), z = Wφ + b, the Jacobian of p
//     with respect to (W, b) is M ⊗ [φ; 1]ᵀ, M = ∂p/∂z, so
//     K(a, b) = (φ_a·φ_b + 1) · tr(M_a M_bᵀ). Softmax: M = diag(p) − p pᵀ.
//     Evidential (p = α/S, α = softplus(z) + 1):
//     M_jk = (δ_jk − p_j) σ(z_k) / S, with S = K/u from the vacuity u and
//     σ(z_k) = 1 − exp(1 − α_k) recovered from α_k = p_k S.
//   - CKA is computed with the centering H K H of both kernels, in float64,
//     and clipped to [0, 1]. A kernel with no centered energy (all equal,
//     or fewer than two samples) agrees with nothing: its CKA is 0.
//   - Calibration uses probabilities, not the raw max logits of the authors'
//     code (spec): accuracy, the expected calibration error over 15 equal
//     bins (lo, hi] of the max probability, and sharpness, the mean max
//     probability.
//   - Cosine is (1 + cos(θ_i, θ_j)) / 2 of the full parameter vectors; a
//     zero vector has cosine 0, i.e. score 1/2.
package agreement
