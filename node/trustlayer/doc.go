// Package trustlayer is DMTT's topology trust as a node.Layer: the part of
// the protocol by which a node learns whom to trust about the graph. Every
// round the node broadcasts its signed claim of its in-neighbours and
// forwards the claims it chose at the end of the previous round (DMTT's
// Algorithms 1–3: claims, witness pools, forwarding); every authenticated
// message is a sign of life of its sender; a claim the validator refused
// for content its sender signed is evidence against the sender. The trust
// state itself (link reliability, Beta source trust, the screen) is
// package trust's; this package moves it through the node's round.
//
// Choices kept from DMTT: claims go out in the first exchange phase, with
// the strategy's vectors, so trust costs no extra phase; in the events
// claim form (trust.Config.Claims = "events") a round has three phases,
// the co-signing round trip of signed edge events. The layer closes its
// round before the strategy combines, so the strategy's View.Trust
// describes this round in Combine (the previous one in Share), and the
// round's diagnostics (DMTT's learning step: trust per peer, the
// screened neighbours, the trusted view of the graph, claims accepted and
// refused) go into Ready as a node.TrustReport.
//
// A node takes the layer first among its layers (node.Config.Layers), so
// that the layers after it — a screened secure-aggregation group — and
// the strategy see the round's trust. Its Snapshot is the trust state,
// whose forwards are the next round's claims to forward; a node restored
// rounds later forwards none (they would be stale).
package trustlayer
