package strategy

import (
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
)

// Strategy state between rounds, for checkpoints (a node process that is
// restarted goes on where it stopped). The strategies that carry something
// from one round to the next implement SaveState and LoadState; the others
// carry nothing (Stateless). The format, little-endian:
//
//	magic "trellis/strategy" (16 bytes), format version u8 (1),
//	name: u8 length + the strategy's Name(),
//	then the strategy's fields, in the order its SaveState writes them:
//	vectors as u32 count + float32s, maps as u32 count + (key i64, value)
//	in increasing key order, f64, u8 booleans (0 or 1), i64.
//
// LoadState refuses another strategy's state, another format, a count the
// bytes left cannot hold, a vector of a length other than the model's
// (where the strategy knows it) and trailing bytes.
const (
	stateMagic   = "trellis/strategy"
	stateVersion = 1
)

// Stateful is a strategy whose state survives a restart.
type Stateful interface {
	Strategy
	SaveState() ([]byte, error)
	LoadState([]byte) error
}

// Stateless reports whether s carries nothing from one round to the next
// (its fields are parameters and per-round scratch), so that a checkpoint
// needs none of its state.
func Stateless(s Strategy) bool {
	switch s.(type) {
	case Local, *Local, *FedAvg, *FedProx, *DPSGD, *RobustRule, *BALANCE, *UBAR, *SCClip, *ClippedGossip,
		*ASMR, *CFL, *Lightyear, *AsyncMean:
		return true
	}
	return false
}

// SaveState implements Stateful: C, the previous round's collaborators.
func (d *DMTT) SaveState() ([]byte, error) {
	w := newStateWriter(d.Name())
	w.ints(d.collab)
	return w.b, nil
}

// LoadState implements Stateful.
func (d *DMTT) LoadState(b []byte) error {
	r, err := newStateReader(b, d.Name())
	if err != nil {
		return err
	}
	d.collab = r.ints()
	return r.done()
}

// SaveState implements Stateful: the smoothed trust per peer.
func (m *Murmura) SaveState() ([]byte, error) {
	w := newStateWriter(m.Name())
	w.floatMap(m.smoothed)
	return w.b, nil
}

// LoadState implements Stateful.
func (m *Murmura) LoadState(b []byte) error {
	r, err := newStateReader(b, m.Name())
	if err != nil {
		return err
	}
	m.smoothed = r.floatMap()
	return r.done()
}

// SaveState implements Stateful: w^{t−2}, dbar^{t−1}, dbar^{t−2}, how many
// aggregates are held, τ^{t−1}, ||Δ^{t−1}||.
func (s *RDPFL) SaveState() ([]byte, error) {
	w := newStateWriter(s.Name())
	w.bool(s.started)
	w.bool(s.haveW2)
	w.floats(s.wPrev2)
	w.floats(s.dbar1)
	w.floats(s.dbar2)
	w.i64(int64(s.nDbar))
	w.f64(s.tau)
	w.f64(s.devNorm)
	return w.b, nil
}

// LoadState implements Stateful.
func (s *RDPFL) LoadState(b []byte) error {
	r, err := newStateReader(b, s.Name())
	if err != nil {
		return err
	}
	s.started, s.haveW2 = r.bool(), r.bool()
	s.wPrev2, s.dbar1, s.dbar2 = r.floats(), r.floats(), r.floats()
	s.nDbar = int(r.i64())
	s.tau, s.devNorm = r.f64(), r.f64()
	if r.err == nil && (s.nDbar < 0 || s.nDbar > 2) {
		r.err = fmt.Errorf("%d aggregates held (0 to 2)", s.nDbar)
	}
	return r.done()
}

// SaveState implements Stateful: the global model w.
func (d *Ditto) SaveState() ([]byte, error) {
	w := newStateWriter(d.Name())
	w.floats(d.w)
	return w.b, nil
}

// LoadState implements Stateful.
func (d *Ditto) LoadState(b []byte) error {
	r, err := newStateReader(b, d.Name())
	if err != nil {
		return err
	}
	d.w = r.floats()
	return r.done()
}

// SaveState implements Stateful: each sender's reputation (α, β, blocked).
func (a *AFA) SaveState() ([]byte, error) {
	w := newStateWriter(a.Name())
	keys := slices.Sorted(maps.Keys(a.rep))
	w.u32(uint32(len(keys)))
	for _, k := range keys {
		r := a.rep[k]
		w.i64(int64(k))
		w.f64(r.alpha)
		w.f64(r.beta)
		w.bool(r.blocked)
	}
	return w.b, nil
}

// LoadState implements Stateful.
func (a *AFA) LoadState(b []byte) error {
	r, err := newStateReader(b, a.Name())
	if err != nil {
		return err
	}
	n := r.count(8 + 8 + 8 + 1)
	a.rep = nil
	if n > 0 {
		a.rep = make(map[int]*reputation, n)
	}
	for range n {
		k := int(r.i64())
		a.rep[k] = &reputation{alpha: r.f64(), beta: r.f64(), blocked: r.bool()}
	}
	return r.done()
}

// SaveState implements Stateful: the tracker, its neighbours' mix and the
// previous local update.
func (g *GradientTracking) SaveState() ([]byte, error) {
	w := newStateWriter(g.Name())
	w.bool(g.started)
	w.floats(g.y)
	w.floats(g.yMix)
	w.floats(g.dPrev)
	return w.b, nil
}

// LoadState implements Stateful.
func (g *GradientTracking) LoadState(b []byte) error {
	r, err := newStateReader(b, g.Name())
	if err != nil {
		return err
	}
	g.started = r.bool()
	g.y, g.yMix, g.dPrev = r.floats(), r.floats(), r.floats()
	if r.err == nil && (len(g.yMix) != len(g.y) || len(g.dPrev) != len(g.y)) {
		r.err = errors.New("tracker vectors of different lengths")
	}
	return r.done()
}

// SaveState implements Stateful: every edge's y and w.
func (a *ADMM) SaveState() ([]byte, error) {
	w := newStateWriter(a.Name())
	keys := slices.Sorted(maps.Keys(a.edges))
	w.u32(uint32(len(keys)))
	for _, k := range keys {
		w.i64(int64(k))
		w.floats(a.edges[k].y)
		w.floats(a.edges[k].w)
	}
	return w.b, nil
}

// LoadState implements Stateful.
func (a *ADMM) LoadState(b []byte) error {
	r, err := newStateReader(b, a.Name())
	if err != nil {
		return err
	}
	n := r.count(8 + 4 + 4)
	a.edges = nil
	if n > 0 {
		a.edges = make(map[int]*admmEdge, n)
	}
	for range n {
		k := int(r.i64())
		e := &admmEdge{y: r.floats(), w: r.floats()}
		if r.err == nil && len(e.y) != len(e.w) {
			r.err = fmt.Errorf("edge %d: y and w of different lengths", k)
		}
		a.edges[k] = e
	}
	return r.done()
}

// stateWriter and stateReader are the fields of the format above.
type stateWriter struct{ b []byte }

func newStateWriter(name string) *stateWriter {
	w := &stateWriter{b: append([]byte(stateMagic), stateVersion, uint8(len(name)))}
	w.b = append(w.b, name...)
	return w
}

func (w *stateWriter) u32(x uint32) { w.b = binary.LittleEndian.AppendUint32(w.b, x) }
func (w *stateWriter) i64(x int64)  { w.b = binary.LittleEndian.AppendUint64(w.b, uint64(x)) }
func (w *stateWriter) f64(x float64) {
	w.b = binary.LittleEndian.AppendUint64(w.b, math.Float64bits(x))
}
func (w *stateWriter) bool(x bool) {
	if x {
		w.b = append(w.b, 1)
	} else {
		w.b = append(w.b, 0)
	}
}
func (w *stateWriter) floats(xs []float32) {
	w.u32(uint32(len(xs)))
	for _, x := range xs {
		w.b = binary.LittleEndian.AppendUint32(w.b, math.Float32bits(x))
	}
}
func (w *stateWriter) ints(xs []int) {
	w.u32(uint32(len(xs)))
	for _, x := range xs {
		w.i64(int64(x))
	}
}
func (w *stateWriter) floatMap(m map[int]float64) {
	keys := slices.Sorted(maps.Keys(m))
	w.u32(uint32(len(keys)))
	for _, k := range keys {
		w.i64(int64(k))
		w.f64(m[k])
	}
}

type stateReader struct {
	b    []byte
	name string
	err  error
}

func newStateReader(b []byte, name string) (*stateReader, error) {
	if len(b) < len(stateMagic)+2 || string(b[:len(stateMagic)]) != stateMagic {
		return nil, fmt.Errorf("strategy %s: not a strategy state", name)
	}
	if v := b[len(stateMagic)]; v != stateVersion {
		return nil, fmt.Errorf("strategy %s: state format %d, this trellis reads %d", name, v, stateVersion)
	}
	b = b[len(stateMagic)+1:]
	n := int(b[0])
	if len(b) < 1+n {
		return nil, fmt.Errorf("strategy %s: state truncated in its name", name)
	}
	if got := string(b[1 : 1+n]); got != name {
		return nil, fmt.Errorf("strategy %s: the state is strategy %s's", name, got)
	}
	return &stateReader{b: b[1+n:], name: name}, nil
}

func (r *stateReader) take(n int) []byte {
	if r.err != nil {
		return nil
	}
	if len(r.b) < n {
		r.err = errors.New("truncated")
		return nil
	}
	out := r.b[:n]
	r.b = r.b[n:]
	return out
}
func (r *stateReader) u32() uint32 {
	if b := r.take(4); b != nil {
		return binary.LittleEndian.Uint32(b)
	}
	return 0
}
func (r *stateReader) i64() int64 {
	if b := r.take(8); b != nil {
		return int64(binary.LittleEndian.Uint64(b))
	}
	return 0
}
func (r *stateReader) f64() float64 { return math.Float64frombits(uint64(r.i64())) }
func (r *stateReader) bool() bool {
	b := r.take(1)
	switch {
	case b == nil:
		return false
	case b[0] > 1:
		r.err = errors.New("a boolean that is neither 0 nor 1")
	}
	return b != nil && b[0] == 1
}

// count reads a u32 count of items of at least size bytes each.
func (r *stateReader) count(size int) int {
	n := r.u32()
	if r.err == nil && uint64(n)*uint64(size) > uint64(len(r.b)) {
		r.err = fmt.Errorf("a count of %d items in %d bytes", n, len(r.b))
	}
	if r.err != nil {
		return 0
	}
	return int(n)
}
func (r *stateReader) floats() []float32 {
	n := r.count(4)
	if n == 0 {
		return nil
	}
	xs := make([]float32, n)
	for k, b := 0, r.take(4*n); k < n; k++ {
		xs[k] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*k:]))
	}
	return xs
}
func (r *stateReader) ints() []int {
	n := r.count(8)
	if n == 0 {
		return nil
	}
	xs := make([]int, n)
	for k := range xs {
		xs[k] = int(r.i64())
	}
	return xs
}
func (r *stateReader) floatMap() map[int]float64 {
	n := r.count(16)
	if n == 0 {
		return nil
	}
	m := make(map[int]float64, n)
	for range n {
		k := int(r.i64())
		m[k] = r.f64()
	}
	return m
}

// done is the reader's verdict: its first error, or trailing bytes.
func (r *stateReader) done() error {
	if r.err == nil && len(r.b) != 0 {
		r.err = fmt.Errorf("%d trailing bytes", len(r.b))
	}
	if r.err != nil {
		return fmt.Errorf("strategy %s: state: %w", r.name, r.err)
	}
	return nil
}

// ReadsStart reports whether s may read View.Start, the node's parameters
// at the start of the round. The node keeps that copy (one model-sized
// vector per node, held from Begin to End) only for a strategy that reads
// it; the strategies listed here never do (their rules look at models,
// not updates), every other one — an unknown strategy included — is
// assumed to. TestStartFreeStrategiesIgnoreStart holds the list to it.
func ReadsStart(s Strategy) bool {
	switch s := s.(type) {
	case Local, *Local, *FedAvg, *BALANCE, *UBAR, *SCClip, *ClippedGossip, *Lightyear, *Murmura, *DMTT:
		return false
	case *RobustRule:
		return s.Updates // on models the rule never looks at the start
	}
	return true
}
