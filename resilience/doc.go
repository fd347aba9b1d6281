// Package resilience measures how much a robust rule gives way under an
// attack: the empirical κ-robustness of the survey, §4.3
// (docs/methods/toolbox.md, "Metrics of resilience"), for one rule and attack or a whole table of them, written
// as Markdown for `trellis bench rules`.
//
// # Choices
//
//   - A trial draws a center c ~ N(0, I_d) and the n − f honest vectors of S
//     as c + Spread·N(0, I_d), then each attacker's own honest vector from
//     the same law; the attackers craft with one View built from S
//     (Senders n, Attackers f) and their vectors follow S in the input
//     order. The center keeps μ away from 0, which ipm and unit_vec need.
//   - Every random stream derives from Config.Seed by SplitMix64 of
//     (seed, purpose, trial[, attacker]), so each cell of a table sees the
//     same honest sets and, per attack, the same attack vectors, whatever
//     the rules or the order of the table; a Kappa call reproduces its cell.
//   - κ̂ is the maximum over trials of ||A(X) − mean(S)||² /
//     mean_{i∈S} ||x_i − mean(S)||², in float64; the distance reported is
//     ||A(X) − mean(S)||, its mean and maximum over trials.
//   - A rule or attack that cannot run at the configured n and f (trimmed
//     mean with n <= 2f, alie's infinite z_max, ...) is a cell holding its
//     error, never a failed table; a data attack (label_flip) has no effect
//     on vectors and is such a cell too.
package resilience
