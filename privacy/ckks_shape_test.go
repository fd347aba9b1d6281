package privacy

import (
	"encoding/binary"
	"errors"
	"testing"
)

// A truncated or re-lengthed serialized object used to overflow lattigo's
// slice reader's stack (it recursed on an empty buffer without end) or
// make it allocate what a length field said. Every CKKS decoder now
// compares the bytes with the object's shape first: the honest forms pass,
// and truncations, extensions and changed length fields of each are refused
// as protocol violations, never a crash.
func TestCKKSDecodersRefuseMisshapenBytes(t *testing.T) {
	g, err := NewCKKSGroup(CKKSParams, []byte("shape test crs"))
	if err != nil {
		t.Fatal(err)
	}
	a, b := g.NewParty(), g.NewParty()
	shA, err := a.PublicKeyShareBytes()
	if err != nil {
		t.Fatal(err)
	}
	shB, _ := b.PublicKeyShareBytes()
	if err := g.SetPublicKeyFromBytes([][]byte{shA, shB}); err != nil {
		t.Fatalf("honest key shares refused: %v", err)
	}
	pk, err := g.PublicKeyBytes()
	if err != nil {
		t.Fatal(err)
	}
	h, _ := NewCKKSGroup(CKKSParams, []byte("shape test crs"))
	if err := h.SetPublicKeyBytes(pk); err != nil {
		t.Fatalf("honest public key refused: %v", err)
	}
	cts, err := g.EncryptBytes([]float64{1, 2, 3})
	if err != nil {
		t.Fatal(err)
	}
	sum, err := g.SumBytes([][][]byte{cts, cts})
	if err != nil {
		t.Fatalf("honest ciphertexts refused: %v", err)
	}
	ds, err := a.DecryptionShareBytes(sum[0], nil)
	if err != nil {
		t.Fatalf("honest summed ciphertext refused: %v", err)
	}
	ds2, _ := b.DecryptionShareBytes(sum[0], nil)
	rcv := g.NewReceiver()
	if _, err := rcv.DecryptBytes(sum, [][][]byte{{ds, ds2}}, 3); err != nil {
		t.Fatalf("honest decryption shares refused: %v", err)
	}
	sizes, err := g.Sizes()
	if err != nil {
		t.Fatal(err)
	}
	if sizes != (CKKSSizes{KeyShare: len(shA), Key: len(pk), Ciphertext: len(cts[0]), DecryptionShare: len(ds)}) {
		t.Fatalf("Sizes %+v, honest objects have %d, %d, %d, %d bytes", sizes, len(shA), len(pk), len(cts[0]), len(ds))
	}

	shapes, err := g.shapes()
	if err != nil {
		t.Fatal(err)
	}
	decoders := map[string]struct {
		honest []byte
		shape  byteShape
		decode func([]byte) error
	}{
		"key share":  {shA, shapes.keyShare, func(x []byte) error { return g.SetPublicKeyFromBytes([][]byte{x}) }},
		"public key": {pk, shapes.key, func(x []byte) error { return h.SetPublicKeyBytes(x) }},
		"ciphertext": {cts[0], shapes.ciphertext, func(x []byte) error { _, err := g.Ciphertext(x, g.Params.MaxLevel()); return err }},
		"decryption share": {ds, shapes.decShare, func(x []byte) error {
			_, err := rcv.DecryptBytes(sum[:1], [][][]byte{{x, ds2}}, 3)
			return err
		}},
	}
	for name, d := range decoders {
		var bad [][]byte
		for _, n := range []int{0, 1, 7, 8, 9, 16, 17, 24, 100, len(d.honest) / 2, len(d.honest) - 1} {
			bad = append(bad, d.honest[:n])
		}
		bad = append(bad, append(append([]byte(nil), d.honest...), 0, 0, 0, 0, 0, 0, 0, 0))
		// The length fields (structural words), each made huge, then tiny.
		words := 0
		for off := 0; off+8 <= len(d.honest) && words < 6; off += 8 {
			if !d.shape.fixed[off] || d.honest[off] == 0 {
				continue // a coefficient, or not the low byte of a length
			}
			words++
			for _, v := range []uint64{1 << 40, 1, 0} {
				x := append([]byte(nil), d.honest...)
				binary.LittleEndian.PutUint64(x[off:], v)
				if string(x) != string(d.honest) {
					bad = append(bad, x)
				}
			}
		}
		if words == 0 {
			t.Errorf("%s: no length field found", name)
		}
		for k, x := range bad {
			if err := d.decode(x); !errors.Is(err, ErrProtocol) {
				t.Errorf("%s, bad form %d (%d bytes): %v, want a protocol violation", name, k, len(x), err)
			}
		}
	}
}
