package rundir

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/trellis-fl/trellis/metrics"
)

func liveRound(r int, w ...map[int]float64) *metrics.Round {
	return &metrics.Round{Round: r, Live: &metrics.Live{Weights: w}}
}

// The edges file: one line per round, [receiver, sender, weight] sorted,
// zero weights left out, a non-finite weight null, 6 significant digits;
// a round without Live is not written; it reads back.
func TestEdgeWriter(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, EdgesFile)
	e, err := newEdgeWriter(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	rounds := []*metrics.Round{
		liveRound(0, map[int]float64{2: 1.0 / 3, 1: 0, 0: 2.0 / 3}, nil, map[int]float64{0: 0.5, 1: math.NaN()}),
		{Round: 1}, // no Live: skipped
		liveRound(2, map[int]float64{1: -0.25}),
	}
	for _, r := range rounds {
		if err := e.Round(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	want := `{"round":0,"edges":[[0,0,0.666667],[0,2,0.333333],[2,0,0.5],[2,1,null]]}
{"round":2,"edges":[[0,1,-0.25]]}
`
	if string(b) != want {
		t.Fatalf("edges file:\n%s\nwant\n%s", b, want)
	}
	got, err := ReadEdges(dir)
	if err != nil || len(got) != 2 || got[1].Round != 2 || got[0].Edges[1] != [3]float64{0, 2, 0.333333} || !math.IsNaN(got[0].Edges[3][2]) {
		t.Fatalf("read back: %v %v", got, err)
	}
	if got, err := ReadEdges(t.TempDir()); got != nil || err != nil {
		t.Errorf("missing file: %v %v", got, err)
	}
}

// A resumed run keeps the lines of its first rounds on file, drops what
// follows (and a torn line), skips the rounds it kept and writes a round
// missing from the file when the replay hands it over.
func TestEdgeWriterResumes(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, EdgesFile)
	old := `{"round":0,"edges":[[0,1,1]]}
{"round":1,"edges":[[0,1,1]]}
{"round":2,"edges":[[0,1,1]]}
{"round":3,"ed`
	if err := os.WriteFile(path, []byte(old), 0o644); err != nil {
		t.Fatal(err)
	}
	e, err := newEdgeWriter(path, 2) // two rounds on file in the run's other files
	if err != nil {
		t.Fatal(err)
	}
	for r := range 4 {
		if err := e.Round(liveRound(r, map[int]float64{1: 0.5})); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	want := `{"round":0,"edges":[[0,1,1]]}
{"round":1,"edges":[[0,1,1]]}
{"round":2,"edges":[[0,1,0.5]]}
{"round":3,"edges":[[0,1,0.5]]}
`
	if string(b) != want {
		t.Fatalf("resumed file:\n%s\nwant\n%s", b, want)
	}

	// A file that lacks the rounds to keep (written without edges) gets
	// them from the replay.
	if err := os.WriteFile(path, []byte(`{"round":0,"edges":[]}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	e, err = newEdgeWriter(path, 3)
	if err != nil {
		t.Fatal(err)
	}
	for r := range 3 {
		if err := e.Round(liveRound(r, map[int]float64{1: 0.5})); err != nil {
			t.Fatal(err)
		}
	}
	e.Close()
	b, _ = os.ReadFile(path)
	if n := strings.Count(string(b), "\n"); n != 3 || !strings.HasPrefix(string(b), `{"round":0,"edges":[]}`) {
		t.Errorf("gap filled from the replay:\n%s", b)
	}
}
