// Package node is the per-node state machine of the round protocol: local
// training → share → receive → combine → evaluate. It does no I/O, keeps no
// clock and never learns who is Byzantine: a driver (the simulator, later
// the network runtime) hands it its neighborhood and the messages that
// arrived, and takes the messages it wants sent.
//
// Every message passes the wire Validator (recipient, known sender, round,
// signature, length, finiteness) before the strategy sees it; rejections
// are counted per sender. Incoming vectors are read-only for strategies:
// a broadcast message is shared by all its recipients.
//
// Strategies may evaluate parameter vectors on the node's own data through
// the hooks the node puts in strategy.View: BatchLoss (one training batch),
// TrainCopy (a second model's local training) and Validate (outputs on the
// first n samples of the validation split, in its fixed order, the labels
// read once). Each copies the parameters into the node's model and restores
// the model afterwards; nothing leaves the node.
package node
