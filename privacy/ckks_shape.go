package privacy

import (
	"fmt"
	"sync"

	"github.com/tuneinsight/lattigo/v6/core/rlwe"
	"github.com/tuneinsight/lattigo/v6/ring"
	"github.com/tuneinsight/lattigo/v6/schemes/ckks"
)

// byteShape is the byte form every serialized object of one kind has under
// a group's parameters: its length, and its structural bytes (lengths,
// levels, metadata), which every honest encoding shares; only coefficient
// bytes differ between two objects of the kind.
//
// lattigo's decoders trust the lengths they read: a truncated buffer makes
// its slice reader recurse without end (a stack overflow, which no recover
// catches), and a length field beyond the bytes makes it allocate what the
// field says. Every serialized object a peer sends is therefore compared
// with its shape before any lattigo decoder sees it, so a decoder only ever
// reads lengths equal to the ones it would have written itself.
type byteShape struct {
	fixed []bool // fixed[i]: byte i is structural
	want  []byte // the structural bytes' values
}

// newByteShape derives the shape from one object of the kind: set writes
// v into every coefficient, marshal serializes the object. A byte that
// changes between all-zero and all-one coefficients is a coefficient's;
// every other byte is structural.
func newByteShape(set func(v uint64), marshal func() ([]byte, error)) (byteShape, error) {
	set(0)
	zero, err := marshal()
	if err != nil {
		return byteShape{}, err
	}
	set(^uint64(0))
	ones, err := marshal()
	set(0)
	if err != nil {
		return byteShape{}, err
	}
	if len(zero) != len(ones) {
		return byteShape{}, fmt.Errorf("ckks: a serialized object's length depends on its coefficients")
	}
	s := byteShape{fixed: make([]bool, len(zero)), want: zero}
	for i := range zero {
		s.fixed[i] = zero[i] == ones[i]
	}
	return s, nil
}

// check refuses b unless it has the shape's length and structural bytes.
func (s byteShape) check(b []byte, what string) error {
	if len(b) != len(s.want) {
		return fmt.Errorf("%w: a %s of %d bytes, want %d", ErrProtocol, what, len(b), len(s.want))
	}
	for i, f := range s.fixed {
		if f && b[i] != s.want[i] {
			return fmt.Errorf("%w: a %s whose byte %d (a length, level or flag) is %d, want %d", ErrProtocol, what, i, b[i], s.want[i])
		}
	}
	return nil
}

// Size is the shape's length in bytes.
func (s byteShape) Size() int { return len(s.want) }

func setPoly(p ring.Poly, v uint64) {
	for _, c := range p.Coeffs {
		for i := range c {
			c[i] = v
		}
	}
}

// ckksShapes are the shapes of the four objects a CKKS group exchanges.
type ckksShapes struct {
	keyShare, key, ciphertext, decShare byteShape
}

// shapes returns the group's shapes, derived once.
func (g *CKKSGroup) shapes() (*ckksShapes, error) {
	g.shapeOnce.Do(func() {
		s := &ckksShapes{}
		var err error
		ks := g.ckg.AllocateShare()
		s.keyShare, err = newByteShape(func(v uint64) { setPoly(ks.Value.Q, v); setPoly(ks.Value.P, v) }, ks.MarshalBinary)
		if err != nil {
			g.shapeErr = err
			return
		}
		pk := rlwe.NewPublicKey(g.Params)
		s.key, err = newByteShape(func(v uint64) {
			for _, p := range pk.Value {
				setPoly(p.Q, v)
				setPoly(p.P, v)
			}
		}, pk.MarshalBinary)
		if err != nil {
			g.shapeErr = err
			return
		}
		// An encryption's metadata is its plaintext's (the encoder's scale).
		ct := rlwe.NewCiphertext(g.Params, 1, g.Params.MaxLevel())
		*ct.MetaData = *ckks.NewPlaintext(g.Params, g.Params.MaxLevel()).MetaData
		s.ciphertext, err = newByteShape(func(v uint64) {
			for _, p := range ct.Value {
				setPoly(p, v)
			}
		}, ct.MarshalBinary)
		if err != nil {
			g.shapeErr = err
			return
		}
		ds := g.cks.AllocateShare(g.Params.MaxLevel())
		s.decShare, err = newByteShape(func(v uint64) { setPoly(ds.Value, v) }, ds.MarshalBinary)
		if err != nil {
			g.shapeErr = err
			return
		}
		g.shape = s
	})
	return g.shape, g.shapeErr
}

// shapeState is the group's lazily derived shapes (CKKSGroup embeds it).
type shapeState struct {
	shapeOnce sync.Once
	shape     *ckksShapes
	shapeErr  error
}

// CKKSSizes are the exact sizes in bytes of the serialized objects a CKKS
// group exchanges: a public-key share, the collective public key, a fresh
// ciphertext and a decryption share of one.
type CKKSSizes struct {
	KeyShare, Key, Ciphertext, DecryptionShare int
}

// Sizes returns the exact sizes of the group's serialized objects: a
// receiver knows them before it decodes anything.
func (g *CKKSGroup) Sizes() (CKKSSizes, error) {
	s, err := g.shapes()
	if err != nil {
		return CKKSSizes{}, err
	}
	return CKKSSizes{KeyShare: s.keyShare.Size(), Key: s.key.Size(), Ciphertext: s.ciphertext.Size(), DecryptionShare: s.decShare.Size()}, nil
}
