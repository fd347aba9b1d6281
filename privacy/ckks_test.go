package privacy

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/tuneinsight/lattigo/v6/core/rlwe"
	"github.com/tuneinsight/lattigo/v6/multiparty"
)

func vecRelErr(got, want []float64) float64 {
	var num, den float64
	for i := range want {
		d := got[i] - want[i]
		num += d * d
		den += want[i] * want[i]
	}
	return math.Sqrt(num / den)
}

// A receiver and its four neighbours make a collective key
// (no party holds its secret); the neighbours' models are encrypted, their
// weighted average is computed on ciphertexts, and decrypted with every
// party's share it matches the plain average within 1e-4 relative error.
// Without any one share — a neighbour's or the receiver's own — or with the
// receiver's key share alone, the result is noise.
func TestCKKSThresholdWeightedAverage(t *testing.T) {
	g, err := NewCKKSGroup(CKKSParams, []byte("trellis test crs"))
	if err != nil {
		t.Fatal(err)
	}
	const parties, dim = 5, 10000 // three ciphertexts of 4096 slots
	ps := make([]*CKKSParty, parties)
	shares := make([]multiparty.PublicKeyGenShare, parties)
	for i := range ps {
		ps[i] = g.NewParty()
		shares[i] = ps[i].PublicKeyShare()
	}
	if err := g.SetPublicKey(shares); err != nil {
		t.Fatal(err)
	}
	recv := g.NewReceiver() // party 0's output key
	src := rand.New(rand.NewPCG(1, 2))
	w := []float64{0.1, 0.4, 0.2, 0.2, 0.1} // e.g. DMTT's q-weights, own first
	want := make([]float64, dim)
	var cts [][]*rlwe.Ciphertext
	for j := range parties {
		x := make([]float64, dim)
		for i := range x {
			x[i] = src.NormFloat64() * 0.1
			want[i] += w[j] * x[i]
		}
		c, err := g.Encrypt(x)
		if err != nil {
			t.Fatal(err)
		}
		cts = append(cts, c)
	}
	sum, err := g.WeightedSum(cts, w)
	if err != nil {
		t.Fatal(err)
	}
	decShares := func(skip int) [][]multiparty.KeySwitchShare {
		out := make([][]multiparty.KeySwitchShare, len(sum))
		for k, ct := range sum {
			for i, p := range ps {
				if i == skip {
					continue
				}
				var r *CKKSReceiver
				if i == 0 {
					r = recv
				}
				out[k] = append(out[k], p.DecryptionShare(ct, r))
			}
		}
		return out
	}
	got, err := recv.Decrypt(sum, decShares(-1), dim)
	if err != nil {
		t.Fatal(err)
	}
	e := vecRelErr(got, want)
	t.Logf("relative error %.3g; a ciphertext is %d bytes for %d values (%.1f× a float32 vector)",
		e, sum[0].BinarySize(), g.Slots(), float64(cts[0][0].BinarySize())/float64(4*g.Slots()))
	if e > 1e-4 {
		t.Fatalf("relative error %g, want ≤ 1e-4", e)
	}
	for _, skip := range []int{0, 3} {
		bad, err := recv.Decrypt(sum, decShares(skip), dim)
		if err != nil {
			t.Fatal(err)
		}
		if e := vecRelErr(bad, want); !(e > 0.5) {
			t.Errorf("without party %d's share: relative error %g, the result should stay hidden", skip, e)
		}
	}
	// One party's own secret-key share decrypts nothing.
	alone := &CKKSReceiver{g: g, sk: ps[0].sk}
	own, err := alone.Decrypt(sum, make([][]multiparty.KeySwitchShare, len(sum)), dim)
	if err == nil {
		if e := vecRelErr(own, want); !(e > 0.5) {
			t.Errorf("party 0 alone: relative error %g", e)
		}
	}
	direct := rlwe.NewDecryptor(g.Params, ps[0].sk).DecryptNew(sum[0])
	vals := make([]float64, g.Slots())
	if err := g.enc.Decode(direct, vals); err != nil {
		t.Fatal(err)
	}
	if e := vecRelErr(vals, want[:g.Slots()]); !(e > 0.5) {
		t.Errorf("decrypting with one party's key share: relative error %g", e)
	}
}
