package report

import (
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/trellis-fl/trellis/rundir"
)

// Three honest node-rounds (clip 0.5 with BB; nothing acted; G_d 0.8),
// one Byzantine and one that received nothing: 1 of 3 clipped, 1 of 3
// bounded, 1 of 3 predicted by BB, mean clip factor 2.5/3.
func TestReadCorrections(t *testing.T) {
	lines := `{"node":0,"byzantine":false,"correction":{"clip_factor":0.5,"gd_factor":1,"prediction":"bb"}}
{"node":1,"byzantine":false,"correction":{"clip_factor":1,"gd_factor":1,"prediction":"previous"}}
{"node":2,"byzantine":false,"correction":{"clip_factor":1,"gd_factor":0.8,"prediction":"previous"}}
{"node":3,"byzantine":true,"correction":{"clip_factor":0.1,"gd_factor":0.1,"prediction":"bb"}}
{"node":4,"byzantine":false,"correction":{"clip_factor":0,"gd_factor":0,"prediction":"","empty":true}}
{"node":5,"byzantine":false}
`
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, rundir.MetricsFile), []byte(lines), 0o644); err != nil {
		t.Fatal(err)
	}
	st, err := readCorrections(dir)
	if err != nil {
		t.Fatal(err)
	}
	if st.n != 3 || st.clipped != 1 || st.gd != 1 || st.bb != 1 ||
		math.Abs(st.clipFactor-2.5) > 1e-12 || math.Abs(st.gdFactor-2.8) > 1e-12 {
		t.Errorf("stats %+v, want n 3, clipped 1, gd 1, bb 1, factor sums 2.5 and 2.8", st)
	}
}
