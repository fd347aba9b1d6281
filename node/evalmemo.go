package node

import (
	"crypto/sha256"
	"sync"
	"unsafe"

	"github.com/trellis-fl/trellis/nn"
)

// EvalMemo remembers global-test evaluations by the SHA-256 of the
// evaluated model's parameters and state, for the nodes of one simulation.
// The global test set is the same samples in the same order for every
// node and evaluation is deterministic, so a model bit-identical to one
// already evaluated has the same result; where every node holds the same
// model (FedAvg on a complete graph: each mixes the same vectors in
// float64 and rounds once), the round's global evaluation runs once
// instead of once per node. A node meeting a model another node is still
// evaluating waits for that result. Safe for concurrent use.
//
// Where models differ (personalized and robust strategies), the memo costs
// one SHA-256 of the model per evaluation: for the FEMNIST CNN's 6.8 MB,
// 5.5 ms with the SHA extensions and 20 ms without (measured on an Intel
// Xeon), against about 140 ms for evaluating 1,000 global test samples.
// A cryptographic hash, because a collision would silently report another
// model's accuracy.
type EvalMemo struct {
	mu      sync.Mutex
	entries map[[sha256.Size]byte]*evalEntry
	// limit bounds the entries kept: older rounds' models do not come back
	// (training moves every model), so the map is dropped when full.
	limit int
}

type evalEntry struct {
	done chan struct{}
	res  nn.EvalResult
	err  error
}

// NewEvalMemo returns a memo for a simulation of the given number of
// nodes.
func NewEvalMemo(nodes int) *EvalMemo {
	return &EvalMemo{entries: map[[sha256.Size]byte]*evalEntry{}, limit: 4 * max(nodes, 1)}
}

// Evaluate returns eval's result for model m, from the memo when a model
// with the same parameters and state was evaluated (or is being evaluated)
// through it.
func (e *EvalMemo) Evaluate(m *nn.Model, eval func() (nn.EvalResult, error)) (nn.EvalResult, error) {
	key := modelDigest(m)
	e.mu.Lock()
	if en, ok := e.entries[key]; ok {
		e.mu.Unlock()
		<-en.done
		return en.res, en.err
	}
	if len(e.entries) >= e.limit {
		clear(e.entries)
	}
	en := &evalEntry{done: make(chan struct{})}
	e.entries[key] = en
	e.mu.Unlock()
	en.res, en.err = eval()
	close(en.done)
	return en.res, en.err
}

// modelDigest hashes a model's parameters and state, as their bytes.
func modelDigest(m *nn.Model) [sha256.Size]byte {
	h := sha256.New()
	for _, v := range [][]float32{m.Params(), m.State()} {
		if len(v) > 0 {
			h.Write(unsafe.Slice((*byte)(unsafe.Pointer(&v[0])), 4*len(v)))
		}
	}
	var d [sha256.Size]byte
	h.Sum(d[:0])
	return d
}
