package experiment

import (
	"testing"

	"github.com/trellis-fl/trellis/config"
	"github.com/trellis-fl/trellis/configs"
	"github.com/trellis-fl/trellis/metrics"
)

// TestDMTTQuickPresetRunsShort runs every variant of the quick main
// comparison for 2 rounds on 10 nodes: a smoke test of the committed preset.
func TestDMTTQuickPresetRunsShort(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end runs")
	}
	b, ok := configs.Read("dmtt/main-quick")
	if !ok {
		t.Fatal("preset dmtt/main-quick missing")
	}
	c, err := config.Parse(b, "dmtt/main-quick")
	if err != nil {
		t.Fatal(err)
	}
	runs, _, err := c.Expand()
	if err != nil {
		t.Fatal(err)
	}
	labels := map[string]bool{}
	for _, r := range runs {
		rc := r.Config
		if rc.Adversary.Fraction != 0.5 {
			continue
		}
		rc.Nodes, rc.Rounds, rc.Data.Samples = 10, 2, 1000
		rc.Model.Hidden = []int{16}
		s, err := SetupOf(rc, loadMNIST(t))
		if err != nil {
			t.Fatalf("%s: %v", rc.Label(), err)
		}
		var final *metrics.Round
		if err := s.Run(t.Context(), metrics.SinkFunc(func(r *metrics.Round) error { final = r; return nil })); err != nil {
			t.Fatalf("%s: %v", rc.Label(), err)
		}
		labels[rc.Label()] = true
		if rc.Strategy.Name == "dmtt" && (final.Trust == nil || final.DeltaMax != 0) {
			t.Errorf("dmtt: trust diagnostics %v, delta_max %v", final.Trust, final.DeltaMax)
		}
	}
	if len(labels) != 8 {
		t.Errorf("ran %d methods, want 8: %v", len(labels), labels)
	}
}
