package node

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"

	"github.com/trellis-fl/trellis/nn"
	"github.com/trellis-fl/trellis/trust"
)

// StatefulLayer is a Layer whose state survives a restart (a checkpoint
// after End): SaveState between rounds, LoadState into a fresh layer of
// the same configuration before its next Begin.
type StatefulLayer interface {
	Layer
	SaveState() ([]byte, error)
	LoadState([]byte) error
}

// Layers' state in a checkpoint, little-endian:
//
//	magic "trellis/layers" (14 bytes), format version u8 (1),
//	layer count u8, then per layer in the node's order:
//	  name: u8 length + Name(), state: u32 length + the layer's bytes
const (
	layersMagic   = "trellis/layers"
	layersVersion = 1
)

// SaveLayers returns the state of the node's layers between rounds. A
// layer that cannot save its state (it does not implement StatefulLayer:
// DP's accountant, secure aggregation) is an error: a restart would lose
// it.
func (n *Node) SaveLayers() ([]byte, error) {
	if n.rs.phase != phaseIdle {
		return nil, errors.New("node: layers saved inside a round (End first)")
	}
	b := append([]byte(layersMagic), layersVersion, uint8(len(n.layers)))
	for _, l := range n.layers {
		sl, ok := l.(StatefulLayer)
		if !ok {
			return nil, fmt.Errorf("node %d: layer %s cannot save its state: a restarted node would lose it", n.cfg.ID, l.Name())
		}
		st, err := sl.SaveState()
		if err != nil {
			return nil, fmt.Errorf("node %d: layer %s: %w", n.cfg.ID, l.Name(), err)
		}
		b = append(b, uint8(len(l.Name())))
		b = append(b, l.Name()...)
		b = binary.LittleEndian.AppendUint32(b, uint32(len(st)))
		b = append(b, st...)
	}
	return b, nil
}

// LoadLayers puts SaveLayers' bytes into the layers of a fresh node built
// from the same configuration, between rounds (before its next Begin).
// The layers must be
// the same, in the same order.
func (n *Node) LoadLayers(b []byte) error {
	if n.rs.phase != phaseIdle {
		return errors.New("node: layers loaded inside a round")
	}
	if len(b) < len(layersMagic)+2 || string(b[:len(layersMagic)]) != layersMagic {
		return errors.New("node: not a layers state")
	}
	if v := b[len(layersMagic)]; v != layersVersion {
		return fmt.Errorf("node: layers state format %d, this trellis reads %d", v, layersVersion)
	}
	if k := int(b[len(layersMagic)+1]); k != len(n.layers) {
		return fmt.Errorf("node %d: the state has %d layers, the node %d", n.cfg.ID, k, len(n.layers))
	}
	b = b[len(layersMagic)+2:]
	for _, l := range n.layers {
		if len(b) < 1 || len(b) < 1+int(b[0])+4 {
			return fmt.Errorf("node %d: layers state truncated at layer %s", n.cfg.ID, l.Name())
		}
		name := string(b[1 : 1+int(b[0])])
		b = b[1+int(b[0]):]
		if name != l.Name() {
			return fmt.Errorf("node %d: the state's layer %s where the node has %s", n.cfg.ID, name, l.Name())
		}
		size := binary.LittleEndian.Uint32(b)
		b = b[4:]
		if uint64(size) > uint64(len(b)) {
			return fmt.Errorf("node %d: layer %s: state of %d bytes, %d left", n.cfg.ID, name, size, len(b))
		}
		sl, ok := l.(StatefulLayer)
		if !ok {
			return fmt.Errorf("node %d: layer %s cannot load a state", n.cfg.ID, name)
		}
		if err := sl.LoadState(b[:size]); err != nil {
			return fmt.Errorf("node %d: layer %s: %w", n.cfg.ID, name, err)
		}
		b = b[size:]
	}
	if len(b) != 0 {
		return fmt.Errorf("node %d: layers state has %d trailing bytes", n.cfg.ID, len(b))
	}
	return nil
}

// SaveState implements StatefulLayer: 0 before the first round, else 1 and
// the trust state's snapshot (the claims to forward next round are the
// state's Forwards).
func (t *TrustLayer) SaveState() ([]byte, error) {
	if t.ts == nil {
		return []byte{0}, nil
	}
	snap, err := t.ts.MarshalBinary()
	if err != nil {
		return nil, err
	}
	return append([]byte{1}, snap...), nil
}

// LoadState implements StatefulLayer.
func (t *TrustLayer) LoadState(b []byte) error {
	switch {
	case len(b) == 1 && b[0] == 0:
		t.ts, t.fwd = nil, nil
		return nil
	case len(b) < 1 || b[0] != 1:
		return errors.New("trust layer: not a trust layer state")
	}
	ts, err := trust.Restore(t.id, t.dir, t.cfg, b[1:])
	if err != nil {
		return err
	}
	t.ts, t.fwd = ts, ts.Forwards()
	return nil
}

// TrainData is the node's training source (a checkpoint saves its
// position).
func (n *Node) TrainData() nn.Batches { return n.cfg.TrainData }

// floatState is an optimizer whose state is a float32 vector.
type floatState interface {
	State() []float32
	SetState([]float32) error
}

// CopyOptimizerState is the state of the optimizer of the strategy's second
// model (View.TrainCopy: Ditto's global model), which lives across rounds;
// nil when the node has none yet.
func (n *Node) CopyOptimizerState() ([]float32, error) {
	if n.copyOpt == nil {
		return nil, nil
	}
	fs, ok := n.copyOpt.(floatState)
	if !ok {
		return nil, fmt.Errorf("node %d: the second model's optimizer cannot save its state", n.cfg.ID)
	}
	return slices.Clone(fs.State()), nil
}

// RestoreCopyOptimizer makes the second model's optimizer with state s
// (CopyOptimizerState's); an empty s leaves the node without one (made
// fresh when first needed: the same, for an optimizer whose state is
// empty).
func (n *Node) RestoreCopyOptimizer(s []float32) error {
	if len(s) == 0 {
		n.copyOpt = nil
		return nil
	}
	if n.cfg.NewOptimizer == nil {
		return fmt.Errorf("node %d: a second model's optimizer state, and no NewOptimizer", n.cfg.ID)
	}
	o, err := n.cfg.NewOptimizer()
	if err != nil {
		return err
	}
	fs, ok := o.(floatState)
	if !ok {
		return fmt.Errorf("node %d: the second model's optimizer cannot take a state", n.cfg.ID)
	}
	if err := fs.SetState(s); err != nil {
		return err
	}
	n.copyOpt = o
	return nil
}
