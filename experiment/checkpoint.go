package experiment

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"

	"github.com/trellis-fl/trellis/node"
	"github.com/trellis-fl/trellis/rundir"
)

// Checkpoint files: one node's Snapshot (node.Node.Snapshot: everything
// of the node that persists between rounds) on disk, the format every
// driver uses (the simulator's audit models and the cluster runtime's
// restart). Two files in a directory:
//
//	checkpoint.json  {"format": 2, "round": R, "node": I,
//	                  "params": P, "model_state": M, "optimizer": O,
//	                  "copy_optimizer": C, "strategy": S, "layers": L,
//	                  "streams": {"train_data": "<base64 position>"},
//	                  "config": "<the driver's fingerprint of the config>",
//	                  "sha256": "<hex of checkpoint.bin>"}
//	checkpoint.bin   P float32 parameters, M float32 of the model's local
//	                 state (batch-norm statistics), O float32 optimizer
//	                 state, C float32 of the optimizer of the strategy's
//	                 second model (Ditto's), little-endian, then S bytes
//	                 of strategy state (strategy.Stateful's format) and L
//	                 bytes of the layers' states:
//	                   magic "trellis/layers" (14 bytes), version u8 (1),
//	                   layer count u8, then per layer in the node's order:
//	                   name: u8 length + name, state: u32 length + bytes
//	                   (node.Layer.Snapshot's)
//
// R is the last finished round (the next run starts at R + 1). The stream
// "train_data" is the training data's position (16 bytes: epochs started
// u64, samples taken of the current one u64; node.DataPosition). Format 1
// (no model state, second optimizer or layers) is read. The .bin is
// written first and the .json last, both atomically (temporary file and
// rename), and the .json names the .bin's hash, so a crash between the two
// leaves the previous checkpoint readable or an error, never a mix.
const (
	CheckpointJSON   = "checkpoint.json"
	CheckpointBin    = "checkpoint.bin"
	checkpointFormat = 2
	layersMagic      = "trellis/layers"
	layersVersion    = 1
)

// Checkpoint is one node's Snapshot as saved, with the config it ran.
type Checkpoint struct {
	node.Snapshot
	// Config, when set, names the config the node ran (a driver's
	// fingerprint of it): a restart checks it is the same.
	Config string
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

// trainDataStream names the training data's position in the streams;
// sendersStream an asynchronous node's newest step taken from each sender
// (node.Snapshot.Senders: 20 bytes each, the sender's id, step and
// sequence number, little-endian).
const (
	trainDataStream = "train_data"
	sendersStream   = "async_senders"
)

// Save writes c into dir (created if needed), replacing the checkpoint
// there.
func Save(dir string, c *Checkpoint) error {
	s := &c.Snapshot
	if len(s.Layers) > math.MaxUint8 {
		return fmt.Errorf("checkpoint: %d layers, the format holds %d", len(s.Layers), math.MaxUint8)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	var layers []byte
	if s.Layers != nil {
		layers = append([]byte(layersMagic), layersVersion, uint8(len(s.Layers)))
		for _, l := range s.Layers {
			if len(l.Name) > math.MaxUint8 || uint64(len(l.State)) > math.MaxUint32 {
				return fmt.Errorf("checkpoint: layer %.40q: a name of %d bytes or a state of %d", l.Name, len(l.Name), len(l.State))
			}
			layers = append(layers, uint8(len(l.Name)))
			layers = append(layers, l.Name...)
			layers = binary.LittleEndian.AppendUint32(layers, uint32(len(l.State)))
			layers = append(layers, l.State...)
		}
	}
	var bin bytes.Buffer
	bin.Grow(4*(len(s.Params)+len(s.ModelState)+len(s.Optimizer)+len(s.CopyOptimizer)) + len(s.Strategy) + len(layers))
	var b [4]byte
	for _, xs := range [][]float32{s.Params, s.ModelState, s.Optimizer, s.CopyOptimizer} {
		for _, x := range xs {
			binary.LittleEndian.PutUint32(b[:], math.Float32bits(x))
			bin.Write(b[:])
		}
	}
	bin.Write(s.Strategy)
	bin.Write(layers)
	sum := sha256.Sum256(bin.Bytes())
	pos := binary.LittleEndian.AppendUint64(binary.LittleEndian.AppendUint64(nil, s.TrainData.Resets), uint64(s.TrainData.Pos))
	meta := checkpointMeta{Format: checkpointFormat, Round: s.Round, Node: s.Node, Params: len(s.Params),
		ModelState: len(s.ModelState), Optimizer: len(s.Optimizer), CopyOpt: len(s.CopyOptimizer),
		Strategy: len(s.Strategy), Layers: len(layers),
		Streams: map[string][]byte{trainDataStream: pos}, Config: c.Config, SHA256: hex.EncodeToString(sum[:])}
	if len(s.Senders) > 0 {
		var b []byte
		for _, st := range s.Senders {
			b = binary.LittleEndian.AppendUint64(binary.LittleEndian.AppendUint64(binary.LittleEndian.AppendUint32(b, st.From), st.Step), st.Seq)
		}
		meta.Streams[sendersStream] = b
	}
	js, err := json.MarshalIndent(meta, "", "  ")
	if err != nil {
		return err
	}
	if err := rundir.WritePrivate(filepath.Join(dir, CheckpointBin), bin.Bytes()); err != nil {
		return err
	}
	return rundir.WritePrivate(filepath.Join(dir, CheckpointJSON), append(js, '\n'))
}

// Load reads the checkpoint in dir. A missing checkpoint is an error
// satisfying errors.Is(err, os.ErrNotExist); a damaged one names the file
// and what is wrong. Whether it fits a node is node.Node.Restore's check.
func Load(dir string) (*Checkpoint, error) {
	jpath, bpath := filepath.Join(dir, CheckpointJSON), filepath.Join(dir, CheckpointBin)
	js, err := os.ReadFile(jpath)
	if err != nil {
		return nil, err
	}
	var meta checkpointMeta
	if err := json.Unmarshal(js, &meta); err != nil {
		return nil, fmt.Errorf("%s: %w (a damaged checkpoint: delete the directory to start the node afresh)", jpath, err)
	}
	if meta.Format != 1 && meta.Format != checkpointFormat {
		return nil, fmt.Errorf("%s: format %d, this trellis reads formats 1 and %d", jpath, meta.Format, checkpointFormat)
	}
	if meta.Round < -1 || meta.Round > math.MaxInt32 || meta.Params < 0 || meta.ModelState < 0 || meta.Optimizer < 0 || meta.CopyOpt < 0 || meta.Strategy < 0 || meta.Layers < 0 {
		return nil, fmt.Errorf("%s: round %d or a negative length", jpath, meta.Round)
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
	c := &Checkpoint{Config: meta.Config, Snapshot: node.Snapshot{Round: meta.Round, Node: meta.Node, Params: floats(0, meta.Params),
		ModelState:    floats(4*meta.Params, meta.ModelState),
		Optimizer:     floats(4*(meta.Params+meta.ModelState), meta.Optimizer),
		CopyOptimizer: floats(4*(meta.Params+meta.ModelState+meta.Optimizer), meta.CopyOpt)}}
	if meta.Optimizer == 0 {
		c.Optimizer = nil
	}
	if meta.CopyOpt == 0 {
		c.CopyOptimizer = nil
	}
	if meta.Strategy > 0 {
		c.Strategy = slices.Clone(bin[floatsEnd : floatsEnd+meta.Strategy])
	}
	if meta.Layers > 0 {
		if c.Layers, err = decodeLayers(bin[floatsEnd+meta.Strategy:]); err != nil {
			return nil, fmt.Errorf("%s: %w", bpath, err)
		}
	}
	for name, b := range meta.Streams {
		if name == sendersStream {
			if len(b)%20 != 0 {
				return nil, fmt.Errorf("%s: asynchronous senders' steps of %d bytes, not a multiple of 20", jpath, len(b))
			}
			for k := 0; k < len(b); k += 20 {
				c.Senders = append(c.Senders, node.SenderStep{From: binary.LittleEndian.Uint32(b[k:]),
					Step: binary.LittleEndian.Uint64(b[k+4:]), Seq: binary.LittleEndian.Uint64(b[k+12:])})
			}
			continue
		}
		if name != trainDataStream {
			return nil, fmt.Errorf("%s: a stream %q this trellis does not know", jpath, name)
		}
		if len(b) != 16 {
			return nil, fmt.Errorf("%s: a training-data position of %d bytes, want 16", jpath, len(b))
		}
		pos := binary.LittleEndian.Uint64(b[8:])
		if pos > math.MaxInt32 {
			return nil, fmt.Errorf("%s: training-data position %d", jpath, pos)
		}
		c.TrainData = node.DataPosition{Resets: binary.LittleEndian.Uint64(b), Pos: int(pos)}
	}
	return c, nil
}

// decodeLayers reads the layers' section of checkpoint.bin.
func decodeLayers(b []byte) ([]node.LayerState, error) {
	if len(b) < len(layersMagic)+2 || string(b[:len(layersMagic)]) != layersMagic {
		return nil, errors.New("not a layers state")
	}
	if v := b[len(layersMagic)]; v != layersVersion {
		return nil, fmt.Errorf("layers state format %d, this trellis reads %d", v, layersVersion)
	}
	k := int(b[len(layersMagic)+1])
	b = b[len(layersMagic)+2:]
	out := make([]node.LayerState, 0, k)
	for i := range k {
		if len(b) < 1 || len(b) < 1+int(b[0])+4 {
			return nil, fmt.Errorf("layers state truncated at layer %d of %d", i+1, k)
		}
		name := string(b[1 : 1+int(b[0])])
		b = b[1+int(b[0]):]
		size := binary.LittleEndian.Uint32(b)
		b = b[4:]
		if uint64(size) > uint64(len(b)) {
			return nil, fmt.Errorf("layer %q: state of %d bytes, %d left", name, size, len(b))
		}
		out = append(out, node.LayerState{Name: name, State: slices.Clone(b[:size])})
		b = b[size:]
	}
	if len(b) != 0 {
		return nil, fmt.Errorf("layers state has %d trailing bytes", len(b))
	}
	return out, nil
}

// CaptureModel is what an audit needs of node n after round: the model's
// parameters and model-local state, nothing of the optimizer, strategy,
// layers or data position. It is for reading the model, not for resuming
// a node (that is node.Node.Snapshot's).
func CaptureModel(n *node.Node, round int) *Checkpoint {
	return &Checkpoint{Snapshot: node.Snapshot{Round: round, Node: n.ID(), Params: slices.Clone(n.Model().Params()),
		ModelState: slices.Clone(n.Model().State())}}
}

// Position and Seek forward to the batcher under the flipped labels.
func (f *flippedLabels) Position() (uint64, int) {
	if p, ok := f.Batches.(node.Positioned); ok {
		return p.Position()
	}
	return 0, 0
}

func (f *flippedLabels) Seek(resets uint64, pos int) error {
	p, ok := f.Batches.(node.Positioned)
	if !ok {
		return fmt.Errorf("training data %T cannot seek", f.Batches)
	}
	return p.Seek(resets, pos)
}
