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
package node
