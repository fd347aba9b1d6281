package secagg

import (
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/trellis-fl/trellis/nn"
	"github.com/trellis-fl/trellis/node"
	"github.com/trellis-fl/trellis/privacy"
	"github.com/trellis-fl/trellis/strategy"
	"github.com/trellis-fl/trellis/wire"
)

// Tags of the CKKS layer's messages (wire kind cipher).
const (
	TagCKKSKeyShare = "ckks/pkshare"
	TagCKKSKey      = "ckks/pk"
	TagCKKSInput    = "ckks/input"
	TagCKKSSum      = "ckks/sum"
	TagCKKSDecShare = "ckks/dshare"
)

// CKKS aggregates each node's neighbourhood under threshold CKKS
// (privacy.CKKSGroup), a homomorphic encryption of real vectors: node a and
// its in-neighbours make a collective public key for the round (phase 0:
// members send their shares to a; 1: a sends the key back), the members
// encrypt their models under it (2), a adds the ciphertexts, which it
// cannot read, and sends the sum to the members (3), and every member
// returns its key-switching share of the sum to a's output key (4). Only
// with every member's share does a decrypt the sum (N-out-of-N); its model
// becomes the mean of its own and the members'. A member silent at any
// phase after the key makes the group fall back to the node's own model
// (Ready.Reports).
//
// Trust: the aggregator is honest-but-curious about the key (members take
// the collective key it returns; relaying every signed share instead would
// cost n² shares). lattigo draws its keys and noise from crypto/rand, so
// runs with this layer are not bit-reproducible: the decoded means differ
// between runs at the 10^-6 level.
type CKKS struct {
	id    uint32
	model *nn.Model
	crs   []byte
	r     int
	hood  node.Neighborhood

	// as member of each neighbour's group
	groups  map[uint32]*privacy.CKKSGroup
	parties map[uint32]*privacy.CKKSParty
	keyed   map[uint32]bool
	sums    map[uint32][][]byte
	// as aggregator
	own     *privacy.CKKSGroup
	self    *privacy.CKKSParty
	recv    *privacy.CKKSReceiver
	members []uint32
	shares  map[uint32][]byte
	roster  []uint32
	inputs  map[uint32][][]byte
	sum     [][]byte
	count   int
	dshares map[uint32][][]byte
	rep     node.SecAggReport
	done    bool
	maxCts  int
	// The exact sizes of the group objects, and the model's ciphertexts.
	sizes privacy.CKKSSizes
	cts   int
}

// NewCKKS returns node id's CKKS layer; crs is the experiment's
// common reference string (public), maxCiphertexts the most ciphertexts a
// model may need (a larger model is refused).
func NewCKKS(id int, model *nn.Model, crs []byte, maxCiphertexts int) (*CKKS, error) {
	if model == nil {
		return nil, fmt.Errorf("ckks layer: a model is required")
	}
	g, err := privacy.NewCKKSGroup(privacy.CKKSParams, crs)
	if err != nil {
		return nil, err
	}
	if n := g.Ciphertexts(model.NumParams()); n > maxCiphertexts {
		return nil, fmt.Errorf("ckks layer: the model's %d parameters need %d ciphertexts of %d slots, more than the %d allowed", model.NumParams(), n, g.Slots(), maxCiphertexts)
	}
	sizes, err := g.Sizes()
	if err != nil {
		return nil, err
	}
	return &CKKS{id: uint32(id), model: model, crs: crs, maxCts: maxCiphertexts,
		sizes: sizes, cts: g.Ciphertexts(model.NumParams())}, nil
}

// Name implements node.Layer.
func (*CKKS) Name() string { return "ckks" }

// Phases implements node.Layer.
func (*CKKS) Phases() int { return 5 }

// ReleasePhase implements node.Releaser.
func (*CKKS) ReleasePhase() int { return 4 }

// Expects implements node.Layer: key shares (0), the collective key (1),
// encrypted inputs (2), the encrypted sum (3), decryption shares (4), each
// of the exact size the scheme's parameters and the model give.
func (l *CKKS) Expects(p int) []node.Expect {
	size := 0
	switch p {
	case 0:
		size = l.sizes.KeyShare
	case 1:
		size = l.sizes.Key
	case 2, 3:
		size = frameSize(l.cts, l.sizes.Ciphertext)
	case 4:
		size = frameSize(l.cts, l.sizes.DecryptionShare)
	default:
		return nil
	}
	return []node.Expect{node.ExpectBlob(wire.KindCipher, size, size)}
}

// frameSize is the length of a frame of n parts of size bytes each.
func frameSize(n, size int) int { return 4 + 4*n + n*size }

// ReleasesVectors implements node.Releaser: the strategy's vectors stay in.
func (*CKKS) ReleasesVectors() bool { return false }

// Owns implements node.Layer.
func (*CKKS) Owns(k wire.Kind) bool { return k == wire.KindCipher }

// Observe implements node.Layer.
func (*CKKS) Observe(*wire.Message, error) error { return nil }

// See implements node.Layer.
func (*CKKS) See(*strategy.View) {}

// groupCRS is the common reference string of group a in round r.
func (l *CKKS) groupCRS(a uint32) []byte {
	b := append([]byte(nil), l.crs...)
	b = binary.LittleEndian.AppendUint64(b, uint64(l.r))
	return binary.LittleEndian.AppendUint32(b, a)
}

// Begin implements node.Layer: the round's groups, each with a fresh key share.
func (l *CKKS) Begin(r int, hood node.Neighborhood) error {
	l.r, l.hood = r, hood
	l.groups, l.parties, l.keyed, l.sums = map[uint32]*privacy.CKKSGroup{}, map[uint32]*privacy.CKKSParty{}, map[uint32]bool{}, map[uint32][][]byte{}
	l.members, l.shares, l.roster, l.inputs, l.sum, l.count, l.dshares = nil, map[uint32][]byte{}, nil, map[uint32][][]byte{}, nil, 0, map[uint32][][]byte{}
	l.rep, l.done = node.SecAggReport{}, false
	for _, a := range hood.In {
		if a < 0 || uint32(a) == l.id {
			continue
		}
		g, err := privacy.NewCKKSGroup(privacy.CKKSParams, l.groupCRS(uint32(a)))
		if err != nil {
			return err
		}
		l.groups[uint32(a)], l.parties[uint32(a)] = g, g.NewParty()
		l.members = append(l.members, uint32(a))
	}
	slices.Sort(l.members)
	var err error
	if l.own, err = privacy.NewCKKSGroup(privacy.CKKSParams, l.groupCRS(l.id)); err != nil {
		return err
	}
	l.self, l.recv = l.own.NewParty(), l.own.NewReceiver()
	return nil
}

// frame packs byte strings with their lengths: count, lengths, bytes.
func frame(parts [][]byte) []byte {
	b := binary.LittleEndian.AppendUint32(nil, uint32(len(parts)))
	for _, p := range parts {
		b = binary.LittleEndian.AppendUint32(b, uint32(len(p)))
	}
	for _, p := range parts {
		b = append(b, p...)
	}
	return b
}

func unframe(b []byte, max int) ([][]byte, error) {
	if len(b) < 4 {
		return nil, fmt.Errorf("%w: a frame of %d bytes", privacy.ErrProtocol, len(b))
	}
	n := int(binary.LittleEndian.Uint32(b))
	if n > max || 4+4*n > len(b) {
		return nil, fmt.Errorf("%w: a frame of %d parts", privacy.ErrProtocol, n)
	}
	off := 4 + 4*n
	out := make([][]byte, n)
	for i := range out {
		k := int(binary.LittleEndian.Uint32(b[4+4*i:]))
		if k > len(b)-off {
			return nil, fmt.Errorf("%w: a frame's part overruns it", privacy.ErrProtocol)
		}
		out[i], off = b[off:off+k], off+k
	}
	if off != len(b) {
		return nil, fmt.Errorf("%w: trailing bytes in a frame", privacy.ErrProtocol)
	}
	return out, nil
}

func (l *CKKS) blob(to uint32, tag string, b []byte) *wire.Message {
	return &wire.Message{Header: wire.Header{Kind: wire.KindCipher, To: to}, Blob: wire.Blob{Tag: tag, Data: b}}
}

func (l *CKKS) fail(reason string) {
	if !l.done {
		l.done, l.rep.Fallback, l.rep.Reason = true, true, reason
	}
}

// Outbox implements node.Layer.
func (l *CKKS) Outbox(p int) ([]*wire.Message, error) {
	var out []*wire.Message
	switch p {
	case 0:
		for _, a := range l.members {
			b, err := l.parties[a].PublicKeyShareBytes()
			if err != nil {
				return nil, err
			}
			out = append(out, l.blob(a, TagCKKSKeyShare, b))
		}
	case 1:
		own, err := l.self.PublicKeyShareBytes()
		if err != nil {
			return nil, err
		}
		all := [][]byte{own}
		for _, j := range l.members {
			if s := l.shares[j]; s != nil {
				l.roster = append(l.roster, j)
				all = append(all, s)
			}
		}
		l.rep.Members = len(l.roster)
		if len(l.roster) < 2 {
			l.fail(fmt.Sprintf("%d members sent key shares, need 2", len(l.roster)))
			return nil, nil
		}
		if err := l.own.SetPublicKeyFromBytes(all); err != nil {
			l.fail(err.Error())
			return nil, nil
		}
		pk, err := l.own.PublicKeyBytes()
		if err != nil {
			return nil, err
		}
		for _, j := range l.roster {
			out = append(out, l.blob(j, TagCKKSKey, pk))
		}
	case 2:
		x := make([]float64, l.model.NumParams())
		for i, v := range l.model.Params() {
			x[i] = float64(v)
		}
		for _, a := range l.members {
			if !l.keyed[a] {
				continue
			}
			l.rep.Joined++
			cts, err := l.groups[a].EncryptBytes(x)
			if err != nil {
				return nil, err
			}
			l.rep.Contributed++
			out = append(out, l.blob(a, TagCKKSInput, frame(cts)))
		}
	case 3:
		if l.done {
			return nil, nil
		}
		var vecs [][][]byte
		for _, j := range l.roster {
			if v := l.inputs[j]; v != nil {
				vecs = append(vecs, v)
			}
		}
		l.count, l.rep.Survivors = len(vecs), len(vecs)
		if len(vecs) < 2 {
			l.fail(fmt.Sprintf("%d inputs arrived, need 2", len(vecs)))
			return nil, nil
		}
		sum, err := l.own.SumBytes(vecs)
		if err != nil {
			l.fail(err.Error())
			return nil, nil
		}
		l.sum = sum
		b := frame(sum)
		for _, j := range l.roster {
			out = append(out, l.blob(j, TagCKKSSum, b))
		}
	case 4:
		for _, a := range l.members {
			sum := l.sums[a]
			if sum == nil {
				continue
			}
			parts := make([][]byte, len(sum))
			for k, ct := range sum {
				var err error
				if parts[k], err = l.parties[a].DecryptionShareBytes(ct, nil); err != nil {
					parts = nil
					break
				}
			}
			if parts == nil {
				continue
			}
			l.rep.Unmasked++
			out = append(out, l.blob(a, TagCKKSDecShare, frame(parts)))
		}
	}
	return out, nil
}

// Handle implements node.Layer.
func (l *CKKS) Handle(m *wire.Message) error {
	return hiddenRefusal("ckks", m.From, l.handle(m))
}

func (l *CKKS) handle(m *wire.Message) error {
	d := m.Blob.Data
	member := slices.Contains(l.members, m.From)
	inRoster := slices.Contains(l.roster, m.From)
	switch m.Blob.Tag {
	case TagCKKSKeyShare:
		if !member || l.shares[m.From] != nil || l.roster != nil {
			return fmt.Errorf("%w: a key share from %d, not expected", privacy.ErrProtocol, m.From)
		}
		l.shares[m.From] = d
	case TagCKKSKey:
		g := l.groups[m.From]
		if g == nil || l.keyed[m.From] {
			return fmt.Errorf("%w: a key from %d, not expected", privacy.ErrProtocol, m.From)
		}
		if err := g.SetPublicKeyBytes(d); err != nil {
			return err
		}
		l.keyed[m.From] = true
	case TagCKKSInput:
		if !inRoster || l.inputs[m.From] != nil || l.sum != nil {
			return fmt.Errorf("%w: an input from %d, not expected", privacy.ErrProtocol, m.From)
		}
		cts, err := unframe(d, l.maxCts)
		if err != nil {
			return err
		}
		if len(cts) != l.own.Ciphertexts(l.model.NumParams()) {
			return fmt.Errorf("%w: %d ciphertexts, want %d", privacy.ErrProtocol, len(cts), l.own.Ciphertexts(l.model.NumParams()))
		}
		l.inputs[m.From] = cts
	case TagCKKSSum:
		g := l.groups[m.From]
		if g == nil || !l.keyed[m.From] || l.sums[m.From] != nil {
			return fmt.Errorf("%w: a sum from %d, not expected", privacy.ErrProtocol, m.From)
		}
		cts, err := unframe(d, l.maxCts)
		if err != nil {
			return err
		}
		if len(cts) != g.Ciphertexts(l.model.NumParams()) {
			return fmt.Errorf("%w: a sum of %d ciphertexts", privacy.ErrProtocol, len(cts))
		}
		l.sums[m.From] = cts
	case TagCKKSDecShare:
		if !inRoster || l.dshares[m.From] != nil || l.sum == nil {
			return fmt.Errorf("%w: a decryption share from %d, not expected", privacy.ErrProtocol, m.From)
		}
		parts, err := unframe(d, l.maxCts)
		if err != nil {
			return err
		}
		if len(parts) != len(l.sum) {
			return fmt.Errorf("%w: %d decryption shares for %d ciphertexts", privacy.ErrProtocol, len(parts), len(l.sum))
		}
		l.dshares[m.From] = parts
	default:
		return fmt.Errorf("%w: a cipher message tagged %q", privacy.ErrProtocol, m.Blob.Tag)
	}
	return nil
}

// Release implements node.Releaser: the strategy's vectors stay in the node.
func (l *CKKS) Release(out []*wire.Message) ([]*wire.Message, error) {
	return dropVectors(out), nil
}

// End implements node.Layer: with every member's decryption share the sum is
// decrypted and the group mean becomes the model.
func (l *CKKS) End(rd *node.Ready) error {
	if !l.done {
		for _, j := range l.roster {
			if l.dshares[j] == nil {
				l.fail(fmt.Sprintf("member %d's decryption share is missing (every member's is needed)", j))
				break
			}
		}
	}
	if !l.done {
		l.done = true
		shares := make([][][]byte, len(l.sum))
		for k, ct := range l.sum {
			own, err := l.self.DecryptionShareBytes(ct, l.recv)
			if err != nil {
				return err
			}
			shares[k] = append(shares[k], own)
			for _, j := range l.roster {
				shares[k] = append(shares[k], l.dshares[j][k])
			}
		}
		w := l.model.Params()
		s, err := l.recv.DecryptBytes(l.sum, shares, len(w))
		if err != nil {
			l.rep.Fallback, l.rep.Reason = true, err.Error()
		} else {
			k := float64(l.count + 1)
			for i := range w {
				w[i] = float32((float64(w[i]) + s[i]) / k)
			}
			l.rep.Answered = len(l.roster)
			var in []uint32
			for _, j := range l.roster {
				if l.inputs[j] != nil {
					in = append(in, j)
				}
			}
			l.rep.Weights = meanWeights(l.id, in)
		}
	}
	rep := l.rep
	rd.Reports = append(rd.Reports, &rep)
	return nil
}

// Snapshot implements node.Layer: nothing lives across rounds (every group's
// key shares are drawn at Begin from the round's common reference
// string), so the state is only its format's version.
func (l *CKKS) Snapshot() ([]byte, error) { return versionOnly(), nil }

// Restore implements node.Layer.
func (l *CKKS) Restore(b []byte) error { return checkVersionOnly("ckks", b) }

var _ node.Releaser = (*CKKS)(nil)
