package wire

import (
	"bytes"
	"testing"
)

// FuzzDecode feeds arbitrary bytes to Decode and Validator. Properties: no
// input panics; a successful decode re-encodes to exactly the input (the
// encoding is canonical); and once the message is made current, addressed
// and re-signed by its sender, Check never blames the parts that were fixed,
// which drives the fuzzer into the content checks (length, finiteness,
// claim structure and claim signature).
//
// Run with a count, not a duration (a Go fuzz coordinator bug):
//
//	go test ./wire -run '^$' -fuzz FuzzDecode -fuzztime=200000x
func FuzzDecode(f *testing.F) {
	for _, m := range corpusMessages(f) {
		b, err := AppendEncode(nil, m.msg)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	ids, dir := SimIdentities(testSeed, 4) // own copies: fuzz workers run in parallel
	lim := Limits{MaxFloats: 1 << 16, MaxNeighbors: 256}
	f.Fuzz(func(t *testing.T, b []byte) {
		var m Message
		if err := DecodeLimited(b, &m, lim); err != nil {
			if ReasonOf(err) == None {
				t.Fatalf("untyped decode error %v", err)
			}
			v, _ := NewValidator(ValidatorConfig{Directory: dir, Limits: lim})
			v.Receive(b, &m)
			return
		}
		if again, err := AppendEncode(nil, &m); err != nil || !bytes.Equal(again, b) {
			t.Fatalf("re-encoding: %v\n got % x\nwant % x", err, again, b)
		}
		v, err := NewValidator(ValidatorConfig{Self: 0, Directory: dir, Round: m.Round, PayloadLen: 4, Limits: lim})
		if err != nil {
			t.Fatal(err)
		}
		if v.Receive(b, &m) == nil && !Verify(&m, mustKey(dir, m.From)) {
			t.Fatal("accepted an unverifiable message")
		}
		if int(m.From) >= len(ids) {
			return
		}
		m.To = 0
		if err := Sign(&m, ids[m.From]); err != nil {
			t.Fatal(err)
		}
		v, _ = NewValidator(ValidatorConfig{Self: 0, Directory: dir, Round: m.Round, PayloadLen: 4, Limits: lim})
		switch err := v.Check(&m); ReasonOf(err) {
		case BadSignature, WrongRecipient, UnknownSender, StaleRound, FutureRound, Replay, Malformed, BadVersion, UnknownKind, Oversize:
			t.Fatalf("re-signed, addressed, current message refused: %v", err)
		case None:
			if err != nil {
				t.Fatalf("untyped check error %v", err)
			}
			if m.Kind == KindVector && (len(m.Payload.Data) != 4 || firstNonFinite(m.Payload.Data) >= 0) {
				t.Fatal("accepted a bad vector")
			}
			if m.Kind == KindClaim && !VerifyClaim(&m.Claim, mustKey(dir, m.Claim.Source)) {
				t.Fatal("accepted a claim with a bad signature")
			}
		}
		if c := v.Counts(m.From); c.Total()+c.Accepted != 1 {
			t.Fatalf("one check counted %+v", c)
		}
	})
}

func mustKey(d *Directory, id uint32) []byte {
	k, ok := d.Key(id)
	if !ok {
		return make([]byte, 32) // verifies nothing
	}
	return k
}
