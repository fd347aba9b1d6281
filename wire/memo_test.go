package wire

import (
	"slices"
	"sync"
	"testing"
)

// memoValidator is node self's validator sharing memo.
func memoValidator(t *testing.T, self uint32, memo *DigestMemo) *Validator {
	t.Helper()
	v, err := NewValidator(ValidatorConfig{Self: self, Directory: testDir, Round: testRound, PayloadLen: testLen, Digests: memo})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// broadcastMsg is a signed broadcast vector from node 1.
func broadcastMsg(t *testing.T) *Message {
	t.Helper()
	m := &Message{Header: Header{Kind: KindVector, From: 1, To: Broadcast, Round: testRound, Seq: 1},
		Payload: Payload{Tag: "model", Data: payload()}}
	mustSign(t, m, 1)
	return m
}

// TestDigestMemoRefusesTamperedCopies: with the memo open, a receiver reuses
// another's digest of the same *Message, but a tampered copy is a new
// pointer and is hashed, and refused, on its own, whether its payload, its
// header or its signature changed.
func TestDigestMemoRefusesTamperedCopies(t *testing.T) {
	memo := NewDigestMemo()
	memo.Open()
	m := broadcastMsg(t)
	if err := memoValidator(t, 0, memo).Check(m); err != nil {
		t.Fatal(err)
	}
	tampered := map[string]func(c *Message){
		"payload": func(c *Message) {
			c.Payload.Data = slices.Clone(c.Payload.Data)
			c.Payload.Data[2] = 7
		},
		"tag":       func(c *Message) { c.Payload.Tag = "direction" },
		"seq":       func(c *Message) { c.Seq++ },
		"signature": func(c *Message) { c.Sig[5] ^= 1 },
	}
	for name, tamper := range tampered {
		c := *m
		tamper(&c)
		if err := memoValidator(t, 2, memo).Check(&c); ReasonOf(err) != BadSignature {
			t.Errorf("tampered %s with the memo open: %v, want a bad signature", name, err)
		}
	}
	if err := memoValidator(t, 3, memo).Check(m); err != nil {
		t.Fatalf("the original after the copies: %v", err)
	}
	if hits, misses := memo.Stats(); hits != 1 || misses != 1+uint64(len(tampered)) {
		t.Errorf("stats %d hits, %d misses; want 1 hit (the original's second receiver) and %d misses", hits, misses, 1+len(tampered))
	}
}

// TestDigestMemoForgetsOnClose: a closed memo is not consulted, and Close
// forgets, so a pointer whose message changed between phases is hashed
// anew.
func TestDigestMemoForgetsOnClose(t *testing.T) {
	memo := NewDigestMemo()
	m := broadcastMsg(t)
	if err := memoValidator(t, 0, memo).Check(m); err != nil {
		t.Fatal(err)
	}
	if hits, misses := memo.Stats(); hits+misses != 0 {
		t.Fatalf("a closed memo was used: %d hits, %d misses", hits, misses)
	}
	memo.Open()
	if err := memoValidator(t, 2, memo).Check(m); err != nil {
		t.Fatal(err)
	}
	memo.Close()
	m.Payload.Data[0] = 2 // the same struct, another message: a later phase's
	memo.Open()
	if err := memoValidator(t, 3, memo).Check(m); ReasonOf(err) != BadSignature {
		t.Errorf("a changed message after Close and Open: %v, want a bad signature", err)
	}
	// The digest covers everything but the signature, so the one the memo
	// now holds serves the message once its sender has signed it.
	mustSign(t, m, 1)
	if err := memoValidator(t, 0, memo).Check(m); err != nil {
		t.Errorf("signed after its digest was memoised: %v", err)
	}
}

// TestDigestMemoConcurrentReceivers: receivers on many goroutines checking
// the same messages compute each digest once and all accept.
func TestDigestMemoConcurrentReceivers(t *testing.T) {
	memo := NewDigestMemo()
	memo.Open()
	defer memo.Close()
	msgs := make([]*Message, 20)
	for i := range msgs {
		msgs[i] = broadcastMsg(t)
		msgs[i].Seq = uint64(i + 1)
		mustSign(t, msgs[i], 1)
	}
	receivers := []uint32{0, 2, 3, 0, 2, 3}
	errs := make([]error, len(receivers))
	var wg sync.WaitGroup
	for k, self := range receivers {
		v := memoValidator(t, self, memo)
		wg.Go(func() {
			for _, m := range msgs {
				if err := v.Check(m); err != nil {
					errs[k] = err
					return
				}
			}
		})
	}
	wg.Wait()
	for k, err := range errs {
		if err != nil {
			t.Errorf("receiver %d: %v", k, err)
		}
	}
	if hits, misses := memo.Stats(); misses != uint64(len(msgs)) || hits != uint64((len(receivers)-1)*len(msgs)) {
		t.Errorf("%d hits, %d misses; want every digest computed once", hits, misses)
	}
}

// TestSignNotedServesReceivers: a message signed through SignNoted is
// verified from its note, without one digest computed, until Close; a
// message changed and signed again notes its new digest; after Close the
// notes are gone.
func TestSignNotedServesReceivers(t *testing.T) {
	memo := NewDigestMemo()
	m := &Message{Header: Header{Kind: KindVector, From: 1, To: Broadcast, Round: testRound, Seq: 1},
		Payload: Payload{Tag: "model", Data: payload()}}
	if err := SignNoted(m, testIDs[1], memo); err != nil {
		t.Fatal(err)
	}
	memo.Open()
	for _, self := range []uint32{0, 2, 3} {
		if err := memoValidator(t, self, memo).Check(m); err != nil {
			t.Fatalf("receiver %d: %v", self, err)
		}
	}
	if hits, misses := memo.Stats(); hits != 3 || misses != 0 {
		t.Errorf("%d hits, %d misses; want all 3 receivers served by the note", hits, misses)
	}
	memo.Close()
	for _, v := range []float32{9, 10} { // the second note must replace the first
		m.Payload.Data[0] = v
		if err := SignNoted(m, testIDs[1], memo); err != nil {
			t.Fatal(err)
		}
	}
	memo.Open()
	if err := memoValidator(t, 0, memo).Check(m); err != nil {
		t.Errorf("re-signed message: %v", err)
	}
	memo.Close()
	if len(memo.m) != 0 {
		t.Errorf("Close left %d entries", len(memo.m))
	}
}
