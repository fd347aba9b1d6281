package privacy

import (
	"fmt"

	"github.com/tuneinsight/lattigo/v6/core/rlwe"
	"github.com/tuneinsight/lattigo/v6/multiparty"
)

// The byte forms of CKKSGroup's objects, for a node layer that sends them
// in wire messages (kind cipher): every decoder refuses what does not
// parse or does not belong to the group's parameters.

// safely runs a library decoder, turning a panic on hostile bytes into an
// error: nothing a peer sends may crash a node. It is the second line of
// defence: every decoder below first compares the bytes with the object's
// shape (ckks_shape.go), since a stack overflow or an allocation a length
// field asks for is not a panic recover can catch.
func safely(f func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("malformed: %v", r)
		}
	}()
	return f()
}

// PublicKeyShareBytes is the party's public-key share, serialized.
func (p *CKKSParty) PublicKeyShareBytes() ([]byte, error) {
	sh := p.PublicKeyShare()
	return sh.MarshalBinary()
}

// SetPublicKeyFromBytes makes the collective key from serialized shares.
func (g *CKKSGroup) SetPublicKeyFromBytes(shares [][]byte) error {
	shape, err := g.shapes()
	if err != nil {
		return err
	}
	sh := make([]multiparty.PublicKeyGenShare, len(shares))
	for i, b := range shares {
		if err := shape.keyShare.check(b, "public-key share"); err != nil {
			return fmt.Errorf("public-key share %d: %w", i, err)
		}
		sh[i] = g.ckg.AllocateShare()
		if err := safely(func() error { return sh[i].UnmarshalBinary(b) }); err != nil {
			return fmt.Errorf("%w: public-key share %d: %v", ErrProtocol, i, err)
		}
		if sh[i].Value.LevelQ() != g.Params.MaxLevelQ() || sh[i].Value.LevelP() != g.Params.MaxLevelP() {
			return fmt.Errorf("%w: public-key share %d of another shape", ErrProtocol, i)
		}
	}
	return g.SetPublicKey(sh)
}

// PublicKeyBytes is the collective public key, serialized.
func (g *CKKSGroup) PublicKeyBytes() ([]byte, error) {
	if g.pk == nil {
		return nil, fmt.Errorf("ckks: no collective public key yet")
	}
	return g.pk.MarshalBinary()
}

// SetPublicKeyBytes takes the collective public key another party made.
func (g *CKKSGroup) SetPublicKeyBytes(b []byte) error {
	shape, err := g.shapes()
	if err != nil {
		return err
	}
	if err := shape.key.check(b, "public key"); err != nil {
		return err
	}
	pk := rlwe.NewPublicKey(g.Params)
	if err := safely(func() error { return pk.UnmarshalBinary(b) }); err != nil {
		return fmt.Errorf("%w: public key: %v", ErrProtocol, err)
	}
	if pk.LevelQ() != g.Params.MaxLevelQ() || pk.LevelP() != g.Params.MaxLevelP() {
		return fmt.Errorf("%w: a public key of another shape", ErrProtocol)
	}
	g.pk = pk
	return nil
}

// EncryptBytes encrypts x and serializes each ciphertext.
func (g *CKKSGroup) EncryptBytes(x []float64) ([][]byte, error) {
	cts, err := g.Encrypt(x)
	if err != nil {
		return nil, err
	}
	return marshalAll(cts)
}

func marshalAll(cts []*rlwe.Ciphertext) ([][]byte, error) {
	out := make([][]byte, len(cts))
	for i, c := range cts {
		var err error
		if out[i], err = c.MarshalBinary(); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// Ciphertext parses a serialized ciphertext of the group's parameters at
// the given level.
func (g *CKKSGroup) Ciphertext(b []byte, level int) (*rlwe.Ciphertext, error) {
	if level != g.Params.MaxLevel() {
		return nil, fmt.Errorf("ckks: ciphertexts are exchanged at level %d only, not %d", g.Params.MaxLevel(), level)
	}
	shape, err := g.shapes()
	if err != nil {
		return nil, err
	}
	if err := shape.ciphertext.check(b, "ciphertext"); err != nil {
		return nil, err
	}
	ct := rlwe.NewCiphertext(g.Params, 1, level)
	if err := safely(func() error { return ct.UnmarshalBinary(b) }); err != nil {
		return nil, fmt.Errorf("%w: ciphertext: %v", ErrProtocol, err)
	}
	if ct.Degree() != 1 || ct.Level() != level || ct.LogDimensions.Cols != g.Params.LogMaxSlots() {
		return nil, fmt.Errorf("%w: a ciphertext of another shape", ErrProtocol)
	}
	return ct, nil
}

// SumBytes adds vectors of serialized fresh ciphertexts (no rescale):
// what the aggregator, which cannot decrypt, does.
func (g *CKKSGroup) SumBytes(vecs [][][]byte) ([][]byte, error) {
	if len(vecs) == 0 {
		return nil, fmt.Errorf("ckks: nothing to sum")
	}
	var acc []*rlwe.Ciphertext
	for j, v := range vecs {
		if len(v) != len(vecs[0]) {
			return nil, fmt.Errorf("%w: vector %d has %d ciphertexts, want %d", ErrProtocol, j, len(v), len(vecs[0]))
		}
		for k, b := range v {
			ct, err := g.Ciphertext(b, g.Params.MaxLevel())
			if err != nil {
				return nil, err
			}
			if acc == nil || k >= len(acc) {
				acc = append(acc, ct)
				continue
			}
			if err := g.eval.Add(acc[k], ct, acc[k]); err != nil {
				return nil, err
			}
		}
	}
	return marshalAll(acc)
}

// DecryptionShareBytes is the party's serialized key-switching share of a
// serialized ciphertext (to the receiver's key if out is the receiver's).
func (p *CKKSParty) DecryptionShareBytes(ct []byte, out *CKKSReceiver) ([]byte, error) {
	c, err := p.g.Ciphertext(ct, p.g.Params.MaxLevel())
	if err != nil {
		return nil, err
	}
	sh := p.DecryptionShare(c, out)
	return sh.MarshalBinary()
}

// DecryptBytes is Decrypt over serialized ciphertexts and shares
// (shares[k] every party's share of ciphertext k).
func (r *CKKSReceiver) DecryptBytes(cts [][]byte, shares [][][]byte, dim int) ([]float64, error) {
	g := r.g
	shape, err := g.shapes()
	if err != nil {
		return nil, err
	}
	if len(shares) != len(cts) {
		return nil, fmt.Errorf("%w: decryption shares for %d ciphertexts, want %d", ErrProtocol, len(shares), len(cts))
	}
	cs := make([]*rlwe.Ciphertext, len(cts))
	sh := make([][]multiparty.KeySwitchShare, len(cts))
	for k, b := range cts {
		var err error
		if cs[k], err = g.Ciphertext(b, g.Params.MaxLevel()); err != nil {
			return nil, err
		}
		for i, s := range shares[k] {
			if err := shape.decShare.check(s, "decryption share"); err != nil {
				return nil, fmt.Errorf("decryption share %d of ciphertext %d: %w", i, k, err)
			}
			v := g.cks.AllocateShare(cs[k].Level())
			if err := safely(func() error { return v.UnmarshalBinary(s) }); err != nil || v.Level() != cs[k].Level() {
				return nil, fmt.Errorf("%w: decryption share %d of ciphertext %d", ErrProtocol, i, k)
			}
			sh[k] = append(sh[k], v)
		}
	}
	return r.Decrypt(cs, sh, dim)
}
