package node

import (
	"github.com/trellis-fl/trellis/nn"
	"github.com/trellis-fl/trellis/strategy"
)

// What the tests of package node_test inspect of a node's insides. The
// tests are external so that they can build nodes with the layers of the
// sub-packages (which import node) and share node/internal/nodetest.

// Expectations is what each exchange phase of n's rounds takes, derived
// from its layers and model (inputs.go).
func Expectations(n *Node) ([][]Expect, error) {
	if err := n.setupInputs(); err != nil {
		return nil, err
	}
	return n.rs.in.expect, nil
}

// View is the strategy's view of n now.
func View(n *Node) *strategy.View { return n.view() }

// SetVal replaces n's validation split.
func SetVal(n *Node, val nn.Batches) { n.cfg.Val = val }

// Inbox is how many vectors n's strategy has been handed this round.
func Inbox(n *Node) int { return len(n.rs.inbox) }

// HeldStore is n's store of messages held for later rounds and phases:
// messages and bytes per sender, each held message's size, the total and
// the per-sender byte bound.
type HeldStore struct {
	Count, Bytes               map[uint32]int
	Sizes                      []int
	TotalBytes, PerSenderBytes int
}

// Held is n's store of held messages now.
func Held(n *Node) HeldStore {
	in := &n.rs.in
	h := HeldStore{Count: in.count, Bytes: in.bytes, TotalBytes: in.totalBytes, PerSenderBytes: in.perSenderBytes}
	for _, m := range in.store {
		h.Sizes = append(h.Sizes, m.size)
	}
	return h
}

// The store's bounds in messages per sender and senders' shares in all.
const (
	HeldPerSender    = heldPerSender
	HeldTotalSenders = heldTotalSenders
)
