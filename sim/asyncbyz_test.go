package sim

import (
	"slices"
	"testing"

	"github.com/trellis-fl/trellis/adversary"
	"github.com/trellis-fl/trellis/attack"
	"github.com/trellis-fl/trellis/strategy"
	"github.com/trellis-fl/trellis/topology"
)

// gotInput is one input an asynchronous strategy combined, with its
// vector.
type gotInput struct {
	node, step, from, staleness int
	vec                         []float32
}

// vecSpy is async_mean recording the inputs of each Combine and the
// models its node shares (by step).
type vecSpy struct {
	strategy.AsyncMean
	id     int
	inputs *[]gotInput
	shared map[int][]float32
}

func (s *vecSpy) AsyncInputs() bool { return true }
func (s *vecSpy) Share(v *strategy.View) []strategy.Outgoing {
	out := s.AsyncMean.Share(v)
	s.shared[v.Round] = slices.Clone(out[0].Vector)
	return out
}
func (s *vecSpy) Combine(v *strategy.View, in []strategy.Incoming) (map[int]float64, error) {
	for _, m := range in {
		*s.inputs = append(*s.inputs, gotInput{v.ID, v.Round, m.From, m.Staleness, slices.Clone(m.Vector)})
	}
	return s.AsyncMean.Combine(v, in)
}

// A Byzantine node flooding its neighbours with steps 100 times as fast
// as theirs: every receiver combines at most one of its vectors a step
// (the node keeps the newest step's set per sender), and the driver's
// mailbox of a training node holds at most one step's messages of it
// (here 1), besides the honest ones (at most 2 a sender: a sender
// ahead of the receiver by less than a step) — where keeping every
// arrival would hold about 100.
func TestAsyncFloodIsBounded(t *testing.T) {
	g, err := topology.KRegular(8, 4, 5)
	if err != nil {
		t.Fatal(err)
	}
	atk, err := attack.New("gaussian", attack.Params{Sigma: 1})
	if err != nil {
		t.Fatal(err)
	}
	peak := 0
	a := Async{Compute: Dist{"uniform", 0.9, 1.1}, Latency: Dist{"constant", 0.1, 0}, Slowdown: 1, Flood: 0.01,
		mailPeak: func(n int) { peak = max(peak, n) }}
	var inputs []gotInput
	_, steps := asyncRecordsAdv(t, g, 6, a, 100, 2, false, func() strategy.Strategy {
		return &vecSpy{inputs: &inputs, shared: map[int][]float32{}}
	}, adversary.Config{Byzantine: []int{3}, Attack: atk})
	flooded := 0
	for _, s := range steps {
		if s.Node == 3 {
			flooded++
		}
	}
	if flooded < 400 {
		t.Fatalf("the flooding node took %d steps, want about 600", flooded)
	}
	if bound := 2*4 + 1; peak > bound || peak == 0 {
		t.Fatalf("a mailbox held %d messages, want at most %d", peak, bound)
	}
	per := map[[2]int]int{}
	fromByz := 0
	for _, in := range inputs {
		if in.from == 3 {
			per[[2]int{in.node, in.step}]++
			fromByz++
		}
	}
	for k, c := range per {
		if c > 1 {
			t.Fatalf("node %d step %d combined %d vectors of the flooder", k[0], k[1], c)
		}
	}
	if fromByz == 0 {
		t.Fatal("no receiver combined the flooder's vectors")
	}
}

// Stale from step 2, no attack: with every step 1 s and links 0.1 s, a
// receiver's step r combines the Byzantine node's step r − 1, one step
// old (staleness 1: a fresh step number); its vector is what the node
// shared at step min(r − 1, 2), and the node's own model went on changing.
func TestAsyncStaleSendsTheSnapshot(t *testing.T) {
	g, err := topology.Complete(4)
	if err != nil {
		t.Fatal(err)
	}
	const b = 1
	a := Async{Compute: Dist{"constant", 1, 0}, Latency: Dist{"constant", 0.1, 0}, Slowdown: 1, Stale: adversary.Stale{On: true, Step: 2}}
	var inputs []gotInput
	spies := map[int]*vecSpy{}
	next := 0
	asyncRecordsAdv(t, g, 7, a, 100, 2, false, func() strategy.Strategy {
		s := &vecSpy{id: next, inputs: &inputs, shared: map[int][]float32{}}
		spies[next] = s
		next++
		return s
	}, adversary.Config{Byzantine: []int{b}})
	shared := spies[b].shared
	if len(shared) != 7 {
		t.Fatalf("the Byzantine node shared %d times", len(shared))
	}
	checked := 0
	for _, in := range inputs {
		if in.from != b {
			continue
		}
		sent := min(in.step-1, 2)
		if in.staleness != 1 || !slices.Equal(in.vec, shared[sent]) {
			t.Fatalf("node %d step %d: the Byzantine input (staleness %d) is not its step %d model", in.node, in.step, in.staleness, sent)
		}
		if in.step-1 > 2 && slices.Equal(shared[in.step-1], shared[2]) {
			t.Fatalf("the Byzantine node's model of step %d is its step 2 model: the test shows nothing", in.step-1)
		}
		checked++
	}
	if checked != 3*6 {
		t.Fatalf("%d Byzantine inputs, want 18 (3 receivers, steps 1 to 6)", checked)
	}
}

// BALANCE (its row has Async) runs in asynchronous timing against ALIE,
// every honest node taking its steps without diverging.
func TestAsyncBalanceUnderALIE(t *testing.T) {
	g, err := topology.KRegular(8, 4, 5)
	if err != nil {
		t.Fatal(err)
	}
	atk, err := attack.New("alie", attack.Params{})
	if err != nil {
		t.Fatal(err)
	}
	a := Async{Compute: Dist{"uniform", 0.5, 1.5}, Latency: Dist{"constant", 0.2, 0}, Stragglers: 0.25, Slowdown: 3}
	_, steps := asyncRecordsAdv(t, g, 6, a, 100, 2, false, func() strategy.Strategy {
		s, err := strategy.New("balance", strategy.Params{})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}, adversary.Config{Byzantine: []int{1, 6}, Attack: atk})
	if len(steps) != 8*6 {
		t.Fatalf("%d step records, want 48", len(steps))
	}
	for _, s := range steps {
		if s.Diverged {
			t.Fatalf("node %d diverged at step %d", s.Node, s.Step)
		}
	}
}

// Step inflation (adversary.Config.Inflate): a Byzantine node numbering
// its messages 50 steps ahead of its own looks fresh to every receiver
// (staleness 0), where the same node's messages without it, and every
// honest neighbour's at the same pace, are a step old.
func TestAsyncInflatedStepsLookFresh(t *testing.T) {
	g, err := topology.Complete(4)
	if err != nil {
		t.Fatal(err)
	}
	const b = 1
	a := Async{Compute: Dist{"constant", 1, 0}, Latency: Dist{"constant", 0.1, 0}, Slowdown: 1}
	for _, inflate := range []int{0, 50} {
		var inputs []gotInput
		next := 0
		asyncRecordsAdv(t, g, 7, a, 100, 2, false, func() strategy.Strategy {
			s := &vecSpy{id: next, inputs: &inputs, shared: map[int][]float32{}}
			next++
			return s
		}, adversary.Config{Byzantine: []int{b}, Inflate: inflate})
		byz, honest := 0, 0
		for _, in := range inputs {
			want := 1
			if in.from == b {
				byz++
				if inflate > 0 {
					want = 0
				}
			} else {
				honest++
			}
			if in.staleness != want {
				t.Fatalf("inflate %d: node %d step %d: node %d's input is %d steps old, want %d", inflate, in.node, in.step, in.from, in.staleness, want)
			}
		}
		if byz != 3*6 || honest == 0 {
			t.Fatalf("inflate %d: %d Byzantine inputs (want 18) and %d honest", inflate, byz, honest)
		}
	}
}
