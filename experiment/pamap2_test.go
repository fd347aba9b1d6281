package experiment

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/trellis-fl/trellis/config"
)

// TestLoadPAMAP2FromConfig: data.dataset = "pamap2" loads the protocol
// files of data.dir as windows with no global test set.
func TestLoadPAMAP2FromConfig(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	for row := range 400 {
		activity := 1
		if row >= 200 {
			activity = 4
		}
		fmt.Fprintf(&b, "%.2f %d 80", float64(row)/100, activity)
		for c := 3; c < 54; c++ {
			fmt.Fprintf(&b, " %g", float64((row*c)%17)/4)
		}
		b.WriteString("\n")
	}
	if err := os.WriteFile(filepath.Join(dir, "subject101.dat"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := config.Parse([]byte(fmt.Sprintf("[data]\ndataset = \"pamap2\"\ndir = %q\n", dir)), "t")
	if err != nil {
		t.Fatal(err)
	}
	tt, err := LoadData(c)
	if err != nil {
		t.Fatal(err)
	}
	if tt.Test != nil || tt.Train.Len() == 0 || tt.Train.NumClasses() != 12 {
		t.Fatalf("train %d windows of %d classes, test %v; want windows of the 12 protocol activities and no test set", tt.Train.Len(), tt.Train.NumClasses(), tt.Test)
	}
	if _, err := config.Parse([]byte("[data]\ndataset = \"pamap2\"\n"), "t"); err == nil || !strings.Contains(err.Error(), "data.dir") {
		t.Fatalf("pamap2 without data.dir: %v", err)
	}
}
