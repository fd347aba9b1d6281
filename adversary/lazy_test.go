package adversary

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/trellis-fl/trellis/attack"
	"github.com/trellis-fl/trellis/nn"
	"github.com/trellis-fl/trellis/topology"
	"github.com/trellis-fl/trellis/wire"
)

// lazyPhase is a phase's outbox for TestLazyMakesWhatRewriteSends: every
// node sends a key (a privacy layer's message, sent before the vectors),
// broadcasts a model and sends an update to its first out-neighbour; the
// payloads change with the round, so history-using attacks see history.
func lazyPhase(g *topology.Graph, round, d int) [][]*wire.Message {
	outbox := make([][]*wire.Message, g.N())
	for j := range outbox {
		model := make([]float32, d)
		update := make([]float32, d)
		for k := range model {
			model[k] = float32((j*7+k*3+round*5)%11) - 5
			update[k] = float32((j*5+k+round*3)%7) - 3
		}
		outbox[j] = []*wire.Message{
			{Header: wire.Header{Kind: wire.KindKey, From: uint32(j), To: wire.Broadcast, Round: uint64(round)},
				Blob: wire.Blob{Data: make([]byte, wire.KeySize)}},
			{Header: wire.Header{Kind: wire.KindVector, From: uint32(j), To: wire.Broadcast, Round: uint64(round)},
				Payload: wire.Payload{Tag: "model", Data: model}},
			{Header: wire.Header{Kind: wire.KindVector, From: uint32(j), To: uint32(g.Out(j)[0]), Round: uint64(round)},
				Payload: wire.Payload{Tag: "update", Data: update}},
		}
	}
	return outbox
}

func encoded(t *testing.T, m *wire.Message) string {
	t.Helper()
	b, err := wire.AppendEncode(nil, m)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestLazyMakesWhatRewriteSends: for every kind of attack (local, noisy,
// omniscient, history-using, receiver-dependent), with and without
// SameForAll, over four rounds, the messages a Lazy makes — concurrently,
// in reverse order, some never asked for (a dropped link) — are the bytes
// Rewrite sends (payloads, numbers, signatures), the claims and a privacy
// layer's messages left in the outbox are Rewrite's, and Bytes is the
// encoded size of the vectors Rewrite sends. The links to node 0 are
// never made in rounds 0 and 2: a history-using attack must still leave
// the history Rewrite leaves (Close crafts them), or the next round's
// messages to node 0 differ.
func TestLazyMakesWhatRewriteSends(t *testing.T) {
	const n, d = 9, 6
	g, err := topology.KRegular(n, 4, 3)
	if err != nil {
		t.Fatal(err)
	}
	ids, _ := wire.SimIdentities(21, n)
	spec := nn.Spec{Kind: "logreg", Input: []int{2}, Classes: 2} // 6 parameters, for random
	for _, name := range []string{"gaussian", "sign_flip", "random", "alie", "min_max", "adaptive", "adaptive_receiver", "fang_trim", "dynamic"} {
		for _, same := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/same_for_all=%v", name, same), func(t *testing.T) {
				atk, err := attack.New(name, attack.Params{Sigma: 0.5, Model: &spec, Epsilon: 0.3})
				if err != nil {
					t.Fatal(err)
				}
				cfg := Config{Nodes: n, Byzantine: []int{1, 4, 6}, Attack: atk, SameForAll: same, Seed: 8}
				eager, err := New(cfg, ids, nil)
				if err != nil {
					t.Fatal(err)
				}
				lazy, err := New(cfg, ids, wire.NewDigestMemo())
				if err != nil {
					t.Fatal(err)
				}
				for round := range 4 {
					want := lazyPhase(g, round, d)
					if err := eager.Rewrite(round, g, want); err != nil {
						t.Fatal(err)
					}
					got := lazyPhase(g, round, d)
					lz, err := lazy.RewriteLazy(round, g, got)
					if err != nil {
						t.Fatal(err)
					}
					if err := lazy.Rewrite(round, g, lazyPhase(g, round, d)); err == nil || !strings.Contains(err.Error(), "still open") {
						t.Errorf("a Rewrite while a lazy phase is open: %v, want an error", err)
					}
					skip := round%2 == 0
					var some *Pending
					for _, b := range cfg.Byzantine {
						some = compareLazy(t, g, lz, b, want[b], got[b], skip)
					}
					if err := lz.Close(); err != nil {
						t.Fatal(err)
					}
					if _, err := lz.Make(some, make([]float32, d)); err == nil {
						t.Error("Make after Close: no error")
					}
				}
			})
		}
	}
}

// compareLazy checks Byzantine node b's messages: what Rewrite sent (want)
// against what RewriteLazy left in the outbox (got) and what lz makes,
// made from four goroutines in reverse order, the links to node 0 left
// unmade when skip0. It returns one of the pending messages.
func compareLazy(t *testing.T, g *topology.Graph, lz *Lazy, b int, want, got []*wire.Message, skip0 bool) *Pending {
	t.Helper()
	var wantVecs []*wire.Message
	var wantBytes int
	k := 0
	for _, m := range want {
		if m.Kind != wire.KindVector {
			if k >= len(got) || encoded(t, got[k]) != encoded(t, m) {
				t.Fatalf("node %d: the outbox's message %d differs from Rewrite's", b, k)
			}
			k++
			continue
		}
		wantVecs = append(wantVecs, m)
		size, err := wire.EncodedSize(m)
		if err != nil {
			t.Fatal(err)
		}
		wantBytes += size
	}
	if k != len(got) {
		t.Fatalf("node %d: %d messages in the outbox, Rewrite's has %d before its vectors", b, len(got), k)
	}
	if bytes, err := lz.Bytes(b); err != nil || bytes != wantBytes {
		t.Fatalf("node %d: Bytes = %d (%v), Rewrite's vectors take %d", b, bytes, err, wantBytes)
	}
	var pending []*Pending
	for to := range g.N() {
		pending = append(pending, lz.Links(b, to)...)
	}
	if len(pending) != len(wantVecs) {
		t.Fatalf("node %d: %d pending vectors, Rewrite sent %d", b, len(pending), len(wantVecs))
	}
	slices.Reverse(pending)
	made := make([]*wire.Message, len(pending))
	var wg sync.WaitGroup
	errs := make([]error, len(pending))
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := w; k < len(pending); k += 4 {
				if skip0 && pending[k].To == 0 {
					continue
				}
				made[k], errs[k] = lz.Make(pending[k], make([]float32, pending[k].Len+w)) // a larger buffer is fine
			}
		}()
	}
	wg.Wait()
	for k, p := range pending {
		if errs[k] != nil {
			t.Fatal(errs[k])
		}
		if made[k] == nil {
			continue
		}
		i := slices.IndexFunc(wantVecs, func(m *wire.Message) bool { return m.To == p.To && m.Seq == p.Seq })
		if i < 0 {
			t.Fatalf("node %d: a pending vector to %d numbered %d that Rewrite did not send", b, p.To, p.Seq)
		}
		if encoded(t, made[k]) != encoded(t, wantVecs[i]) {
			t.Fatalf("node %d: the vector to %d numbered %d: made %v, Rewrite sent %v", b, p.To, p.Seq, made[k].Payload.Data, wantVecs[i].Payload.Data)
		}
	}
	return pending[0]
}
