package privacy

import (
	"bytes"
	"math/big"
	"testing"
)

// TestEncrypterIsDJN checks the fixed-base product against the formula
// computed with one exponentiation: Enc(m; α) = (1 + m·n)·h_s^α mod n², for
// α read from the same bytes, and that h_s encrypts 0 (it is an n-th
// residue, so Decrypt must give 0: an independent check of djnBase).
func TestEncrypterIsDJN(t *testing.T) {
	k := paillierTestKey(t)
	e, err := k.Encrypter()
	if err != nil {
		t.Fatal(err)
	}
	hs, err := djnBase(&k.PaillierPublicKey)
	if err != nil {
		t.Fatal(err)
	}
	if z, err := k.Decrypt(hs); err != nil || z.Sign() != 0 {
		t.Fatalf("h_s decrypts to %v, %v; want 0", z, err)
	}
	if e.expBytes != 64 {
		t.Fatalf("a 1024-bit key's exponent is %d bytes, want 64 (⌈k/2⌉ bits)", e.expBytes)
	}
	src := testReader(9)
	for trial := range 6 {
		alpha := make([]byte, e.expBytes)
		src.Read(alpha)
		m := randMod(k.N, src)
		switch trial {
		case 0:
			m.SetInt64(0)
		case 1:
			m.Sub(k.N, big.NewInt(1))
		case 2:
			clear(alpha) // α = 0: the ciphertext is 1 + m·n
		case 3:
			for i := range alpha {
				alpha[i] = 0xff // every window's last digit
			}
		}
		got, err := e.Encrypt(m, bytes.NewReader(alpha))
		if err != nil {
			t.Fatal(err)
		}
		want := new(big.Int).Exp(hs, new(big.Int).SetBytes(alpha), k.N2)
		gm := new(big.Int).Mul(m, k.N)
		want.Mul(want, gm.Add(gm, big.NewInt(1))).Mod(want, k.N2)
		if got.Cmp(want) != 0 {
			t.Fatalf("trial %d: the fixed-base product differs from (1+mn)·h_s^α mod n²", trial)
		}
		if d, err := k.Decrypt(got); err != nil || d.Cmp(m) != 0 {
			t.Fatalf("trial %d: decrypts to %v, %v; want m", trial, d, err)
		}
	}
}

// TestEncrypterHomomorphic: ciphertexts of the fixed-base encrypter add
// like any Paillier ciphertexts, also with the classic Encrypt, and two
// encryptions of one plaintext differ.
func TestEncrypterHomomorphic(t *testing.T) {
	k := paillierTestKey(t)
	e, err := k.Encrypter()
	if err != nil {
		t.Fatal(err)
	}
	rd := testReader(3)
	a, b := big.NewInt(123456789), new(big.Int).Lsh(big.NewInt(1), 900)
	ca, _ := e.Encrypt(a, rd)
	ca2, _ := e.Encrypt(a, rd)
	cb, _ := k.Encrypt(b, rd)
	if ca.Cmp(ca2) == 0 {
		t.Fatal("two encryptions of one plaintext are equal: no randomness")
	}
	sum, err := k.Decrypt(k.Add(k.Add(ca, cb), ca2))
	want := new(big.Int).Add(b, new(big.Int).Mul(a, big.NewInt(2)))
	if err != nil || sum.Cmp(want) != 0 {
		t.Fatalf("Dec(Enc(a)·Enc(b)·Enc(a)) = %v, %v; want 2a + b", sum, err)
	}
	if _, err := e.Encrypt(k.N, rd); err != ErrPlaintextRange {
		t.Fatalf("m = n: %v, want ErrPlaintextRange", err)
	}
	if e2, _ := k.Encrypter(); e2 != e {
		t.Fatal("a second Encrypter for the same key rebuilt the table")
	}
}

func TestWindow(t *testing.T) {
	a := []byte{0xb5, 0x3c, 0x01} // big-endian 0xb53c01
	v := new(big.Int).SetBytes(a)
	for lo := 0; lo < 30; lo++ {
		for w := 1; w <= 7; w++ {
			want := new(big.Int).Rsh(v, uint(lo))
			want.And(want, big.NewInt(1<<w-1))
			if got := window(a, lo, w); int64(got) != want.Int64() {
				t.Fatalf("window(lo %d, w %d) = %d, want %d", lo, w, got, want.Int64())
			}
		}
	}
}
