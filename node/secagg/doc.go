// Package secagg is secure aggregation inside each node's group as node
// layers: every round a node's model becomes the mean of its own and its
// group's models, computed so that no one sees an individual model in the
// clear. Three modes (the [secagg] section's mode), one constructor each:
//
//   - New (Layer): pairwise masks with Shamir shares of the mask seeds
//     (privacy.SecAggAggregator), in five exchange phases relayed by the
//     aggregator, so members need not be neighbours of each other; a group
//     survives dropouts while a threshold t of its members answer. The
//     group is the node's in-neighbours or, with Config.Screened, its
//     topology-screened peers (the trust layer's screen). With
//     Config.Across the group mean goes out in a sixth phase as the
//     strategy's vector, so that a robust rule combines the neighbours'
//     group means: secure aggregation inside groups, robust rules across
//     groups.
//   - NewPaillier (Paillier): members encrypt their packed models under a
//     key holder's Paillier key, the aggregator multiplies ciphertexts it
//     cannot read, the key holder decrypts only their product; a group
//     needs three members.
//   - NewCKKS (CKKS): threshold CKKS, a collective key per group and
//     round, the sum computed on ciphertexts and decrypted only with every
//     member's share. lattigo draws its noise from crypto/rand, so these
//     runs are not bit-reproducible.
//
// They are one package, not three, because they are one contract: each is
// a node.Releaser that keeps the strategy's vectors in the node (or lets
// out only the group mean), replaces the model by the group mean at the
// round's end, falls back to the node's own model when the group sum
// fails, reports the same node.SecAggReport, and refuses a peer's message
// with the same reasons (ReasonForged, ReasonProtocol); they share those
// helpers, and a run uses exactly one of them.
//
// State: the masks' and CKKS's keys are drawn per round, so their
// Snapshot is their configuration (a restart with another threshold or
// grouping is refused); a Paillier key lives across rounds and is saved.
package secagg
