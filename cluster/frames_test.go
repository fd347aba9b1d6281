package cluster

import (
	"reflect"
	"testing"

	"github.com/trellis-fl/trellis/node"
	"github.com/trellis-fl/trellis/strategy"
	"github.com/trellis-fl/trellis/wire"
)

// A record carries every kind of report a Ready holds to the monitor
// unchanged (gob, interface values).
func TestRecordCarriesEveryReport(t *testing.T) {
	ids, dir := wire.SimIdentities(1, 2)
	rd := node.Ready{Round: 3, Reports: []node.Report{
		&node.TrustReport{Trust: []float64{0, 0.5}, Screened: []int{1}, ClaimsAccepted: 2},
		&node.PrivacyReport{Mode: "node", Epsilon: 1.25, Delta: 1e-5, Releases: 4},
		&node.SecAggReport{Members: 3, Survivors: 2, Weights: map[int]float64{1: 0.5}},
		strategy.Scores{{From: 1, Kind: "ntk", Value: 0.75}},
		&strategy.RDPFLRound{Predicted: "bb", ClipFactor: 0.5},
	}}
	b, err := encodeRecord(&Record{Node: 1, Round: 3, Ready: rd}, ids[1])
	if err != nil {
		t.Fatal(err)
	}
	got, err := decodeRecord(b, dir)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.Ready.Reports, rd.Reports) {
		t.Fatalf("reports after the monitor's decoding:\n %#v\nwant\n %#v", got.Ready.Reports, rd.Reports)
	}
}
