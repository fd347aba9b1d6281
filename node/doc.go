// Package node is the per-node state machine of the round protocol. It
// does no I/O, keeps no clock and never learns who is Byzantine: a driver
// (the simulator, the network runtime) tells it what happened and takes
// what it wants done, through five calls (modelled on etcd raft's RawNode):
//
//	Begin(r, hood)   round r opens with its neighbourhood
//	Train(ctx)       local training, optional, cancellable between batches
//	Outbox()         opens the next exchange phase: the signed messages to send, and whether another phase follows
//	Step(m)          any time: a message that arrived
//	End(opts)        closes the round: layers end, the strategy combines, evaluation when asked; returns Ready
//
// Calls out of order return an error naming the call expected. Ready is the
// round's whole output: weights the strategy gave each sender, the
// reports of the layers and the strategy through one interface
// (Ready.Reports: trust, ε, the group sum, agreement scores; each reports
// its own fields), the round's rejections by sender and reason, the
// evaluation; a driver reads nothing else.
//
// Messages: what Step refuses. The node does not rely on its driver to
// route: before any signature is verified or any body is read, Step
// refuses a message of the open round whose sender is not one of the
// round's in-neighbours (Begin's hood.In: a relay handing a node another
// node's correctly signed message is refused), a copy of a message already
// taken or held (same sender, round, sequence number and signature; a
// copy is never stored twice), a kind no exchange phase of the round
// expects, or a body outside its kind's bound for this model and
// protocol (Layer.Expects: every kind has an exact or bounded size — a
// vector or masked vector of the parameter count, a claim of at most every
// other node, keys, shares and ciphertexts of their layer's sizes). It
// then validates the message (wire.Validator: recipient, known sender,
// round, signature, replay, length, finiteness) before any layer or
// strategy sees it. A message for a later phase of the open round waits
// until Outbox opens that phase; one of a later round (at most two ahead,
// from a sender in the directory, of a kind and size some phase takes)
// waits until its round begins and is checked again then. Waiting
// messages are kept in arrival order (each sender's order, which replay
// protection needs), each once, in one store bounded in count and bytes
// per sender (four of the largest message the node takes) and in total
// (sixteen senders' worth). One of a past round, or of the open round once
// End was called, is dropped. Every refusal is counted against its sender
// and reason in the round's Ready. The node takes the messages it is
// handed; incoming vectors are read-only for strategies (a broadcast
// message is shared by all its recipients). What a peer does not send
// cannot stop the node either: when fewer inputs arrive than the
// strategy's rule needs (strategy.ErrKeptOwn), End keeps the trained
// model, says so (Ready.KeptOwn) and refuses those inputs as too_few.
//
// Asynchronous timing (Config.Async, async.go) drives the same calls a
// third way: each node's step counter in place of the round, Step at any
// time, one pending message set per sender (the newest step; older and
// stale ones refused and counted, the held bytes within the per-sender
// bound), and End combining what arrived since the last step with each
// input's staleness (strategy.Incoming.Staleness). Only Stepwise layers
// (DP's) run there; the others are refused (docs/methods/async.md).
//
// Layers. Protocol additions that are not a strategy implement Layer, and
// live in sub-packages that import node (the core here knows none of
// them): DMTT's topology trust (trustlayer); node-level DP (dplayer.Layer:
// the round's update clipped and noised once, before the strategy shares)
// and sample-level DP (dplayer.Sample, which is also the node's
// Config.Trainer: DP-SGD); secure aggregation inside each node's group
// (secagg: pairwise masks, a Paillier relay or threshold CKKS), whose group
// mean replaces what the strategy would combine. Whoever builds a node
// builds its layers and passes them in Config.Layers, the trust layer
// first. Layers take part in every step of the round in that order, own
// message kinds (claims, masked vectors, keys, shares, ciphertexts), may
// need several exchange phases, and a Releaser may transform what the
// strategy releases before it is signed. The strategy sees their results
// through strategy.View; their reports in Ready (TrustReport,
// PrivacyReport, SecAggReport) are plain data types of this package, so
// that a driver reads a round through node alone.
//
// State. Everything that must persist between rounds leaves through one
// value, Snapshot (state.go): parameters, model and optimizer state, the
// strategy's (strategy.Stateful), every layer's (Layer.Snapshot: the trust
// state, DP's accountant, a Paillier key) and the training stream's
// position. Restore puts it into a fresh node of the same configuration,
// checking node, shapes, layers and versions; the restored node's next
// round is the original's, bit for bit. A driver needs no getter to
// checkpoint a node.
//
// Randomness comes from an injected seed.Source, per purpose: derived from
// the experiment seed in simulation (bit-reproducible), crypto/rand for
// the private purposes in deployment.
//
// Strategies may evaluate parameter vectors on the node's own data through
// the hooks the node puts in strategy.View: BatchLoss (one training batch),
// TrainCopy (a second model's local training) and Validate (outputs on the
// first n samples of the validation split, in its fixed order, the labels
// read once). Each copies the parameters into the node's model and restores
// the model afterwards; nothing leaves the node.
package node
