package secagg

import (
	"encoding/binary"
	"fmt"
	"math/big"
	"slices"

	"github.com/trellis-fl/trellis/internal/seed"
	"github.com/trellis-fl/trellis/nn"
	"github.com/trellis-fl/trellis/node"
	"github.com/trellis-fl/trellis/privacy"
	"github.com/trellis-fl/trellis/strategy"
	"github.com/trellis-fl/trellis/wire"
)

// PaillierConfig sets up aggregation through an untrusted relay with
// Paillier encryption (privacy.GeneratePaillier, privacy.PaillierPacking).
type PaillierConfig struct {
	// KeyBits is the modulus size (2048 for real use; ≥ 512).
	KeyBits int
	// ScaleBits, Bound and Headroom are the packing's: values |x| ≤ Bound
	// at 2^-ScaleBits, sums of up to 2^Headroom inputs.
	ScaleBits int
	Bound     float64
	Headroom  int
}

// Tags of the Paillier relay's messages.
const (
	TagPaillierKey    = "paillier/pk"
	TagPaillierHolder = "paillier/holder"
	TagPaillierInput  = "paillier/input"
	TagPaillierAgg    = "paillier/agg"
	TagPaillierSum    = "paillier/sum"
)

// Paillier aggregates each node's neighbourhood through an untrusted
// relay with additively homomorphic encryption: node a's group is its
// in-neighbours; its key holder k is the group's smallest id. In five
// exchange phases every node broadcasts its Paillier public key (0); a
// relays k's signed key to the members (1); each member encrypts its
// packed model under k's key and sends it to a (2); a, which cannot read
// them, multiplies the ciphertexts and sends the product to k (3); k
// decrypts the sum and returns it to a (4). a's model becomes the mean of
// its own and the members' models. a never sees an individual model in
// the clear, nor does k (it sees only the product); k learns the sum as a
// does, so a group needs at least three members (k's own input and one
// other would give k that other's). A failed group (too few members, the
// key holder silent) keeps the node's own model, in Ready.Reports. The
// strategy's vectors never leave the node (strategy fedavg).
type Paillier struct {
	id     uint32
	model  *nn.Model
	dir    *wire.Directory
	random seed.Source
	cfg    PaillierConfig
	key    *privacy.PaillierPrivateKey
	pack   privacy.PaillierPacking

	r      int
	hood   node.Neighborhood
	pks    map[uint32]*wire.Message // neighbours' key messages this round
	holder map[uint32]*privacy.PaillierPublicKey
	// as aggregator
	members []uint32
	kh      uint32
	inputs  map[uint32][]*big.Int
	// as key holder: aggregates to decrypt, by aggregator
	toDecrypt map[uint32][]*big.Int
	counts    map[uint32]int
	sum       []*big.Int
	sumCount  int
	rep       node.SecAggReport
	done      bool
}

// NewPaillier draws node id's key (from seed.Mask) and returns its
// layer.
func NewPaillier(id int, model *nn.Model, dir *wire.Directory, random seed.Source, cfg PaillierConfig) (*Paillier, error) {
	if model == nil || dir == nil || random == nil {
		return nil, fmt.Errorf("paillier layer: a model, a directory and a seed source are required")
	}
	rng := random.Stream(seed.Mask, uint64(id), 1<<40)
	key, err := privacy.GeneratePaillier(privacy.NewStreamReader(rng.Uint64), cfg.KeyBits)
	if err != nil {
		return nil, err
	}
	pack, err := privacy.NewPaillierPacking(&key.PaillierPublicKey, cfg.ScaleBits, cfg.Bound, cfg.Headroom)
	if err != nil {
		return nil, err
	}
	return &Paillier{id: uint32(id), model: model, dir: dir, random: random, cfg: cfg, key: key, pack: pack}, nil
}

// Name implements node.Layer.
func (*Paillier) Name() string { return "paillier" }

// Phases implements node.Layer.
func (*Paillier) Phases() int { return 5 }

// ReleasePhase implements node.Releaser.
func (*Paillier) ReleasePhase() int { return 4 }

// Expects implements node.Layer: keys (0), the key holder's relayed key (1),
// encrypted inputs (2), the aggregate (3), the decrypted sum (4), each of
// the exact size the key and the model give.
func (l *Paillier) Expects(p int) []node.Expect {
	nb := l.nBytes()
	cts := l.pack.Plaintexts(l.model.NumParams())
	exact := func(k wire.Kind, n int) []node.Expect { return []node.Expect{node.ExpectBlob(k, n, n)} }
	switch p {
	case 0:
		return exact(wire.KindKey, nb)
	case 1:
		return exact(wire.KindKey, 32+wire.SignatureSize+nb)
	case 2, 3:
		return exact(wire.KindCipher, 32+cts*l.ctBytes())
	case 4:
		return exact(wire.KindCipher, 32+cts*nb)
	}
	return nil
}

// ReleasesVectors implements node.Releaser: the strategy's vectors stay in.
func (*Paillier) ReleasesVectors() bool { return false }

// Owns implements node.Layer.
func (*Paillier) Owns(k wire.Kind) bool { return k == wire.KindKey || k == wire.KindCipher }

// Observe implements node.Layer.
func (*Paillier) Observe(*wire.Message, error) error { return nil }

// See implements node.Layer.
func (*Paillier) See(*strategy.View) {}

// Begin implements node.Layer.
func (l *Paillier) Begin(r int, hood node.Neighborhood) error {
	l.r, l.hood = r, hood
	l.pks, l.holder = map[uint32]*wire.Message{}, map[uint32]*privacy.PaillierPublicKey{}
	l.members, l.inputs = nil, map[uint32][]*big.Int{}
	l.toDecrypt, l.counts = map[uint32][]*big.Int{}, map[uint32]int{}
	l.sum, l.sumCount, l.done, l.rep = nil, 0, false, node.SecAggReport{}
	for _, j := range hood.In {
		if j >= 0 && uint32(j) != l.id {
			l.members = append(l.members, uint32(j))
		}
	}
	slices.Sort(l.members)
	if len(l.members) > 0 {
		l.kh = l.members[0]
	}
	return nil
}

func (l *Paillier) nBytes() int { return (l.key.N.BitLen() + 7) / 8 }

// ctBytes is a ciphertext's size (mod n²).
func (l *Paillier) ctBytes() int { return 2 * l.nBytes() }

func putInts(xs []*big.Int, size int) []byte {
	b := make([]byte, 32, 32+size*len(xs))
	binary.LittleEndian.PutUint32(b, uint32(len(xs)))
	for _, x := range xs {
		b = append(b, x.FillBytes(make([]byte, size))...)
	}
	return b
}

func getInts(b []byte, size int) (int, []*big.Int, error) {
	if len(b) < 32 || (len(b)-32)%size != 0 {
		return 0, nil, fmt.Errorf("%w: a blob of %d bytes", privacy.ErrProtocol, len(b))
	}
	count := int(binary.LittleEndian.Uint32(b))
	var out []*big.Int
	for off := 32; off < len(b); off += size {
		out = append(out, new(big.Int).SetBytes(b[off:off+size]))
	}
	return count, out, nil
}

// Outbox implements node.Layer.
func (l *Paillier) Outbox(p int) ([]*wire.Message, error) {
	var out []*wire.Message
	blob := func(k wire.Kind, to uint32, tag string, b []byte) {
		out = append(out, &wire.Message{Header: wire.Header{Kind: k, To: to}, Blob: wire.Blob{Tag: tag, Data: b}})
	}
	switch p {
	case 0:
		blob(wire.KindKey, wire.Broadcast, TagPaillierKey, l.key.N.FillBytes(make([]byte, l.nBytes())))
	case 1:
		l.rep.Members = len(l.members)
		km := l.pks[l.kh]
		if len(l.members) < 3 || km == nil {
			l.fail(fmt.Sprintf("a group of %d members (at least 3), key holder's key %v", len(l.members), km != nil))
			return nil, nil
		}
		// k's signed key, relayed: id, seq, signature, n.
		b := make([]byte, 32, 32+wire.SignatureSize+len(km.Blob.Data))
		binary.LittleEndian.PutUint32(b, l.kh)
		binary.LittleEndian.PutUint64(b[8:], km.Seq)
		b = append(append(b, km.Sig[:]...), km.Blob.Data...)
		for _, j := range l.members {
			blob(wire.KindKey, j, TagPaillierHolder, b)
		}
	case 2:
		ms, err := l.pack.Encode(l.model.Params())
		if err != nil {
			l.rep.Reason = err.Error() // out of range: sit every group out
			return nil, nil
		}
		rng := l.random.Stream(seed.Mask, uint64(l.id), uint64(l.r), 1<<41)
		rd := privacy.NewStreamReader(rng.Uint64)
		for _, a := range slices.Sorted(mapKeys(l.holder)) {
			pk := l.holder[a]
			enc, err := pk.Encrypter() // fixed-base (DJN) tables, shared by key
			if err != nil {
				return nil, err
			}
			cts := make([]*big.Int, len(ms))
			for i, m := range ms {
				if m.Cmp(pk.N) >= 0 {
					return nil, fmt.Errorf("paillier layer: a packed plaintext over group %d's key", a)
				}
				if cts[i], err = enc.Encrypt(m, rd); err != nil {
					return nil, err
				}
			}
			l.rep.Contributed++
			blob(wire.KindCipher, a, TagPaillierInput, putInts(cts, 2*((pk.N.BitLen()+7)/8)))
		}
	case 3:
		if l.done {
			return nil, nil
		}
		pk := l.holder0()
		if pk == nil {
			return nil, nil
		}
		var agg []*big.Int
		n := 0
		for _, j := range l.members {
			cts := l.inputs[j]
			if cts == nil {
				continue
			}
			n++
			if agg == nil {
				agg = slices.Clone(cts)
				continue
			}
			for i := range agg {
				agg[i] = pk.Add(agg[i], cts[i])
			}
		}
		l.rep.Survivors = n
		if n < 2 || n > 1<<l.cfg.Headroom {
			l.fail(fmt.Sprintf("%d inputs arrived (at least 2, at most %d)", n, 1<<l.cfg.Headroom))
			return nil, nil
		}
		b := putInts(agg, 2*((pk.N.BitLen()+7)/8))
		binary.LittleEndian.PutUint32(b[4:], uint32(n))
		blob(wire.KindCipher, l.kh, TagPaillierAgg, b)
	case 4:
		for _, a := range slices.Sorted(mapKeys(l.toDecrypt)) {
			sums := make([]*big.Int, len(l.toDecrypt[a]))
			for i, c := range l.toDecrypt[a] {
				var err error
				if sums[i], err = l.key.Decrypt(c); err != nil {
					sums = nil
					break
				}
			}
			if sums == nil {
				continue
			}
			b := putInts(sums, l.nBytes())
			binary.LittleEndian.PutUint32(b[4:], uint32(l.counts[a]))
			l.rep.Unmasked++
			blob(wire.KindCipher, a, TagPaillierSum, b)
		}
	}
	return out, nil
}

// holder0 is the node's own group's key holder's public key.
func (l *Paillier) holder0() *privacy.PaillierPublicKey {
	km := l.pks[l.kh]
	if km == nil {
		return nil
	}
	n := new(big.Int).SetBytes(km.Blob.Data)
	return &privacy.PaillierPublicKey{N: n, N2: new(big.Int).Mul(n, n)}
}

func mapKeys[V any](m map[uint32]V) func(func(uint32) bool) {
	return func(yield func(uint32) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

func (l *Paillier) fail(reason string) {
	if !l.done {
		l.done, l.rep.Fallback, l.rep.Reason = true, true, reason
	}
}

// Handle implements node.Layer.
func (l *Paillier) Handle(m *wire.Message) error {
	return hiddenRefusal("paillier", m.From, l.handle(m))
}

// paillierKinds is the kind each tag travels in: a tag in another kind's
// message is refused before its bytes are read.
var paillierKinds = map[string]wire.Kind{TagPaillierKey: wire.KindKey, TagPaillierHolder: wire.KindKey,
	TagPaillierInput: wire.KindCipher, TagPaillierAgg: wire.KindCipher, TagPaillierSum: wire.KindCipher}

func (l *Paillier) handle(m *wire.Message) error {
	d := m.Blob.Data
	if k, ok := paillierKinds[m.Blob.Tag]; ok && k != m.Kind {
		return fmt.Errorf("%w: a %s message tagged %q", privacy.ErrProtocol, m.Kind, m.Blob.Tag)
	}
	switch m.Blob.Tag {
	case TagPaillierKey:
		if l.pks[m.From] != nil || len(d) != l.nBytes() || d[0]&0x80 == 0 {
			return fmt.Errorf("%w: a key of %d bytes, or a second one", privacy.ErrProtocol, len(d))
		}
		c := *m
		l.pks[m.From] = &c
	case TagPaillierHolder:
		if l.holder[m.From] != nil || len(d) < 32+wire.SignatureSize+1 {
			return fmt.Errorf("%w: a key holder's key of %d bytes, or a second one", privacy.ErrProtocol, len(d))
		}
		k := binary.LittleEndian.Uint32(d)
		pub, ok := l.dir.Key(k)
		km := &wire.Message{Header: wire.Header{Kind: wire.KindKey, From: k, To: wire.Broadcast, Round: uint64(l.r), Seq: binary.LittleEndian.Uint64(d[8:])},
			Blob: wire.Blob{Tag: TagPaillierKey, Data: d[32+wire.SignatureSize:]}}
		copy(km.Sig[:], d[32:32+wire.SignatureSize])
		if !ok || k == m.From || !wire.Verify(km, pub) {
			return fmt.Errorf("%w: the key holder's key is not signed by node %d for round %d", privacy.ErrForged, k, l.r)
		}
		// The checks a key sent directly gets: a key holder in league with
		// the relay could sign a short or even modulus, under which this
		// node could not (or must not) encrypt.
		if kd := km.Blob.Data; len(kd) != l.nBytes() || kd[0]&0x80 == 0 || kd[len(kd)-1]&1 == 0 {
			return fmt.Errorf("%w: the key holder's key has %d bytes or is even, want an odd %d-byte modulus", privacy.ErrProtocol, len(kd), l.nBytes())
		}
		n := new(big.Int).SetBytes(km.Blob.Data)
		l.holder[m.From] = &privacy.PaillierPublicKey{N: n, N2: new(big.Int).Mul(n, n)}
	case TagPaillierInput:
		pk := l.holder0()
		if !slices.Contains(l.members, m.From) || l.inputs[m.From] != nil || pk == nil || l.done {
			return fmt.Errorf("%w: an input from %d, not expected", privacy.ErrProtocol, m.From)
		}
		_, cts, err := getInts(d, 2*((pk.N.BitLen()+7)/8))
		if err != nil {
			return err
		}
		if len(cts) != l.pack.Plaintexts(l.model.NumParams()) {
			return fmt.Errorf("%w: %d ciphertexts, want %d", privacy.ErrProtocol, len(cts), l.pack.Plaintexts(l.model.NumParams()))
		}
		for _, c := range cts {
			if !pk.Valid(c) {
				return fmt.Errorf("%w: not a ciphertext of the key holder's key", privacy.ErrProtocol)
			}
		}
		l.inputs[m.From] = cts
	case TagPaillierAgg:
		if l.toDecrypt[m.From] != nil {
			return fmt.Errorf("%w: a second aggregate from %d", privacy.ErrProtocol, m.From)
		}
		_, cts, err := getInts(d, l.ctBytes())
		if err != nil {
			return err
		}
		count := int(binary.LittleEndian.Uint32(d[4:]))
		// Decrypt only a product of at least two inputs for a group this
		// node is in: the relay might otherwise pass one member's
		// ciphertext off as a sum.
		if hk, ok := l.holder[m.From]; !ok || hk.N.Cmp(l.key.N) != 0 || count < 2 || count > 1<<l.cfg.Headroom || len(cts) != l.pack.Plaintexts(l.model.NumParams()) {
			return fmt.Errorf("%w: an aggregate of %d inputs from %d", privacy.ErrProtocol, count, m.From)
		}
		l.toDecrypt[m.From], l.counts[m.From] = cts, count
	case TagPaillierSum:
		pk := l.holder0()
		if m.From != l.kh || l.sum != nil || l.done || pk == nil {
			return fmt.Errorf("%w: a sum from %d, not this group's key holder, or before its key", privacy.ErrProtocol, m.From)
		}
		_, ms, err := getInts(d, (pk.N.BitLen()+7)/8)
		if err != nil {
			return err
		}
		count := int(binary.LittleEndian.Uint32(d[4:]))
		if count != l.rep.Survivors || len(ms) != l.pack.Plaintexts(l.model.NumParams()) {
			return fmt.Errorf("%w: a sum of %d inputs in %d plaintexts", privacy.ErrProtocol, count, len(ms))
		}
		l.sum, l.sumCount = ms, count
	default:
		return fmt.Errorf("%w: a %s message tagged %q", privacy.ErrProtocol, m.Kind, m.Blob.Tag)
	}
	return nil
}

// Release implements node.Releaser: the strategy's vectors stay in the node.
func (l *Paillier) Release(out []*wire.Message) ([]*wire.Message, error) {
	return dropVectors(out), nil
}

// End implements node.Layer: the group mean becomes the model, or the node
// keeps its own.
func (l *Paillier) End(rd *node.Ready) error {
	if !l.done && l.sum == nil {
		l.fail("no sum from the key holder")
	}
	if !l.done {
		l.done = true
		w := l.model.Params()
		s := make([]float64, len(w))
		if err := l.pack.Decode(s, l.sum, l.sumCount); err != nil {
			l.rep.Fallback, l.rep.Reason = true, err.Error()
		} else {
			k := float64(l.sumCount + 1)
			for i := range w {
				w[i] = float32((float64(w[i]) + s[i]) / k)
			}
			l.rep.Answered = l.sumCount
			l.rep.Weights = meanWeights(l.id, slices.Sorted(mapKeys(l.inputs)))
		}
	}
	rep := l.rep
	rd.Reports = append(rd.Reports, &rep)
	return nil
}

// Snapshot implements node.Layer: the node's private key, which lives across
// rounds (every other field is the round's).
//
//	version u8 (1), then privacy.PaillierPrivateKey.MarshalBinary
func (l *Paillier) Snapshot() ([]byte, error) {
	k, err := l.key.MarshalBinary()
	if err != nil {
		return nil, err
	}
	return append([]byte{stateVersion}, k...), nil
}

// Restore implements node.Layer: the saved key replaces the one drawn at
// construction (a deployed node draws it from crypto/rand).
func (l *Paillier) Restore(b []byte) error {
	if len(b) < 1 || b[0] != stateVersion {
		return fmt.Errorf("paillier layer: not a paillier state of format %d", stateVersion)
	}
	key, err := privacy.UnmarshalPaillier(b[1:])
	if err != nil {
		return fmt.Errorf("paillier layer: %w", err)
	}
	if key.N.BitLen() != l.key.N.BitLen() {
		return fmt.Errorf("paillier layer: a key of %d bits, the configuration's %d", key.N.BitLen(), l.key.N.BitLen())
	}
	pack, err := privacy.NewPaillierPacking(&key.PaillierPublicKey, l.cfg.ScaleBits, l.cfg.Bound, l.cfg.Headroom)
	if err != nil {
		return fmt.Errorf("paillier layer: %w", err)
	}
	l.key, l.pack = key, pack
	return nil
}

var _ node.Releaser = (*Paillier)(nil)
