package node

import (
	"fmt"

	"github.com/trellis-fl/trellis/wire"
)

// Memos are what a simulator shares among its nodes so that work done for
// one is not redone for the next: a node on a network has none, and
// results never depend on them (the simulator's option, not the node's
// configuration).
type Memos struct {
	// Verify is shared signature-verification memory for the validator and
	// the trust layer (wire.VerifyCache).
	Verify *wire.VerifyCache
	// Digests is the simulator's memo of message digests (wire.DigestMemo),
	// consulted by the validator only while the simulator has a delivery
	// phase open; senders note what they sign in it.
	Digests *wire.DigestMemo
	// Global is the memo of global-test evaluations (EvalMemo): nodes
	// holding the same parameters evaluate them once.
	Global *EvalMemo
}

// ShareMemos gives the node a simulator's shared memos, before its first
// round (and before Restore).
func (n *Node) ShareMemos(m Memos) error {
	if n.rs.begun || n.rs.phase != phaseIdle {
		return fmt.Errorf("node %d: memos shared after the node ran a round", n.cfg.ID)
	}
	v, err := newValidator(n.cfg, m)
	if err != nil {
		return fmt.Errorf("node %d: %w", n.cfg.ID, err)
	}
	n.validator, n.memos = v, m
	for _, l := range n.layers {
		if u, ok := l.(MemoUser); ok {
			u.UseMemos(m)
		}
	}
	return nil
}

// MemoUser is a Layer that does work a simulator's memos can share (the
// trust layer verifies claims' signatures through Memos.Verify): ShareMemos
// hands them on, before the first round.
type MemoUser interface {
	Layer
	UseMemos(Memos)
}

// newValidator is the node's message validator, with the memos m.
func newValidator(cfg Config, m Memos) (*wire.Validator, error) {
	return wire.NewValidator(wire.ValidatorConfig{
		Self: uint32(cfg.ID), Directory: cfg.Directory, PayloadLen: cfg.Model.NumParams(),
		Cache: m.Verify, Digests: m.Digests})
}
