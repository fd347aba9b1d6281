package node

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/trellis-fl/trellis/strategy"
)

// Snapshot is everything of a node that must persist between rounds, as
// one value (etcd raft's HardState and Snapshot): a driver that saves it
// after End and gives it to Restore of a node built from the same
// configuration gets a node whose next round is the original's, bit for
// bit. It holds no references into the node.
type Snapshot struct {
	// Node is the node's id; Round the last round it ended (-1 before its
	// first).
	Node, Round int
	// Params are the model's parameters and ModelState its local state
	// (batch-norm statistics).
	Params, ModelState []float32
	// Optimizer is the optimizer's state (momentum, moments), nil for an
	// optimizer without one; CopyOptimizer that of the optimizer of the
	// strategy's second model (View.TrainCopy: Ditto's global model), nil
	// while the node has none.
	Optimizer, CopyOptimizer []float32
	// Strategy is the strategy's state (strategy.Stateful's format), nil
	// for a strategy that carries nothing between rounds.
	Strategy []byte
	// Layers are the layers' states, in the node's order.
	Layers []LayerState
	// TrainData is the training stream's position, so that a restored node
	// draws the batches the original would have.
	TrainData DataPosition
	// Senders are, in asynchronous timing (Config.Async), the newest step
	// and sequence number taken from each sender, in sender order, so that
	// a restored node refuses a copy of a message it took before as the
	// original would (superseded, duplicate). Pending inputs are not kept:
	// a restart loses them, as a dead process does.
	Senders []SenderStep
}

// SenderStep is the newest message an asynchronous node took from a
// sender: its step and sequence number.
type SenderStep struct {
	From      uint32
	Step, Seq uint64
}

// LayerState is one layer's state in a Snapshot (Layer.Snapshot's bytes).
type LayerState struct {
	Name  string
	State []byte
}

// DataPosition is where a training stream is (data.Batcher.Position):
// epochs started after the first, samples taken of the current one.
type DataPosition struct {
	Resets uint64
	Pos    int
}

// Positioned is training data whose position a Snapshot keeps
// (data.Batcher): Position says where it is; Seek puts a stream built as
// the original was at a position of the original.
type Positioned interface {
	Position() (resets uint64, pos int)
	Seek(resets uint64, pos int) error
}

// OptimizerState is an optimizer whose state is a float32 vector (nn's
// SGD momentum, Adam's moments and step count).
type OptimizerState interface {
	State() []float32
	SetState([]float32) error
}

// Snapshot returns the node's state between rounds (after End, or before
// its first Begin). A strategy that carries state it cannot save (neither
// strategy.Stateful nor strategy.Stateless), or training data that cannot
// say where it is, is an error: a restart would silently lose them.
func (n *Node) Snapshot() (Snapshot, error) {
	if n.rs.phase != phaseIdle {
		return Snapshot{}, n.outOfOrder("Snapshot", "End of the open round")
	}
	m := n.cfg.Model
	s := Snapshot{Node: n.cfg.ID, Round: -1, Params: slices.Clone(m.Params()), ModelState: slices.Clone(m.State())}
	if n.rs.begun {
		s.Round = n.rs.r
	}
	if o, ok := n.cfg.Optimizer.(OptimizerState); ok {
		s.Optimizer = slices.Clone(o.State())
	}
	if n.copyOpt != nil {
		o, ok := n.copyOpt.(OptimizerState)
		if !ok {
			return Snapshot{}, fmt.Errorf("node %d: the second model's optimizer (%T) cannot save its state", n.cfg.ID, n.copyOpt)
		}
		s.CopyOptimizer = slices.Clone(o.State())
	}
	switch st := n.cfg.Strategy.(type) {
	case strategy.Stateful:
		b, err := st.SaveState()
		if err != nil {
			return Snapshot{}, fmt.Errorf("node %d: strategy state: %w", n.cfg.ID, err)
		}
		s.Strategy = b
	default:
		if !strategy.Stateless(st) {
			return Snapshot{}, fmt.Errorf("node %d: strategy %s keeps state across rounds that it cannot save", n.cfg.ID, st.Name())
		}
	}
	for _, l := range n.layers {
		b, err := l.Snapshot()
		if err != nil {
			return Snapshot{}, fmt.Errorf("node %d: layer %s: %w", n.cfg.ID, l.Name(), err)
		}
		s.Layers = append(s.Layers, LayerState{Name: l.Name(), State: b})
	}
	td, ok := n.cfg.TrainData.(Positioned)
	if !ok {
		return Snapshot{}, fmt.Errorf("node %d: its training data (%T) cannot say where it is", n.cfg.ID, n.cfg.TrainData)
	}
	s.TrainData.Resets, s.TrainData.Pos = td.Position()
	if a := n.async; a != nil {
		for id, st := range a.senders {
			s.Senders = append(s.Senders, SenderStep{From: id, Step: st.step, Seq: st.seq})
		}
		slices.SortFunc(s.Senders, func(x, y SenderStep) int { return cmp.Compare(x.From, y.From) })
	}
	return s, nil
}

// Restore puts a Snapshot into a node built from the same configuration,
// before its first Begin; the node then goes on with round s.Round + 1 (or
// any later one). It refuses, naming what differs, a snapshot of another
// node, of other shapes (parameters, model state, optimizer state) or of
// other layers, and state the node's strategy or layers cannot take. After
// an error the node is unusable: build a new one.
func (n *Node) Restore(s Snapshot) error {
	m := n.cfg.Model
	switch {
	case n.rs.phase != phaseIdle || n.rs.begun:
		return fmt.Errorf("node %d: Restore after the node ran a round (restore into a fresh node)", n.cfg.ID)
	case s.Node != n.cfg.ID:
		return fmt.Errorf("node %d: a snapshot of node %d", n.cfg.ID, s.Node)
	case s.Round < -1 || s.Round >= math.MaxInt32:
		return fmt.Errorf("node %d: a snapshot of round %d", n.cfg.ID, s.Round)
	case len(s.Params) != m.NumParams():
		return fmt.Errorf("node %d: the snapshot has %d parameters, the model %d (another model?)", n.cfg.ID, len(s.Params), m.NumParams())
	case len(s.ModelState) != len(m.State()):
		return fmt.Errorf("node %d: the snapshot has %d model-state values, the model %d (another model?)", n.cfg.ID, len(s.ModelState), len(m.State()))
	case len(s.Senders) > 0 && n.async == nil:
		return fmt.Errorf("node %d: the snapshot holds asynchronous senders' steps, and the node runs in rounds", n.cfg.ID)
	case len(s.Layers) != len(n.layers):
		return fmt.Errorf("node %d: the snapshot has %d layers (%s), the node %d (%s)", n.cfg.ID, len(s.Layers), layerNames(s.Layers), len(n.layers), n.layerNames())
	}
	for i, l := range n.layers {
		if s.Layers[i].Name != l.Name() {
			return fmt.Errorf("node %d: the snapshot's layers are %s, the node's %s", n.cfg.ID, layerNames(s.Layers), n.layerNames())
		}
	}
	if o, ok := n.cfg.Optimizer.(OptimizerState); ok {
		if err := o.SetState(s.Optimizer); err != nil {
			return fmt.Errorf("node %d: optimizer state: %w", n.cfg.ID, err)
		}
	} else if len(s.Optimizer) > 0 {
		return fmt.Errorf("node %d: the snapshot holds optimizer state its optimizer (%T) cannot take", n.cfg.ID, n.cfg.Optimizer)
	}
	if err := n.restoreCopyOptimizer(s.CopyOptimizer); err != nil {
		return err
	}
	if st, ok := n.cfg.Strategy.(strategy.Stateful); ok {
		if err := st.LoadState(s.Strategy); err != nil {
			return fmt.Errorf("node %d: strategy state: %w", n.cfg.ID, err)
		}
	} else if len(s.Strategy) > 0 {
		return fmt.Errorf("node %d: the snapshot holds strategy state its strategy (%s) cannot take", n.cfg.ID, n.cfg.Strategy.Name())
	}
	for i, l := range n.layers {
		if err := l.Restore(s.Layers[i].State); err != nil {
			return fmt.Errorf("node %d: layer %s: %w", n.cfg.ID, l.Name(), err)
		}
	}
	td, ok := n.cfg.TrainData.(Positioned)
	if !ok {
		return fmt.Errorf("node %d: its training data (%T) cannot take a position", n.cfg.ID, n.cfg.TrainData)
	}
	if err := td.Seek(s.TrainData.Resets, s.TrainData.Pos); err != nil {
		return fmt.Errorf("node %d: training data: %w", n.cfg.ID, err)
	}
	if a := n.async; a != nil {
		clear(a.senders)
		for _, st := range s.Senders {
			if a.senders[st.From] != nil {
				return fmt.Errorf("node %d: the snapshot lists sender %d twice", n.cfg.ID, st.From)
			}
			a.senders[st.From] = &asyncSender{step: st.Step, seq: st.Seq}
		}
	}
	copy(m.Params(), s.Params)
	copy(m.State(), s.ModelState)
	if s.Round >= 0 {
		n.rs.r, n.rs.begun = s.Round, true
	}
	// Layers that read another layer's results between rounds (a screened
	// secure-aggregation group reads the trust layer's screening at Begin)
	// took them from the last View of the original; show them the restored
	// ones.
	n.view()
	return nil
}

// restoreCopyOptimizer makes the second model's optimizer with state s; an
// empty s leaves the node without one (made fresh when first needed: the
// same, for an optimizer whose state is empty).
func (n *Node) restoreCopyOptimizer(s []float32) error {
	if len(s) == 0 {
		n.copyOpt = nil
		return nil
	}
	if n.cfg.NewOptimizer == nil {
		return fmt.Errorf("node %d: the snapshot holds a second model's optimizer state, and the node makes no second optimizer", n.cfg.ID)
	}
	o, err := n.cfg.NewOptimizer()
	if err != nil {
		return err
	}
	fs, ok := o.(OptimizerState)
	if !ok {
		return fmt.Errorf("node %d: the second model's optimizer (%T) cannot take a state", n.cfg.ID, o)
	}
	if err := fs.SetState(s); err != nil {
		return fmt.Errorf("node %d: the second model's optimizer state: %w", n.cfg.ID, err)
	}
	n.copyOpt = o
	return nil
}

func layerNames(ls []LayerState) string {
	names := make([]string, len(ls))
	for i, l := range ls {
		names[i] = l.Name
	}
	return listOrNone(names)
}

func (n *Node) layerNames() string {
	names := make([]string, len(n.layers))
	for i, l := range n.layers {
		names[i] = l.Name()
	}
	return listOrNone(names)
}

func listOrNone(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return fmt.Sprint(names)
}
