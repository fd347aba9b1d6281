// Package attack holds what Byzantine nodes send: given a node's honest
// payload and the adversary's view of the round, an Attack crafts the vector
// the node sends instead (docs/methods/toolbox.md).
//
// # Choices
//
//   - Only the driver uses this package; honest code never learns who is
//     Byzantine. The driver builds the View (the round's honest payloads in
//     sender-id order, for omniscient attacks, and the numbers of senders
//     and attackers, for alie's z_max) and gives each Craft the random
//     stream of (seed, attacker, round).
//   - Omniscient attacks (alie, ipm, min_max, min_sum, fang_trim) compute
//     from the View only; it caches the statistics they need and the
//     vectors of the deterministic ones, so a View shared by all attackers
//     and receivers of a round pays each statistic once (min_max's pairwise
//     distances are O(|G|² d)). Everything is accumulated in float64 in
//     sender order.
//   - label_flip is a data attack: it implements DataAttack, whose
//     FlipLabel the driver applies to the attacker's training labels; its
//     Craft sends the honest payload.
//   - Craft writes into the caller's dst, which may be the honest slice
//     itself; the attacks of the attacker's own vector allocate nothing
//     (random's model allocates its seeded source). The output depends only
//     on the arguments and the draws taken from rng, in coordinate order, so
//     a driver that seeds rng afresh from (seed, from, round) for every
//     receiver sends the same vector to all of them, as the defaults
//     do; an attack that targets receivers differently uses to.
//   - Every attack states in its doc what it assumes the adversary knows.
//   - Attacks are safe for concurrent use (Random serializes its model).
//   - Parameters are validated by New: a value out of range is an error
//     naming the parameter, the value and the allowed range; a zero value
//     means the default where there is one (Scale, Epsilon,
//     GammaInit, B; a zero Z means alie's z_max). Values are computed in
//     float64 and rounded once to float32; ranges keep outputs finite for
//     finite honest input.
package attack
