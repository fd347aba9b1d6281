package report

import (
	"path/filepath"
	"testing"
)

func TestHistograms(t *testing.T) {
	ch, err := Histograms([]HistGroup{
		{Label: "a", Values: []float64{0.1, 0.2, 0.2, 0.9, -3, 7}},
		{Label: "empty"},
	}, 10, 0, 1, 0.6, Figure{Title: "t"})
	if err != nil {
		t.Fatal(err)
	}
	if err := ch.Save(0, 0, filepath.Join(t.TempDir(), "h.png")); err != nil {
		t.Fatal(err)
	}
	if _, err := Histograms(nil, 0, 0, 1, 0.5, Figure{}); err == nil {
		t.Error("0 bins accepted")
	}
	if _, err := Histograms(nil, 5, 1, 1, 0.5, Figure{}); err == nil {
		t.Error("empty range accepted")
	}
}
