package report

import (
	"bytes"
	"fmt"
	"path/filepath"

	"github.com/trellis-fl/trellis/config"
	"github.com/trellis-fl/trellis/metrics"
	"github.com/trellis-fl/trellis/rundir"
)

// correctionStat counts, over one run's honest node-rounds that received
// a neighbour direction, how often R-DPFL's mechanisms acted.
type correctionStat struct {
	run                  string
	n, clipped, gd, bb   int
	clipFactor, gdFactor float64
}

// correctionReport returns a Markdown section with, per run under dir whose
// nodes recorded R-DPFL's correction (metrics.NodeRound.Correction), how
// often the adaptive deviation clip and the G_d bound changed the
// neighbourhood direction and how often the Barzilai–Borwein prediction
// was in use, over honest nodes' rounds (to show where each
// method's mechanism acts: an ablation that ties cannot tell whether a
// mechanism is idle or useless). "" when no run recorded it.
func correctionReport(dir string) (string, error) {
	var stats []correctionStat
	err := eachRun(dir, rundir.MetricsFile, func(p string, _ config.Config) error {
		st, err := readCorrections(p)
		if err != nil || st.n == 0 {
			return err
		}
		if st.run, err = filepath.Rel(dir, p); err != nil {
			return err
		}
		stats = append(stats, st)
		return nil
	})
	if err != nil || len(stats) == 0 {
		return "", err
	}
	var md bytes.Buffer
	fmt.Fprintf(&md, "\n## R-DPFL's correction at work\n\n")
	fmt.Fprintf(&md, "Over honest nodes' rounds that received neighbour directions: how often the adaptive clip\n")
	fmt.Fprintf(&md, "(‖Δ‖ > τ) and the G_d bound changed the direction, their mean factors (1 = never acted), and\n")
	fmt.Fprintf(&md, "how often the Barzilai–Borwein prediction was in use (shares as fractions of the node-rounds).\n\n")
	fmt.Fprintf(&md, "| run | node-rounds | clip acted | mean clip factor | G_d acted | mean G_d factor | BB prediction |\n")
	fmt.Fprintf(&md, "|---|---:|---:|---:|---:|---:|---:|\n")
	for _, s := range stats {
		n := float64(s.n)
		fmt.Fprintf(&md, "| %s | %d | %.4f | %.3f | %.4f | %.3f | %.4f |\n", s.run, s.n,
			float64(s.clipped)/n, s.clipFactor/n, float64(s.gd)/n, s.gdFactor/n, float64(s.bb)/n)
	}
	return md.String(), nil
}

// readCorrections counts the honest corrections of the run in dir.
func readCorrections(dir string) (correctionStat, error) {
	var st correctionStat
	err := rundir.EachHonestNode(dir, "correction", func(n *metrics.NodeRound) {
		c := n.Correction
		if c == nil || c.Empty {
			return // nothing received
		}
		st.n++
		st.clipFactor += c.ClipFactor
		st.gdFactor += c.GdFactor
		if c.ClipFactor < 1 {
			st.clipped++
		}
		if c.GdFactor < 1 {
			st.gd++
		}
		if c.Prediction == "bb" {
			st.bb++
		}
	})
	return st, err
}
