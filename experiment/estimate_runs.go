package experiment

import (
	"fmt"
	"math"
	"strings"

	"github.com/trellis-fl/trellis/config"
	"github.com/trellis-fl/trellis/data"
)

// Shapes remembers the dataset shapes an estimate loaded, so a sweep loads
// each dataset once; datasets whose shape is known without loading them
// (KnownShape) are never loaded. The zero value is not usable: make one
// with Shapes{}.
type Shapes map[string]DataShape

// Of is the shape of c's dataset.
func (s Shapes) Of(c config.Config) (DataShape, error) {
	if d, ok := KnownShape(c); ok {
		return d, nil
	}
	key := c.Data.Dataset + "\x00" + c.Data.Dir
	if d, ok := s[key]; ok {
		return d, nil
	}
	d, err := headerShape(c)
	if err != nil {
		return DataShape{}, err
	}
	s[key] = d
	return d, nil
}

// RunEstimate is one run of a sweep with its estimate, and the shape and
// config it was made from (for CheckMemory and Probe; not in its JSON).
type RunEstimate struct {
	// Dir is the run's directory in the sweep ("" for a single run).
	Dir      string        `json:"dir,omitempty"`
	Estimate Estimate      `json:"estimate"`
	Shape    DataShape     `json:"-"`
	Config   config.Config `json:"-"`
}

// EstimateSweep estimates the runs of c's sweep that shard owns, in
// Expand's order.
func EstimateSweep(c config.Config, shard Shard) ([]RunEstimate, error) {
	runs, _, err := c.Expand()
	if err != nil {
		return nil, err
	}
	ds := Shapes{}
	var out []RunEstimate
	for k, r := range runs {
		if !shard.Owns(k) {
			continue
		}
		d, err := ds.Of(r.Config)
		if err != nil {
			return nil, err
		}
		e, err := EstimateWith(r.Config, d)
		if err != nil {
			return nil, fmt.Errorf("run %s: %w", r.Dir, err)
		}
		dir := r.Dir
		if len(runs) == 1 {
			dir = ""
		}
		out = append(out, RunEstimate{Dir: dir, Estimate: e, Shape: d, Config: r.Config})
	}
	return out, nil
}

// Largest is the index of the run with the most live memory (the first of
// equals; 0 for none): the runs of a sweep run one after another, so it
// sets the sweep's peak.
func Largest(es []RunEstimate) int {
	best := 0
	for i, e := range es {
		if e.Estimate.Live > es[best].Estimate.Live {
			best = i
		}
	}
	return best
}

// SweepEstimateText renders a sweep's estimates: with several runs a table
// of them (the first 40), the largest marked, then the largest's estimate
// in full.
func SweepEstimateText(es []RunEstimate) string {
	var b strings.Builder
	big := Largest(es)
	if len(es) > 1 {
		fmt.Fprintf(&b, "%d runs (run one after another: the largest sets the peak)\n", len(es))
		width := 3
		for _, e := range es {
			width = max(width, len(e.Dir))
		}
		fmt.Fprintf(&b, "  %-*s %7s %13s %10s %10s\n", width, "run", "nodes", "parameters", "live", "peak")
		const most = 40
		for i, e := range es {
			if i == most && len(es) > most+1 {
				fmt.Fprintf(&b, "  … %d more\n", len(es)-most)
				break
			}
			mark := ""
			if i == big {
				mark = "  ← largest"
			}
			fmt.Fprintf(&b, "  %-*s %7d %13s %10s %10s%s\n", width, e.Dir, e.Estimate.Nodes, group(e.Estimate.Params),
				bytesText(e.Estimate.Live), bytesText(e.Estimate.Peak), mark)
		}
		fmt.Fprintf(&b, "\nthe largest, %s:\n", es[big].Dir)
	}
	if len(es) > 0 {
		b.WriteString(es[big].Estimate.Text())
	}
	return b.String()
}

// MemoryText is the available memory's line, or why it is unknown.
func MemoryText(m Memory, err error) string {
	if err != nil {
		return fmt.Sprintf("available memory: unknown (%v)", err)
	}
	return m.Text()
}

// Text renders a probe of the run estimated by e: the measured times, the
// whole run's projection, the peak resident set against the estimate, and
// the expected peak when rounds this long let garbage pile up for fewer
// rounds than e assumed. It ends with a newline.
func (p ProbeResult) Text(e Estimate) string {
	var b strings.Builder
	fmt.Fprintf(&b, "probe (round 0 of %d, measured): load %.2f s, build %.2f s, round %.2f s (training %.2f s); whole run ≈ %s",
		p.Rounds, p.LoadSeconds, p.BuildSeconds, p.RoundSeconds, p.TrainSeconds, durationText(p.ProjectedSeconds))
	if p.PeakRSS > 0 {
		// One round leaves no garbage of earlier ones: its estimate is the live memory.
		fmt.Fprintf(&b, "; its peak resident set %s (estimate for one round %s, %+.0f %%)", bytesText(p.PeakRSS),
			bytesText(e.Live), 100*(float64(e.Live)/float64(p.PeakRSS)-1))
	}
	if g := e.WithRoundTime(p.RoundSeconds); g.Peak != e.Peak {
		fmt.Fprintf(&b, "; with rounds of %.1f s the collector runs every %d rounds at most: expected peak %s", p.RoundSeconds,
			max(1, int(math.Ceil(120/p.RoundSeconds))), bytesText(g.Peak))
	}
	b.WriteString("\n")
	return b.String()
}

// durationText is s seconds in the unit that reads best: 90 s, 25 min, 3.5 h.
func durationText(s float64) string {
	switch {
	case s < 120:
		return fmt.Sprintf("%.0f s", s)
	case s < 7200:
		return fmt.Sprintf("%.0f min", s/60)
	}
	return fmt.Sprintf("%.1f h", s/3600)
}

// headerShape is the shape of c's dataset: for the MNIST family what its
// files' headers declare (nothing decoded: a node process sizes its
// memory before it loads its shard), for the others the dataset loaded.
func headerShape(c config.Config) (DataShape, error) {
	var h data.IDXShape
	var err error
	switch c.Data.Dataset {
	case "mnist":
		h, err = data.MNISTShape(c.Data.Dir)
	case "fashion_mnist":
		h, err = data.FashionMNISTShape(c.Data.Dir)
	default:
		tt, err := LoadData(c)
		if err != nil {
			return DataShape{}, err
		}
		return ShapeOf(tt), nil
	}
	if err != nil {
		return DataShape{}, err
	}
	return DataShape{Name: h.Name, Train: h.Train, Test: h.Test, Shape: h.Shape, Classes: h.Classes}, nil
}
