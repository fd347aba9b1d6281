package experiment

import (
	"fmt"

	"github.com/trellis-fl/trellis/config"
	"github.com/trellis-fl/trellis/data"
	"github.com/trellis-fl/trellis/node"
	"github.com/trellis-fl/trellis/strategy"
	"github.com/trellis-fl/trellis/wire"
)

// evalRound is a node layer that only tells the node's rotating global
// test sample (data.Rotating) which round begins, so that the round's
// evaluation draws from (seed, node, round) however the node is driven
// (simulator, network, a restart from a checkpoint). It sends, takes and
// shows nothing; a layer, because a layer is what the node tells of a
// round's beginning.
type evalRound struct {
	sample *data.Rotating
}

// evalRoundVersion is the version of its (empty) snapshot.
const evalRoundVersion = 1

func (e *evalRound) Name() string { return "eval_sample" }

func (e *evalRound) Begin(r int, _ node.Neighborhood) error {
	e.sample.Round(r)
	return nil
}

func (e *evalRound) Phases() int                         { return 1 }
func (e *evalRound) Outbox(int) ([]*wire.Message, error) { return nil, nil }
func (e *evalRound) Observe(*wire.Message, error) error  { return nil }
func (e *evalRound) Owns(wire.Kind) bool                 { return false }
func (e *evalRound) Expects(int) []node.Expect           { return nil }
func (e *evalRound) End(*node.Ready) error               { return nil }
func (e *evalRound) See(*strategy.View)                  {}
func (e *evalRound) Snapshot() ([]byte, error)           { return []byte{evalRoundVersion}, nil }
func (e *evalRound) Handle(m *wire.Message) error {
	return fmt.Errorf("eval_sample: takes no messages (kind %v)", m.Kind)
}

func (e *evalRound) Restore(b []byte) error {
	if len(b) != 1 || b[0] != evalRoundVersion {
		return fmt.Errorf("eval_sample: a snapshot of %d bytes is not this layer's (version %d)", len(b), evalRoundVersion)
	}
	return nil
}

// EvalRecord is what a run's evaluated rounds measure, for its manifest:
// EvalEvery and FinalRounds as configured; Local, each node's local test
// split; GlobalSample "all", "first" (the first GlobalTest samples of the
// global test set, the same for every node and round), "rotating"
// (GlobalTest samples per node and evaluated round, drawn from (seed,
// node, round)) or "none"; Text says it in words.
type EvalRecord struct {
	EvalEvery    int    `json:"eval_every"`
	FinalRounds  int    `json:"final_rounds"`
	Local        string `json:"local"`
	GlobalSample string `json:"global_sample"`
	GlobalTest   int    `json:"global_test"`
	Text         string `json:"text"`
}

// EvalRecordOf is c's EvalRecord.
func EvalRecordOf(c config.Config) EvalRecord {
	r := EvalRecord{EvalEvery: c.EvalEvery, FinalRounds: c.FinalRounds, GlobalTest: c.Evaluation.GlobalTest,
		Local: "each node's local test split (partition.split's third fraction of its samples)"}
	switch {
	case c.Data.Dataset == "pamap2" || c.Evaluation.GlobalTest == 0:
		r.GlobalSample, r.Text = "none", "no global test evaluation"
	case c.Evaluation.GlobalTest < 0:
		r.GlobalSample, r.Text = "all", "every node on the whole global test set"
	case c.Evaluation.GlobalSample == "rotating":
		r.GlobalSample = "rotating"
		r.Text = fmt.Sprintf("each node on %d global test samples per evaluated round, another window of one shuffled order for each (seed, node, round): global accuracies are estimates from that many samples", c.Evaluation.GlobalTest)
	default:
		r.GlobalSample = "first"
		r.Text = fmt.Sprintf("every node on the first %d samples of the global test set (all of them if the set is smaller)", c.Evaluation.GlobalTest)
	}
	return r
}
