package trust

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/trellis-fl/trellis/wire"
)

// Snapshot format of a State between rounds (a checkpoint: the cluster
// runtime's restart). Little-endian; counts are checked against the bytes
// left before anything is allocated, and every field is read or the
// snapshot is refused:
//
//	magic "trellis/trust" (13 bytes), format version u8 (2; 1 is read too)
//	self u32, round u64, started u8, version u64
//	peers u32, then per peer in id order:
//	  id u32, direct u8, silent u32, heard u8, reliability f64,
//	  alpha f64, beta f64, trust f64, ev 6×u64, total 6×u64,
//	  blamed NumReasons(u8)+counts u64, has u8, claim, claimTrust f64,
//	  seen u64, budgetRound u64, budgetUsed u32, fresh u32 + claims,
//	  then (format 2, the evidence rules' paths and history) before f64,
//	  direct0 u8, via u32 + u32s, hist u32 + claims
//	view u32 + edges (2×u32), evals u32 + (edge, support f64, oppose f64,
//	  supporters u32, opposers u32, confidence f64, accepted u8),
//	forwards u32 + claims,
//	stats: accepted u64, rejected NumReasons(u8)+u64s, forwarded u64,
//	  refused NumForwardReasons(u8)+u64s, unattributed u64
//
// A claim is source u32, round u64, version u64, hop u8, neighbors u32 +
// u32s, signature (64 bytes). The configuration, identity and directory
// are not in it: Restore takes them, as New does.
const (
	snapshotMagic   = "trellis/trust"
	snapshotVersion = 2
)

// MarshalBinary encodes the state between rounds (after EndRound, or
// before the first BeginRound); an open round is an error.
func (s *State) MarshalBinary() ([]byte, error) {
	if s.open {
		return nil, errors.New("trust: snapshot of an open round (EndRound first)")
	}
	if s.cfg.events() {
		// The events form's stances are not in the snapshot format yet: a
		// snapshot without them would restore a different state.
		return nil, errors.New("trust: no snapshot of the events claim form (not implemented)")
	}
	var w enc
	w.b = append(w.b, snapshotMagic...)
	w.u8(snapshotVersion)
	w.u32(s.self)
	w.u64(s.round)
	w.bool(s.started)
	w.u64(s.version)
	w.u32(uint32(len(s.order)))
	for _, id := range s.order {
		p := s.peers[id]
		w.u32(p.id)
		w.bool(p.direct)
		w.u32(uint32(p.silent))
		w.bool(p.heard)
		w.f64(p.reliability)
		w.f64(p.beta.Alpha)
		w.f64(p.beta.Beta)
		w.f64(p.trust)
		w.evidence(p.ev)
		w.evidence(p.total)
		w.counts(p.blamed[:])
		w.bool(p.has)
		w.claim(&p.claim)
		w.f64(p.claimTrust)
		w.u64(p.seen)
		w.u64(p.budgetRound)
		w.u32(uint32(p.budgetUsed))
		w.claims(p.fresh)
		w.f64(p.before)
		w.bool(p.direct0)
		w.u32(uint32(len(p.via)))
		for _, v := range p.via {
			w.u32(v)
		}
		w.claims(p.hist)
	}
	w.u32(uint32(len(s.view)))
	for _, e := range s.view {
		w.u32(e.U)
		w.u32(e.V)
	}
	w.u32(uint32(len(s.evals)))
	for _, e := range s.evals {
		w.u32(e.Edge.U)
		w.u32(e.Edge.V)
		w.f64(e.Pools.Support)
		w.f64(e.Pools.Oppose)
		w.u32(uint32(e.Pools.Supporters))
		w.u32(uint32(e.Pools.Opposers))
		w.f64(e.Confidence)
		w.bool(e.Accepted)
	}
	w.claims(s.forwards)
	w.u64(s.stats.Accepted)
	w.counts(s.stats.Rejected[:])
	w.u64(s.stats.Forwarded)
	w.counts(s.stats.Refused[:])
	w.u64(s.stats.Unattributed)
	return w.b, nil
}

// Restore rebuilds a State from MarshalBinary's bytes, for node id with
// directory dir and configuration cfg (those of the state that was saved).
// A snapshot of another node, of another format, truncated, with trailing
// bytes, or naming a peer outside dir is an error.
func Restore(id *wire.Identity, dir *wire.Directory, cfg Config, b []byte) (*State, error) {
	s, err := New(id, dir, nil, cfg)
	if err != nil {
		return nil, err
	}
	r := dec{b: b}
	if len(b) < len(snapshotMagic) || string(b[:len(snapshotMagic)]) != snapshotMagic {
		return nil, errors.New("trust: not a trust snapshot")
	}
	r.b = r.b[len(snapshotMagic):]
	format := r.u8()
	if r.err == nil && (format < 1 || format > snapshotVersion) {
		return nil, fmt.Errorf("trust: snapshot format %d, this trellis reads 1 to %d", format, snapshotVersion)
	}
	if self := r.u32(); r.err == nil && self != s.self {
		return nil, fmt.Errorf("trust: snapshot of node %d given to node %d", self, s.self)
	}
	s.round = r.u64()
	s.started = r.bool()
	s.version = r.u64()
	np := r.count(4)
	for k := 0; k < np && r.err == nil; k++ {
		id := r.u32()
		if r.err != nil {
			break
		}
		if id == s.self || !s.known(id) || s.peers[id] != nil {
			return nil, fmt.Errorf("trust: snapshot peer %d: own id, not in the directory, or listed twice", id)
		}
		p := s.peer(id)
		p.direct = r.bool()
		p.silent = int(r.u32())
		p.heard = r.bool()
		p.reliability = r.f64()
		p.beta.Alpha = r.f64()
		p.beta.Beta = r.f64()
		p.trust = r.f64()
		p.ev = r.evidence()
		p.total = r.evidence()
		r.counts(p.blamed[:])
		p.has = r.bool()
		r.claim(&p.claim)
		p.claimTrust = r.f64()
		p.seen = r.u64()
		p.budgetRound = r.u64()
		p.budgetUsed = int(r.u32())
		p.fresh = r.claims()
		if format >= 2 {
			p.before = r.f64()
			p.direct0 = r.bool()
			if n := r.count(4); r.err == nil && n > 0 {
				p.via = make([]uint32, n)
				for k := range p.via {
					p.via[k] = r.u32()
				}
			}
			p.hist = r.claims()
		}
	}
	if n := r.count(8); r.err == nil && n > 0 {
		s.view = make([]Edge, n)
		for k := range s.view {
			s.view[k] = Edge{r.u32(), r.u32()}
		}
	}
	if n := r.count(45); r.err == nil && n > 0 {
		s.evals = make([]EdgeStatus, n)
		for k := range s.evals {
			e := &s.evals[k]
			e.Edge = Edge{r.u32(), r.u32()}
			e.Pools.Support, e.Pools.Oppose = r.f64(), r.f64()
			e.Pools.Supporters, e.Pools.Opposers = int(r.u32()), int(r.u32())
			e.Confidence = r.f64()
			e.Accepted = r.bool()
		}
	}
	s.forwards = r.claims()
	s.stats.Accepted = r.u64()
	r.counts(s.stats.Rejected[:])
	s.stats.Forwarded = r.u64()
	r.counts(s.stats.Refused[:])
	s.stats.Unattributed = r.u64()
	if r.err != nil {
		return nil, fmt.Errorf("trust: snapshot: %w", r.err)
	}
	if len(r.b) != 0 {
		return nil, fmt.Errorf("trust: snapshot: %d trailing bytes", len(r.b))
	}
	if !slices.IsSortedFunc(s.view, compareEdges) {
		return nil, errors.New("trust: snapshot: view not sorted")
	}
	return s, nil
}

// enc and dec are the snapshot's little-endian fields.
type enc struct{ b []byte }

func (w *enc) u8(x uint8)   { w.b = append(w.b, x) }
func (w *enc) u32(x uint32) { w.b = binary.LittleEndian.AppendUint32(w.b, x) }
func (w *enc) u64(x uint64) { w.b = binary.LittleEndian.AppendUint64(w.b, x) }
func (w *enc) f64(x float64) {
	w.u64(math.Float64bits(x))
}
func (w *enc) bool(x bool) {
	if x {
		w.u8(1)
	} else {
		w.u8(0)
	}
}
func (w *enc) evidence(e Evidence) {
	for _, x := range []int{e.D, e.C, e.F, e.X, e.Q, e.Z} {
		w.u64(uint64(x))
	}
}
func (w *enc) counts(xs []uint64) {
	w.u8(uint8(len(xs)))
	for _, x := range xs {
		w.u64(x)
	}
}
func (w *enc) claim(c *wire.Claim) {
	w.u32(c.Source)
	w.u64(c.Round)
	w.u64(c.Version)
	w.u8(c.Hop)
	w.u32(uint32(len(c.Neighbors)))
	for _, j := range c.Neighbors {
		w.u32(j)
	}
	w.b = append(w.b, c.Sig[:]...)
}
func (w *enc) claims(cs []wire.Claim) {
	w.u32(uint32(len(cs)))
	for k := range cs {
		w.claim(&cs[k])
	}
}

var errTruncated = errors.New("truncated")

type dec struct {
	b   []byte
	err error
}

func (r *dec) take(n int) []byte {
	if r.err != nil {
		return nil
	}
	if len(r.b) < n {
		r.err = errTruncated
		return nil
	}
	out := r.b[:n]
	r.b = r.b[n:]
	return out
}
func (r *dec) u8() uint8 {
	if b := r.take(1); b != nil {
		return b[0]
	}
	return 0
}
func (r *dec) u32() uint32 {
	if b := r.take(4); b != nil {
		return binary.LittleEndian.Uint32(b)
	}
	return 0
}
func (r *dec) u64() uint64 {
	if b := r.take(8); b != nil {
		return binary.LittleEndian.Uint64(b)
	}
	return 0
}
func (r *dec) f64() float64 { return math.Float64frombits(r.u64()) }
func (r *dec) bool() bool {
	switch r.u8() {
	case 0:
		return false
	case 1:
		return true
	}
	if r.err == nil {
		r.err = errors.New("a boolean that is neither 0 nor 1")
	}
	return false
}

// count reads a u32 count of items of at least min bytes each, refusing
// one the bytes left cannot hold.
func (r *dec) count(min int) int {
	n := r.u32()
	if r.err == nil && uint64(n)*uint64(min) > uint64(len(r.b)) {
		r.err = fmt.Errorf("a count of %d items in %d bytes", n, len(r.b))
	}
	if r.err != nil {
		return 0
	}
	return int(n)
}
func (r *dec) evidence() Evidence {
	var x [6]int
	for k := range x {
		v := r.u64()
		if v > math.MaxInt32 && r.err == nil {
			r.err = fmt.Errorf("an evidence count %d", v)
		}
		x[k] = int(v)
	}
	return Evidence{D: x[0], C: x[1], F: x[2], X: x[3], Q: x[4], Z: x[5]}
}
func (r *dec) counts(dst []uint64) {
	if n := int(r.u8()); r.err == nil && n != len(dst) {
		r.err = fmt.Errorf("%d counts where this trellis has %d", n, len(dst))
	}
	for k := range dst {
		dst[k] = r.u64()
	}
}
func (r *dec) claim(c *wire.Claim) {
	c.Source = r.u32()
	c.Round = r.u64()
	c.Version = r.u64()
	c.Hop = r.u8()
	if n := r.count(4); n > 0 {
		c.Neighbors = make([]uint32, n)
		for k := range c.Neighbors {
			c.Neighbors[k] = r.u32()
		}
	}
	copy(c.Sig[:], r.take(wire.SignatureSize))
}
func (r *dec) claims() []wire.Claim {
	n := r.count(4 + 8 + 8 + 1 + 4 + wire.SignatureSize)
	if n == 0 {
		return nil
	}
	cs := make([]wire.Claim, n)
	for k := range cs {
		r.claim(&cs[k])
	}
	return cs
}
