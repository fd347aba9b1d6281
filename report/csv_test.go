package report

import (
	"bytes"
	"testing"
)

func TestWriteCSV(t *testing.T) {
	// Sorted by label, nodes numerically, seed; shortest round-trip floats;
	// missing metrics empty.
	want := `label,nodes,seed,acc,loss
a,2,1,0.9,
a,10,1,0.84,0.5
a,10,2,0.86,0.7
b,2,1,0.6,1
b,2,2,0.7,1.2
b,2,3,0.8,1.1
b,10,1,0.5,1.5
b,10,2,0.7,
`
	var b bytes.Buffer
	if err := WriteCSV(&b, tinyRuns(), nil); err != nil {
		t.Fatal(err)
	}
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}

func TestWriteCSVQuotesAndOrder(t *testing.T) {
	runs := []RunResult{
		{Label: "x", Seed: 1, Final: map[string]float64{"acc": 1}},
		{Label: "median, f=1", Params: map[string]string{"k": "v"}, Seed: 18446744073709551615, Final: map[string]float64{"loss": 0.1}},
	}
	want := "label,k,seed,acc\n\"median, f=1\",v,18446744073709551615,\nx,,1,1\n"
	var b bytes.Buffer
	if err := WriteCSV(&b, runs, []string{"acc"}); err != nil {
		t.Fatal(err)
	}
	if b.String() != want {
		t.Errorf("got\n%q\nwant\n%q", b.String(), want)
	}
}
