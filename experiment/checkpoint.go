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
)

// Checkpoint files: one node's state after a finished round, the format
// every driver uses (the simulator's resume and the cluster runtime's
// restart). Two files in a directory:
//
//	checkpoint.json  {"format": 1, "round": R, "node": I,
//	                  "params": P, "optimizer": O, "strategy": S,
//	                  "streams": {"name": "<base64 state>", ...},
//	                  "sha256": "<hex of checkpoint.bin>"}
//	checkpoint.bin   P float32 parameters, then O float32 optimizer state,
//	                 little-endian, then S bytes of strategy state
//
// R is the last finished round (the next run starts at R + 1). Optimizer
// and strategy state are present when they implement StateSaver (0 and 0
// otherwise: a stateless optimizer or strategy). Streams are the positions
// of named random streams (math/rand/v2 PCG's MarshalBinary), for drivers
// that hold long-lived streams; the node's own streams derive from (seed,
// purpose, node, round) and need none. The .bin is written first and the
// .json last, both atomically (temporary file and rename), and the .json
// names the .bin's hash, so a crash between the two leaves the previous
// checkpoint readable or an error, never a mix.
const (
	CheckpointJSON   = "checkpoint.json"
	CheckpointBin    = "checkpoint.bin"
	checkpointFormat = 1
)

// State is one node's checkpoint.
type State struct {
	Round     int
	Node      int
	Params    []float32
	Optimizer []float32
	Strategy  []byte
	Streams   map[string][]byte
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
	Format    int               `json:"format"`
	Round     int               `json:"round"`
	Node      int               `json:"node"`
	Params    int               `json:"params"`
	Optimizer int               `json:"optimizer"`
	Strategy  int               `json:"strategy"`
	Streams   map[string][]byte `json:"streams,omitempty"`
	SHA256    string            `json:"sha256"`
}

// Save writes st into dir (created if needed), replacing the checkpoint
// there.
func Save(dir string, st *State) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	var bin bytes.Buffer
	bin.Grow(4*(len(st.Params)+len(st.Optimizer)) + len(st.Strategy))
	var b [4]byte
	for _, xs := range [][]float32{st.Params, st.Optimizer} {
		for _, x := range xs {
			binary.LittleEndian.PutUint32(b[:], math.Float32bits(x))
			bin.Write(b[:])
		}
	}
	bin.Write(st.Strategy)
	sum := sha256.Sum256(bin.Bytes())
	meta := checkpointMeta{Format: checkpointFormat, Round: st.Round, Node: st.Node, Params: len(st.Params),
		Optimizer: len(st.Optimizer), Strategy: len(st.Strategy), Streams: st.Streams, SHA256: hex.EncodeToString(sum[:])}
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
	if meta.Format != checkpointFormat {
		return nil, fmt.Errorf("%s: format %d, this trellis reads format %d", jpath, meta.Format, checkpointFormat)
	}
	if meta.Round < 0 || meta.Params < 0 || meta.Optimizer < 0 || meta.Strategy < 0 {
		return nil, fmt.Errorf("%s: negative round or length", jpath)
	}
	bin, err := os.ReadFile(bpath)
	if err != nil {
		return nil, err
	}
	if want := 4*(meta.Params+meta.Optimizer) + meta.Strategy; len(bin) != want {
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
		Optimizer: floats(4*meta.Params, meta.Optimizer), Streams: meta.Streams}
	if meta.Strategy > 0 {
		st.Strategy = slices.Clone(bin[4*(meta.Params+meta.Optimizer):])
	}
	return st, nil
}

// Capture is node n's state after round (its last finished one): its
// parameters, and its optimizer's and strategy's state when they
// implement FloatStateSaver / StateSaver.
func Capture(n *node.Node, round int) (*State, error) {
	st := &State{Round: round, Node: n.ID(), Params: slices.Clone(n.Model().Params())}
	if o, ok := n.Optimizer().(FloatStateSaver); ok {
		st.Optimizer = slices.Clone(o.State())
	}
	if s, ok := n.Strategy().(StateSaver); ok {
		b, err := s.SaveState()
		if err != nil {
			return nil, fmt.Errorf("node %d: strategy state: %w", n.ID(), err)
		}
		st.Strategy = b
	}
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
	copy(p, st.Params)
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
	return nil
}
