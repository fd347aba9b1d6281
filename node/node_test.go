package node_test

import (
	"math"
	"testing"

	"github.com/trellis-fl/trellis/agreement"
	"github.com/trellis-fl/trellis/nn"
	"github.com/trellis-fl/trellis/node"
	"github.com/trellis-fl/trellis/node/internal/nodetest"
	"github.com/trellis-fl/trellis/strategy"
	"github.com/trellis-fl/trellis/wire"
)

// recorder is a strategy that remembers what reached Combine.
type recorder struct {
	strategy.FedAvg
	seen []strategy.Incoming
}

func (r *recorder) Combine(v *strategy.View, in []strategy.Incoming) (map[int]float64, error) {
	r.seen = append(r.seen[:0], in...)
	return r.FedAvg.Combine(v, in)
}

func TestOnlyValidMessagesReachTheStrategy(t *testing.T) {
	ids, dir := wire.SimIdentities(7, 3)
	rec := &recorder{}
	n := nodetest.NewNode(t, 0, ids, dir, rec)
	peer := nodetest.NewNode(t, 1, ids, dir, &strategy.FedAvg{})
	hood := node.Neighborhood{In: []int{1, 2}, InDegree: []int{2, 2}, Degree: 2}
	nodetest.Begin(t, 1, hood, n, peer)
	out := nodetest.Outbox(t, peer)
	if len(out) != 1 || out[0].To != wire.Broadcast {
		t.Fatalf("outbox: %v", out)
	}
	good := out[0]
	seq := uint64(10)
	bad := func(edit func(m *wire.Message), resign bool) *wire.Message {
		m := *good
		m.Payload.Data = append([]float32(nil), good.Payload.Data...)
		edit(&m)
		if resign {
			seq++
			m.Seq = seq
			if err := wire.Sign(&m, ids[1]); err != nil {
				t.Fatal(err)
			}
		}
		return &m
	}
	rejects := []*wire.Message{
		bad(func(m *wire.Message) { m.Payload.Data[0] = float32(math.NaN()) }, true),   // non-finite
		bad(func(m *wire.Message) { m.Payload.Data = m.Payload.Data[:3] }, true),       // wrong length
		bad(func(m *wire.Message) { m.Payload.Data[1] += 1; m.Seq = 99 }, false),       // bad signature
		bad(func(m *wire.Message) { m.Round = 0 }, true),                               // stale round
		bad(func(m *wire.Message) { m.To = 2 }, true),                                  // not for node 0
		bad(func(m *wire.Message) { m.From = 9 }, false),                               // unknown sender
		bad(func(m *wire.Message) { m.Payload.Data[2] = float32(math.Inf(-1)) }, true), // -Inf
	}
	// The valid message goes first: the validator consumes a sequence
	// number with every correctly signed message, even one whose content
	// it then refuses.
	if err := n.Step(good); err != nil {
		t.Fatalf("valid message refused: %v", err)
	}
	for i, m := range rejects {
		if err := n.Step(m); err == nil {
			t.Errorf("bad message %d accepted", i)
		}
	}
	nodetest.Outbox(t, n)
	rd := nodetest.End(t, n, node.EndOptions{})
	if len(rec.seen) != 1 || rec.seen[0].From != 1 {
		t.Fatalf("strategy saw %d messages, want only the valid one", len(rec.seen))
	}
	if rd.Rejected != len(rejects) {
		t.Errorf("Ready.Rejected = %d, want %d", rd.Rejected, len(rejects))
	}
	want := map[node.Rejection]bool{
		// A wrong length is refused by its size before the signature is
		// checked, a sender outside the round's in-neighbours (here one
		// outside the directory too) before anything else.
		{1, "non_finite", 2}: true, {1, node.ReasonWrongSize, 1}: true, {1, "bad_signature", 1}: true,
		{1, "stale_round", 1}: true, {1, "wrong_recipient", 1}: true, {9, node.ReasonNotNeighbor, 1}: true,
	}
	if len(rd.Rejections) != len(want) {
		t.Fatalf("rejections %+v, want %v", rd.Rejections, want)
	}
	for _, r := range rd.Rejections {
		if !want[r] {
			t.Errorf("rejection %+v not expected (want %v)", r, want)
		}
	}
	if rd.Weights[1] != 0.5 || !rd.Combined || !rd.Trained || rd.Train.Steps != 1 || rd.Eval != nil {
		t.Errorf("ready %+v: want FedAvg's weight 1/2 for node 1, trained one step, no evaluation", rd)
	}
}

func TestConfigErrors(t *testing.T) {
	ids, dir := wire.SimIdentities(7, 2)
	if _, err := node.New(node.Config{ID: 0}); err == nil {
		t.Error("empty config accepted")
	}
	m, _ := nn.Build(nn.Spec{Kind: "logreg", Input: []int{2}, Classes: 2}, 1, nn.Options{Batch: 4})
	opt, _ := nn.NewOptimizer(nn.OptimizerSpec{LR: 0.1}, m.NumParams())
	d := &nodetest.Data{X: []float32{1, 0}, Y: []int{0}}
	_, err := node.New(node.Config{ID: 0, Model: m, Optimizer: opt, Strategy: strategy.Local{}, TrainData: d, Test: d,
		Identity: ids[1], Directory: dir})
	if err == nil {
		t.Error("a node holding another node's identity was accepted")
	}
}

func TestTrainingIsReproducible(t *testing.T) {
	ids, dir := wire.SimIdentities(7, 1)
	var first []float32
	for range 2 {
		n := nodetest.NewNode(t, 0, ids, dir, strategy.Local{})
		for r := range 3 {
			nodetest.Begin(t, r, node.Neighborhood{}, n)
			nodetest.Outbox(t, n)
			nodetest.End(t, n, node.EndOptions{})
		}
		if first == nil {
			first = append([]float32(nil), n.Model().Params()...)
			continue
		}
		for i, v := range n.Model().Params() {
			if v != first[i] {
				t.Fatal("same seed, different parameters")
			}
		}
	}
}

// TestValidateReadsTheFirstSamplesAndRestoresTheModel: View.Validate gives
// the outputs of the parameters it is handed on the first n validation
// samples (batch 4, n = 3: a partial batch), with their labels, and leaves
// the node's model as it was.
func TestValidateReadsTheFirstSamplesAndRestoresTheModel(t *testing.T) {
	ids, dir := wire.SimIdentities(7, 1)
	n := nodetest.NewNode(t, 0, ids, dir, &strategy.FedAvg{})
	if err := node.View(n).Validate(n.Model().Params(), 3, &agreement.Outputs{}); err == nil {
		t.Error("no validation split: no error")
	}
	node.SetVal(n, &nodetest.Data{X: []float32{1, 0, 0, 1, 1, 1, -1, 0, 2, 2}, Y: []int{0, 1, 1, 0, 1}})
	own := append([]float32(nil), n.Model().Params()...)
	// logreg 2→2: W = [[1, 0], [0, 1]], b = 0: logits are the inputs.
	params := []float32{1, 0, 0, 1, 0, 0}
	var o agreement.Outputs
	if err := node.View(n).Validate(params, 3, &o); err != nil {
		t.Fatal(err)
	}
	if o.N != 3 || o.Classes != 2 || o.Dim != 2 || len(o.Labels) != 3 || o.Labels[2] != 1 || o.Vacuity != nil {
		t.Fatalf("outputs %+v", o)
	}
	for i, x := range [][2]float64{{1, 0}, {0, 1}, {1, 1}} {
		p0 := 1 / (1 + math.Exp(x[1]-x[0]))
		if math.Abs(float64(o.Probs[2*i])-p0) > 1e-6 || o.Features[2*i] != float32(x[0]) {
			t.Errorf("sample %d: probs %v features %v", i, o.Probs[2*i:2*i+2], o.Features[2*i:2*i+2])
		}
	}
	for i, v := range n.Model().Params() {
		if v != own[i] {
			t.Fatal("the node's model changed")
		}
	}
	if err := node.View(n).Validate(params[:2], 3, &o); err == nil {
		t.Error("short parameters: no error")
	}
}
