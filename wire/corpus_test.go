package wire

import (
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

var updateCorpus = flag.Bool("update-corpus", false, "rewrite testdata/fuzz/FuzzDecode from corpusMessages")

type corpusEntry struct {
	name string
	msg  *Message
}

// corpusMessages are the fuzz seeds: one valid message of each kind and
// shape, and near misses that reach each content check.
func corpusMessages(t testing.TB) []corpusEntry {
	vec := func(from uint32, data []float32, tag string) *Message {
		m := &Message{Header: Header{Kind: KindVector, From: from, To: 0, Round: 3, Seq: 1}, Payload: Payload{Tag: tag, Data: data}}
		mustSign(t, m, from)
		return m
	}
	cl := func(source, from uint32, nb []uint32, hop uint8) *Message {
		c := Claim{Source: source, Round: 3, Version: 2, Neighbors: nb}
		if err := SignClaim(&c, testIDs[source]); err != nil {
			t.Fatal(err)
		}
		c.Hop = hop
		m := &Message{Header: Header{Kind: KindClaim, From: from, To: Broadcast, Round: 3, Seq: 2}, Claim: c}
		mustSign(t, m, from)
		return m
	}
	ev := func(source, peer uint32, attested bool, hop uint8) Event {
		e := testEvent(t, source, peer, attested)
		e.Hop = hop // outside both signatures
		return e
	}
	return []corpusEntry{
		{"vector_valid", vec(1, []float32{1, -2, 0.5, 0}, "model")},
		{"vector_untagged", vec(2, []float32{1, 2, 3, 4}, "")},
		{"vector_empty", vec(3, nil, "g")},
		{"vector_nan", vec(1, []float32{1, float32(math.NaN()), 0, 0}, "grad")},
		{"vector_inf", vec(1, []float32{float32(math.Inf(-1)), 0, 0, 0}, "dir")},
		{"vector_wrong_length", vec(2, []float32{1, 2, 3}, "abc")},
		{"vector_unknown_sender", vec(9, []float32{1, 2, 3, 4}, "model")},
		{"claim_valid", cl(1, 1, []uint32{0, 2, 3}, 0)},
		{"claim_forwarded", cl(1, 2, []uint32{0, 2, 3}, 1)},
		{"claim_empty", cl(3, 3, nil, 0)},
		{"claim_unsorted", cl(2, 2, []uint32{3, 0}, 0)},
		{"claim_duplicate", cl(2, 2, []uint32{0, 0}, 0)},
		{"claim_self", cl(2, 2, []uint32{2}, 0)},
		{"claim_bad_hop", cl(1, 2, []uint32{0}, 0)},
		{"masked_valid", maskedMsg(t, 1, []uint32{0, 1, 2, 3})},
		{"key_valid", blobMsg(t, KindKey, 2, make([]byte, KeySize), "x25519")},
		{"key_bad_length", blobMsg(t, KindKey, 2, make([]byte, KeySize-1), "")},
		{"share_valid", blobMsg(t, KindShare, 3, []byte{1, 2, 3, 4, 5}, "seed")},
		{"cipher_valid", blobMsg(t, KindCipher, 1, []byte{9, 9, 9}, "")},
		{"event_valid", blobMsg(t, KindEvent, 1, AppendEvents(nil, []Event{ev(1, 2, true, 0), ev(2, 3, false, 1)}), "")},
		{"event_bad_hop", blobMsg(t, KindEvent, 1, AppendEvents(nil, []Event{ev(2, 3, false, 0)}), "")},
		{"event_short", blobMsg(t, KindEvent, 1, make([]byte, EventSize-4), "")},
	}
}

// TestFuzzCorpus keeps the stored seed corpus in step with corpusMessages
// (rewrite it with -update-corpus) and checks each stored seed decodes.
func TestFuzzCorpus(t *testing.T) {
	dir := filepath.Join("testdata", "fuzz", "FuzzDecode")
	for _, e := range corpusMessages(t) {
		b := encode(t, e.msg)
		want := fmt.Sprintf("go test fuzz v1\n[]byte(%s)\n", strconv.Quote(string(b)))
		path := filepath.Join(dir, e.name)
		if *updateCorpus {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (run go test ./wire -run TestFuzzCorpus -update-corpus)", err)
		}
		if string(got) != want {
			t.Fatalf("%s is out of date (run go test ./wire -run TestFuzzCorpus -update-corpus)", path)
		}
	}
}
