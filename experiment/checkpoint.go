package experiment

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"

	"github.com/trellis-fl/trellis/node"
	"github.com/trellis-fl/trellis/strategy"
)

// Checkpoint files: one node's state after a finished round, the format
// every driver uses (the simulator's resume and the cluster runtime's
// restart). Two files in a directory:
//
//	checkpoint.json  {"format": 2, "round": R, "node": I,
//	                  "params": P, "model_state": M, "optimizer": O,
//	                  "copy_optimizer": C, "strategy": S, "layers": L,
//	                  "streams": {"name": "<base64 state>", ...},
//	                  "config": "<the driver's fingerprint of the config>",
//	                  "sha256": "<hex of checkpoint.bin>"}
//	checkpoint.bin   P float32 parameters, M float32 of the model's local
//	                 state (batch-norm statistics), O float32 optimizer
//	                 state, C float32 of the optimizer of the strategy's
//	                 second model (Ditto's), little-endian, then S bytes
//	                 of strategy state
//	                 (strategy.Stateful's format) and L bytes of the
//	                 layers' (node.SaveLayers' format: the trust state)
//
// R is the last finished round (the next run starts at R + 1). Optimizer
// and strategy state are present when they implement StateSaver (0 and 0
// otherwise: a stateless optimizer or strategy; Capture refuses a strategy
// that is neither strategy.Stateless nor a StateSaver, and a layer that
// cannot save its state). Format 1 (no model state, no layers) is read. Streams are the positions
// of named random streams (math/rand/v2 PCG's MarshalBinary), for drivers
// that hold long-lived streams; the node's own streams derive from (seed,
// purpose, node, round) and need none. The stream "train_data" is the
// training data's position (16 bytes: epochs started u64, samples taken
// of the current one u64; data.Batcher.Position), so that a restored node
// draws the batches the original would have. The .bin is written first and the
// .json last, both atomically (temporary file and rename), and the .json
// names the .bin's hash, so a crash between the two leaves the previous
// checkpoint readable or an error, never a mix.
const (
	CheckpointJSON   = "checkpoint.json"
	CheckpointBin    = "checkpoint.bin"
	checkpointFormat = 2
)

// State is one node's checkpoint.
type State struct {
	Round      int
	Node       int
	Params     []float32
	ModelState []float32
	Optimizer  []float32
	// CopyOptimizer is the state of the optimizer of the strategy's second
	// model (node.Node.CopyOptimizerState).
	CopyOptimizer []float32
	Strategy      []byte
	Layers        []byte
	Streams       map[string][]byte
	// Config, when set, names the config the node ran (a driver's
	// fingerprint of it): a restart checks it is the same.
	Config string
}

// StateSaver is implemented by optimizers and strategies whose state must
// survive a restart (momentum buffers, history, per-peer trust).
type StateSaver interface {
	SaveState() ([]byte, error)
	LoadState([]byte) error
}

// FloatStateSaver is implemented by optimizers whose state is a float32
// vector (nn's SGD momentum, Adam's moments and step count as floats).
type FloatStateSaver interface {
	State() []float32
	SetState([]float32) error
}

type checkpointMeta struct {
	Format     int               `json:"format"`
	Round      int               `json:"round"`
	Node       int               `json:"node"`
	Params     int               `json:"params"`
	ModelState int               `json:"model_state"`
	Optimizer  int               `json:"optimizer"`
	CopyOpt    int               `json:"copy_optimizer"`
	Strategy   int               `json:"strategy"`
	Layers     int               `json:"layers"`
	Streams    map[string][]byte `json:"streams,omitempty"`
	Config     string            `json:"config,omitempty"`
	SHA256     string            `json:"sha256"`
}

// Save writes st into dir (created if needed), replacing the checkpoint
// there.
func Save(dir string, st *State) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	var bin bytes.Buffer
	bin.Grow(4*(len(st.Params)+len(st.ModelState)+len(st.Optimizer)+len(st.CopyOptimizer)) + len(st.Strategy) + len(st.Layers))
	var b [4]byte
	for _, xs := range [][]float32{st.Params, st.ModelState, st.Optimizer, st.CopyOptimizer} {
		for _, x := range xs {
			binary.LittleEndian.PutUint32(b[:], math.Float32bits(x))
			bin.Write(b[:])
		}
	}
	bin.Write(st.Strategy)
	bin.Write(st.Layers)
	sum := sha256.Sum256(bin.Bytes())
	meta := checkpointMeta{Format: checkpointFormat, Round: st.Round, Node: st.Node, Params: len(st.Params),
		ModelState: len(st.ModelState), Optimizer: len(st.Optimizer), CopyOpt: len(st.CopyOptimizer),
		Strategy: len(st.Strategy), Layers: len(st.Layers),
		Streams: st.Streams, Config: st.Config, SHA256: hex.EncodeToString(sum[:])}
	js, err := json.MarshalIndent(meta, "", "  ")
	if err != nil {
		return err
	}
	if err := writeAtomic(filepath.Join(dir, CheckpointBin), bin.Bytes()); err != nil {
		return err
	}
	return writeAtomic(filepath.Join(dir, CheckpointJSON), append(js, '\n'))
}

// Load reads the checkpoint in dir. A missing checkpoint is an error
// satisfying errors.Is(err, os.ErrNotExist); a damaged one names the file
// and what is wrong.
func Load(dir string) (*State, error) {
	jpath, bpath := filepath.Join(dir, CheckpointJSON), filepath.Join(dir, CheckpointBin)
	js, err := os.ReadFile(jpath)
	if err != nil {
		return nil, err
	}
	var meta checkpointMeta
	if err := json.Unmarshal(js, &meta); err != nil {
		return nil, fmt.Errorf("%s: %w", jpath, err)
	}
	if meta.Format != 1 && meta.Format != checkpointFormat {
		return nil, fmt.Errorf("%s: format %d, this trellis reads formats 1 and %d", jpath, meta.Format, checkpointFormat)
	}
	if meta.Round < 0 || meta.Params < 0 || meta.ModelState < 0 || meta.Optimizer < 0 || meta.CopyOpt < 0 || meta.Strategy < 0 || meta.Layers < 0 {
		return nil, fmt.Errorf("%s: negative round or length", jpath)
	}
	if meta.Format == 1 && (meta.ModelState != 0 || meta.CopyOpt != 0 || meta.Layers != 0) {
		return nil, fmt.Errorf("%s: format 1 has no model state, second optimizer or layers", jpath)
	}
	const maxLen = 1 << 40 // no sum of lengths overflows
	if meta.Params > maxLen || meta.ModelState > maxLen || meta.Optimizer > maxLen || meta.CopyOpt > maxLen || meta.Strategy > maxLen || meta.Layers > maxLen {
		return nil, fmt.Errorf("%s: a length beyond any checkpoint", jpath)
	}
	bin, err := os.ReadFile(bpath)
	if err != nil {
		return nil, err
	}
	floatsEnd := 4 * (meta.Params + meta.ModelState + meta.Optimizer + meta.CopyOpt)
	if want := floatsEnd + meta.Strategy + meta.Layers; len(bin) != want {
		return nil, fmt.Errorf("%s: %d bytes, %s says %d", bpath, len(bin), CheckpointJSON, want)
	}
	if sum := sha256.Sum256(bin); hex.EncodeToString(sum[:]) != meta.SHA256 {
		return nil, fmt.Errorf("%s: SHA-256 does not match %s (written by another save?)", bpath, CheckpointJSON)
	}
	floats := func(off, n int) []float32 {
		out := make([]float32, n)
		for i := range out {
			out[i] = math.Float32frombits(binary.LittleEndian.Uint32(bin[off+4*i:]))
		}
		return out
	}
	st := &State{Round: meta.Round, Node: meta.Node, Params: floats(0, meta.Params),
		ModelState:    floats(4*meta.Params, meta.ModelState),
		Optimizer:     floats(4*(meta.Params+meta.ModelState), meta.Optimizer),
		CopyOptimizer: floats(4*(meta.Params+meta.ModelState+meta.Optimizer), meta.CopyOpt), Streams: meta.Streams,
		Config: meta.Config}
	if meta.Strategy > 0 {
		st.Strategy = slices.Clone(bin[floatsEnd : floatsEnd+meta.Strategy])
	}
	if meta.Layers > 0 {
		st.Layers = slices.Clone(bin[floatsEnd+meta.Strategy:])
	}
	return st, nil
}

// CaptureModel is the part of Capture an audit needs: the model's
// parameters and model-local state after round, nothing of the optimizer,
// strategy, layers or data position. It works for every node (a DP
// layer's accountant cannot be saved yet, so Capture refuses such nodes);
// it holds no optimizer, strategy or layer state, so it is for reading the
// model (the audit), not for resuming a node.
func CaptureModel(n *node.Node, round int) *State {
	return &State{Round: round, Node: n.ID(), Params: slices.Clone(n.Model().Params()),
		ModelState: slices.Clone(n.Model().State())}
}

// Capture is node n's state after round (its last finished one): its
// parameters and model-local state, its optimizer's and strategy's state
// when they implement FloatStateSaver / StateSaver, and its layers' (the
// trust state). A strategy that carries state it cannot save (neither a
// StateSaver nor strategy.Stateless), or a layer that cannot save its own,
// is an error: a restart would silently lose it.
func Capture(n *node.Node, round int) (*State, error) {
	st := CaptureModel(n, round)
	if o, ok := n.Optimizer().(FloatStateSaver); ok {
		st.Optimizer = slices.Clone(o.State())
	}
	if s, ok := n.Strategy().(StateSaver); ok {
		b, err := s.SaveState()
		if err != nil {
			return nil, fmt.Errorf("node %d: strategy state: %w", n.ID(), err)
		}
		st.Strategy = b
	} else if !strategy.Stateless(n.Strategy()) {
		return nil, fmt.Errorf("node %d: strategy %s keeps state across rounds that a checkpoint cannot hold yet", n.ID(), n.Strategy().Name())
	}
	b, err := n.SaveLayers()
	if err != nil {
		return nil, err
	}
	st.Layers = b
	if st.CopyOptimizer, err = n.CopyOptimizerState(); err != nil {
		return nil, err
	}
	td, ok := n.TrainData().(positioned)
	if !ok {
		return nil, fmt.Errorf("node %d: its training data cannot say where it is (%T)", n.ID(), n.TrainData())
	}
	resets, pos := td.Position()
	st.Streams = map[string][]byte{trainDataStream: binary.LittleEndian.AppendUint64(binary.LittleEndian.AppendUint64(nil, resets), uint64(pos))}
	return st, nil
}

// Restore puts st into node n (built from the same config): parameters,
// optimizer and strategy state. It refuses a checkpoint of another node or
// model size, and one with state the node cannot take.
func Restore(n *node.Node, st *State) error {
	p := n.Model().Params()
	switch {
	case st.Node != n.ID():
		return fmt.Errorf("checkpoint of node %d given to node %d", st.Node, n.ID())
	case len(st.Params) != len(p):
		return fmt.Errorf("checkpoint has %d parameters, node %d's model %d", len(st.Params), n.ID(), len(p))
	}
	if ms := n.Model().State(); len(st.ModelState) != len(ms) && (len(st.ModelState) != 0 || st.Layers != nil) {
		return fmt.Errorf("checkpoint has %d model-state values, node %d's model %d", len(st.ModelState), n.ID(), len(ms))
	}
	copy(p, st.Params)
	copy(n.Model().State(), st.ModelState)
	if o, ok := n.Optimizer().(FloatStateSaver); ok {
		if err := o.SetState(st.Optimizer); err != nil {
			return fmt.Errorf("node %d: optimizer state: %w", n.ID(), err)
		}
	} else if len(st.Optimizer) > 0 {
		return fmt.Errorf("node %d: the checkpoint holds optimizer state its optimizer cannot take", n.ID())
	}
	if s, ok := n.Strategy().(StateSaver); ok {
		if err := s.LoadState(st.Strategy); err != nil {
			return fmt.Errorf("node %d: strategy state: %w", n.ID(), err)
		}
	} else if len(st.Strategy) > 0 {
		return fmt.Errorf("node %d: the checkpoint holds strategy state its strategy (%s) cannot take", n.ID(), n.Strategy().Name())
	}
	if st.Layers != nil {
		if err := n.LoadLayers(st.Layers); err != nil {
			return err
		}
	}
	if err := n.RestoreCopyOptimizer(st.CopyOptimizer); err != nil {
		return err
	}
	if p, ok := st.Streams[trainDataStream]; ok {
		td, ok := n.TrainData().(positioned)
		if !ok || len(p) != 16 {
			return fmt.Errorf("node %d: a training-data position (%d bytes) the node's data (%T) cannot take", n.ID(), len(p), n.TrainData())
		}
		pos := binary.LittleEndian.Uint64(p[8:])
		if pos > math.MaxInt32 {
			return fmt.Errorf("node %d: training-data position %d", n.ID(), pos)
		}
		if err := td.Seek(binary.LittleEndian.Uint64(p), int(pos)); err != nil {
			return fmt.Errorf("node %d: %w", n.ID(), err)
		}
	}
	return nil
}

// trainDataStream names the training data's position in State.Streams.
const trainDataStream = "train_data"

// positioned is training data whose position a checkpoint keeps
// (data.Batcher).
type positioned interface {
	Position() (resets uint64, pos int)
	Seek(resets uint64, pos int) error
}

// Position and Seek forward to the batcher under the flipped labels.
func (f *flippedLabels) Position() (uint64, int) {
	if p, ok := f.Batches.(positioned); ok {
		return p.Position()
	}
	return 0, 0
}

func (f *flippedLabels) Seek(resets uint64, pos int) error {
	p, ok := f.Batches.(positioned)
	if !ok {
		return fmt.Errorf("training data %T cannot seek", f.Batches)
	}
	return p.Seek(resets, pos)
}
