// Package sim is the deterministic in-process driver of the round protocol:
// it runs N node state machines for R rounds on a worker pool, routes their
// messages along each round's graph, applies message drops and the
// adversary (package adversary), and streams per-node, per-round records
// (package metrics, metrics.Record) to a sink.
//
// Determinism (DESIGN.md): every node's work in a phase depends only on its
// own state and on inputs fixed before the phase, results are stored by
// node index, and reductions run in node order, so metrics are
// bit-identical for any GOMAXPROCS and worker count. Wall-clock timings go
// to a separate stream because they never are. For the same reason the pool
// may hand out local training longest first (by each node's last training
// time; its sample count before round 0): nodes' data shares differ
// several-fold under a Dirichlet split, and a long node started last would
// run alone on one core.
//
// Choices recorded here:
//   - Byzantine nodes run the honest node code; the driver hands every
//     phase's outboxes to the adversary (adversary.Adversary.Rewrite, the
//     pipeline a node process runs too), which replaces what they send. The
//     simulator holds every Byzantine node's key (not the honest ones) and
//     shows the adversary every outbox: its attack's view holds the round's
//     honest payloads of the same tag, in sender-id order (the omniscient
//     adversary).
//   - The driver reads a node only through the node.Ready its End returns;
//     agreement scores (LIGHTYEAR) and trust state (DMTT) are copied into
//     the metrics records with whether each peer was Byzantine, which only
//     the driver knows.
//   - A round has as many exchange phases as the nodes' layers need; the
//     adversary rewrites each phase's Byzantine messages, and a phase
//     closes when every message routed in it was delivered.
//   - The simulator shares memos among its nodes (node.Memos, given to
//     each node before its first round; Config.NoMemos turns them off):
//     a signature-verification cache, so a message many nodes receive is
//     verified once; a wire.DigestMemo, which the driver opens for each
//     delivery phase, once the adversary has rewritten the outboxes, and
//     closes when every node has taken the phase, so a broadcast is hashed
//     once instead of once per receiver; and, with Config.Global, a
//     node.EvalMemo for the global test set, so a model bit-identical to
//     one already evaluated that round (every node after FedAvg on a
//     complete graph) takes its result instead of evaluating again (not
//     with Config.GlobalPerNode: nodes evaluating on different samples
//     cannot share a result keyed by the model). The
//     digest memo relies on what sending one pointer to many receivers
//     already requires: nothing writes a message while it is delivered (a
//     Byzantine message is a new Message, signed when it is made); it is
//     not consulted with WireRoundTrip, whose links decode their own
//     copies as a network would. The one payload rewritten within a phase
//     is a lazily crafted vector's buffer (below), and only after the one
//     receiver of its message has validated it and ended its round. The
//     records are the same bits with and without the memos (a deployment
//     has none; TestLockstepMatchesSimulator).
//   - Crafted vectors are made when their receiver takes them and dropped
//     after, never held as Byzantine nodes × links vectors: in a round's
//     last exchange phase the adversary leaves them unmade
//     (adversary.Adversary.RewriteLazy), and the worker delivering to a
//     node crafts each of its Byzantine in-links' vectors into one of its
//     own buffers, has it signed with the sender's key, Steps it in, and
//     reuses the buffers for its next node once this one's End has run (in
//     the last phase deliver and End are one call per node), round after
//     round: a worker holds at most one vector per crafted message a node
//     takes (adversary.HeldPerWorker). A vector delivered in an earlier
//     phase stays in its receiver's inbox until a later call's End (the
//     trust layer's events form sends vectors in phase 0 of 3), so such a
//     phase keeps the adversary's eager Rewrite, a buffer per message.
//     With SameForAll the one vector per sender and tag is crafted once and
//     shared until the phase ends. Traffic counts the unmade messages from
//     their lengths; the records are the bits of crafting every vector up
//     front, for any number of workers.
//   - Traffic (bytes_sent) counts the encoded size of every message a node
//     puts on a link, dropped or not.
//   - delta_max is max over honest nodes of the weight they gave Byzantine
//     senders; honest averages exclude Byzantine nodes.
//
// Asynchronous timing (Config.Async, async.go): no round; each node runs
// its own loop of steps on a virtual clock. Each node's time per step and
// each link's delay are drawn from the seed (constant, uniform or
// lognormal; a fraction of stragglers Slowdown times slower), so the
// order of events — a node's training done, a message arriving — is fixed
// before any node computes. An event queue pops them by virtual time,
// ties by node id, then kind (a message arriving as a node's training
// ends is combined in that step), then the order they were scheduled in.
// At a node's training done the driver steps in the messages that reached
// it, sends its model to its out-neighbours (arriving a link's delay
// later), ends the step (the node combines the newest message of each
// sender, with its staleness) and begins the next. Local training runs on
// the worker pool ahead of the event loop: a node's training depends only
// on its state at Begin, and the messages reaching it while it trains are
// held by the driver and stepped in, in arrival order, when its training
// ends (Step at arrival would read the same node state), so the records
// are bit-identical for any GOMAXPROCS and worker count. Records: one per
// node step with its virtual time (Async.Steps), and per window of virtual
// time one metrics.Round (Round the window's index) of each node's latest
// state with the window's traffic, refusals and training steps.
// Byzantine nodes are refused in asynchronous timing for now.
package sim
