package report

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const (
	metric = "honest_local_acc"
	key    = "adversary.fraction"
)

// syntheticSweep is 2 labels × 3 Byzantine fractions × 2 seeds, in
// scrambled order, with accuracy curves rising over 11 evaluated rounds to
// a level that falls with the fraction (steeply for fedavg); seeds differ,
// so every point has a spread.
func syntheticSweep() []RunResult {
	var runs []RunResult
	for _, label := range []string{"median", "fedavg"} {
		slope := 0.3
		if label == "fedavg" {
			slope = 1.5
		}
		for _, frac := range []string{"0.3", "0.1", "0.2"} {
			f, _ := strconv.ParseFloat(frac, 64)
			for _, seed := range []uint64{2, 1} {
				top := 0.9 - slope*f + 0.04*(float64(seed)-1.5)
				var s Series
				for r := 0; r <= 20; r += 2 {
					s.Rounds = append(s.Rounds, r)
					s.Values = append(s.Values, top*(1-math.Exp(-float64(r+1)/5)))
				}
				runs = append(runs, RunResult{
					Label:  label,
					Params: map[string]string{key: frac},
					Seed:   seed,
					Curves: map[string]Series{metric: s},
					Final:  map[string]float64{metric: s.Values[len(s.Values)-1]},
				})
			}
		}
	}
	return runs
}

// svgContent is what the tests read from an SVG file.
type svgContent struct {
	texts   []string    // the text of every <text> element
	strokes map[int]int // palette index → stroked paths in that colour
	fills   map[int]int // palette index → translucent filled paths in that colour
}

// parseSVG parses an SVG file with encoding/xml (so a malformed file fails
// the test) and counts what identifies a series.
//
// How series are counted, and why this is robust: gonum/plot's SVG backend
// writes every stroke and fill as a <path> whose style attribute carries
// its colour ("stroke:#1F77B4", "fill:#...;fill-opacity:0.25"), and every
// string as one <text> element. Counting all paths would depend on how
// gonum draws axes, ticks, grid and glyphs; instead each path's colour is
// mapped back to the report palette (seriesColor), whose colours nothing
// else in a plot uses (axes are black, the grid grey). A series exists if
// its palette colour strokes at least one path, and the series count is
// confirmed by the first unused palette colour striking nothing. Bands
// are the only translucent fills. Independently, the legend is counted by
// its entries: every <text> that is not the title, an axis label or a
// numeric tick label.
func parseSVG(t *testing.T, path string) svgContent {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	c := svgContent{strokes: map[int]int{}, fills: map[int]int{}}
	d := xml.NewDecoder(f)
	var root bool
	var inText bool
	var text strings.Builder
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("%s is not well-formed XML: %v", path, err)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			if !root {
				if tok.Name.Local != "svg" {
					t.Fatalf("%s: root element <%s>, want <svg>", path, tok.Name.Local)
				}
				root = true
			}
			switch tok.Name.Local {
			case "text":
				inText = true
				text.Reset()
			case "path":
				for _, a := range tok.Attr {
					if a.Name.Local == "style" {
						c.addPath(a.Value)
					}
				}
			}
		case xml.CharData:
			if inText {
				text.Write(tok)
			}
		case xml.EndElement:
			if tok.Name.Local == "text" {
				inText = false
				c.texts = append(c.texts, text.String())
			}
		}
	}
	if !root {
		t.Fatalf("%s has no <svg> element", path)
	}
	return c
}

func (c *svgContent) addPath(style string) {
	props := map[string]string{}
	for _, kv := range strings.Split(style, ";") {
		k, v, _ := strings.Cut(kv, ":")
		props[strings.TrimSpace(k)] = strings.TrimSpace(v)
	}
	if s, ok := props["stroke"]; ok && s != "none" {
		if i := paletteIndex(s); i >= 0 {
			c.strokes[i]++
		}
	}
	if f, ok := props["fill"]; ok && f != "none" {
		op, err := strconv.ParseFloat(props["fill-opacity"], 64)
		if i := paletteIndex(f); i >= 0 && err == nil && op < 1 {
			c.fills[i]++
		}
	}
}

// paletteIndex maps "#RRGGBB" to the palette entry it draws, or −1. The
// SVG backend un-premultiplies translucent colours, which can be off by
// one per channel.
func paletteIndex(hex string) int {
	var r, g, b int
	if _, err := fmt.Sscanf(hex, "#%02x%02x%02x", &r, &g, &b); err != nil {
		return -1
	}
	for i := range 10 {
		p := seriesColor(i)
		if absInt(r-int(p.R)) <= 1 && absInt(g-int(p.G)) <= 1 && absInt(b-int(p.B)) <= 1 {
			return i
		}
	}
	return -1
}

func absInt(x int) int { return max(x, -x) }

// legendEntries returns the texts that are not the title, an axis label or
// a number (tick labels).
func (c svgContent) legendEntries(fixed ...string) []string {
	var out []string
	for _, s := range c.texts {
		s = strings.TrimSpace(s)
		if _, err := strconv.ParseFloat(s, 64); err == nil || s == "" || slices.Contains(fixed, s) {
			continue
		}
		out = append(out, s)
	}
	slices.Sort(out)
	return out
}

// checkSeries checks that an SVG shows exactly the given labels.
func checkSeries(t *testing.T, c svgContent, labels []string, fixed ...string) {
	t.Helper()
	if got := c.legendEntries(fixed...); !slices.Equal(got, labels) {
		t.Errorf("legend entries %q, want %q", got, labels)
	}
	for i := range labels {
		if c.strokes[i] == 0 {
			t.Errorf("no path stroked in the colour of series %d (%s)", i, labels[i])
		}
	}
	if n := c.strokes[len(labels)]; n != 0 {
		t.Errorf("%d paths stroked in the colour of series %d; want %d series", n, len(labels), len(labels))
	}
}

// checkPNG decodes a PNG file and checks its size, and that each series'
// colour appears exactly in some pixels (the 1.5 pt lines are 3 px wide at
// 150 dpi, so their middle pixels are not blended) and the next colour of
// the palette in none.
func checkPNG(t *testing.T, path string, nSeries int) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("%s does not decode as PNG: %v", path, err)
	}
	if got, want := img.Bounds().Size(), (image.Point{900, 600}); got != want {
		t.Errorf("%s is %v pixels, want %v", path, got, want)
	}
	seen := map[color.NRGBA]bool{}
	bounds := img.Bounds()
	for y := bounds.Min.Y; y < bounds.Max.Y; y++ {
		for x := bounds.Min.X; x < bounds.Max.X; x++ {
			seen[color.NRGBAModel.Convert(img.At(x, y)).(color.NRGBA)] = true
		}
	}
	for i := range nSeries {
		if !seen[seriesColor(i)] {
			t.Errorf("%s: no pixel in the colour of series %d", path, i)
		}
	}
	if seen[seriesColor(nSeries)] {
		t.Errorf("%s: pixels in the colour of series %d; want %d series", path, nSeries, nSeries)
	}
}

func TestCurvesFiles(t *testing.T) {
	dir := t.TempDir()
	runs := Filter(syntheticSweep(), map[string]string{key: "0.2"})
	if len(runs) != 4 {
		t.Fatalf("%d runs at fraction 0.2, want 4", len(runs))
	}
	p, err := Curves(runs, metric, Figure{Title: "Honest accuracy, 20 % Byzantine", YLabel: "honest accuracy"})
	if err != nil {
		t.Fatal(err)
	}
	svg, pngPath := filepath.Join(dir, "acc.svg"), filepath.Join(dir, "acc.png")
	if err := p.Save(0, 0, svg, pngPath); err != nil {
		t.Fatal(err)
	}
	if got := dirNames(t, dir); !slices.Equal(got, []string{"acc.png", "acc.svg"}) {
		t.Errorf("directory holds %q, want the two plots only", got)
	}
	c := parseSVG(t, svg)
	labels := []string{"fedavg", "median"}
	checkSeries(t, c, labels, "Honest accuracy, 20 % Byzantine", "round (from 0)", "honest accuracy")
	// Two seeds per label: one band per label.
	for i := range labels {
		if c.fills[i] != 1 {
			t.Errorf("series %d: %d bands, want 1", i, c.fills[i])
		}
	}
	if len(c.fills) != len(labels) {
		t.Errorf("bands in %d colours, want %d", len(c.fills), len(labels))
	}
	checkPNG(t, pngPath, len(labels))
}

func TestCurvesOneSeedHasNoBand(t *testing.T) {
	runs := Filter(syntheticSweep(), map[string]string{key: "0.1"})
	runs = slices.DeleteFunc(runs, func(r RunResult) bool { return r.Seed != 1 })
	p, err := Curves(runs, metric, Figure{})
	if err != nil {
		t.Fatal(err)
	}
	svg := filepath.Join(t.TempDir(), "acc.svg")
	if err := p.Save(0, 0, svg); err != nil {
		t.Fatal(err)
	}
	c := parseSVG(t, svg)
	// The defaults are the label table's: no raw metric name on a plot.
	checkSeries(t, c, []string{"fedavg", "median"}, "Honest local accuracy by round", "round (from 0)", "honest local accuracy (fraction)")
	if len(c.fills) != 0 {
		t.Errorf("one seed per label, yet bands: %v", c.fills)
	}
}

func TestSweepFiles(t *testing.T) {
	dir := t.TempDir()
	p, err := Sweep(syntheticSweep(), key, metric, Figure{XLabel: "Byzantine fraction"})
	if err != nil {
		t.Fatal(err)
	}
	svg, pngPath := filepath.Join(dir, "final.svg"), filepath.Join(dir, "final.png")
	if err := p.Save(0, 0, svg, pngPath); err != nil {
		t.Fatal(err)
	}
	c := parseSVG(t, svg)
	checkSeries(t, c, []string{"fedavg", "median"}, "Honest local accuracy vs "+key, "Byzantine fraction", "honest local accuracy (fraction)")
	if len(c.fills) != 0 {
		t.Errorf("a sweep plot has no bands, got %v", c.fills)
	}
	checkPNG(t, pngPath, 2)
}

func TestSweepPoints(t *testing.T) {
	// The points behind the error bars: per label and fraction, the mean
	// and sample std of the two seeds' final values.
	runs := sortRuns(Filter(syntheticSweep(), nil), []string{key})
	for _, g := range groupByLabel(runs) {
		pts, err := sweepPoints(g, key, metric)
		if err != nil {
			t.Fatal(err)
		}
		if len(pts) != 3 || pts[0].X != 0.1 || pts[1].X != 0.2 || pts[2].X != 0.3 {
			t.Fatalf("%s: points %+v, want x = 0.1, 0.2, 0.3", g[0].Label, pts)
		}
		for _, pt := range pts {
			var vals []float64
			for _, r := range g {
				if r.Params[key] == strconv.FormatFloat(pt.X, 'g', -1, 64) {
					vals = append(vals, r.Final[metric])
				}
			}
			// Two values a, b: mean (a+b)/2, sample std |a−b|/√2.
			mean, std := (vals[0]+vals[1])/2, math.Abs(vals[0]-vals[1])/math.Sqrt2
			if pt.Stat.N != 2 || math.Abs(pt.Stat.Mean-mean) > 1e-12 || math.Abs(pt.Stat.Std-std) > 1e-12 {
				t.Errorf("%s at %g: %+v, want mean %v std %v N 2", g[0].Label, pt.X, pt.Stat, mean, std)
			}
		}
	}
}

func TestPlotsDeterministic(t *testing.T) {
	// The same runs in another order give byte-identical files.
	runs := syntheticSweep()
	rev := slices.Clone(runs)
	slices.Reverse(rev)
	render := func(runs []RunResult) map[string][]byte {
		dir := t.TempDir()
		cp, err := Curves(Filter(runs, map[string]string{key: "0.3"}), metric, Figure{})
		if err != nil {
			t.Fatal(err)
		}
		sp, err := Sweep(runs, key, metric, Figure{})
		if err != nil {
			t.Fatal(err)
		}
		out := map[string][]byte{}
		if err := cp.Save(0, 0, filepath.Join(dir, "c.svg"), filepath.Join(dir, "c.png")); err != nil {
			t.Fatal(err)
		}
		if err := sp.Save(0, 0, filepath.Join(dir, "s.svg"), filepath.Join(dir, "s.png")); err != nil {
			t.Fatal(err)
		}
		for _, n := range []string{"c.svg", "c.png", "s.svg", "s.png"} {
			out[n], err = os.ReadFile(filepath.Join(dir, n))
			if err != nil {
				t.Fatal(err)
			}
		}
		return out
	}
	a, b := render(runs), render(rev)
	for n := range a {
		if !bytes.Equal(a[n], b[n]) {
			t.Errorf("%s differs when the runs come in another order", n)
		}
	}
}

func TestPlotErrors(t *testing.T) {
	runs := syntheticSweep()
	// Curves over several fractions: the same label and seed twice.
	if _, err := Curves(runs, metric, Figure{}); err == nil || !strings.Contains(err.Error(), key) {
		t.Errorf("Curves over a whole sweep: err = %v, want one naming %q", err, key)
	}
	if _, err := Curves(Filter(runs, map[string]string{key: "0.1"}), "loss", Figure{}); err == nil || !strings.Contains(err.Error(), `"loss"`) {
		t.Errorf("Curves of a missing metric: err = %v", err)
	}
	if _, err := Sweep(runs, "nodes", metric, Figure{}); err == nil || !strings.Contains(err.Error(), `"nodes"`) {
		t.Errorf("Sweep over a missing key: err = %v", err)
	}
	if _, err := Sweep(runs, key, "loss", Figure{}); err == nil || !strings.Contains(err.Error(), `"loss"`) {
		t.Errorf("Sweep of a missing metric: err = %v", err)
	}
	bad := slices.Clone(runs)
	bad[0].Params = map[string]string{key: "high"}
	if _, err := Sweep(bad, key, metric, Figure{}); err == nil || !strings.Contains(err.Error(), `"high"`) {
		t.Errorf("Sweep over a non-numeric value: err = %v", err)
	}
	// A grid sweep: a second key varies at the same fraction and seed.
	grid := slices.Clone(runs)
	for i := range grid {
		grid[i].Params = map[string]string{key: grid[i].Params[key], "nodes": "10"}
	}
	extra := grid[0]
	extra.Params = map[string]string{key: extra.Params[key], "nodes": "20"}
	grid = append(grid, extra)
	if _, err := Sweep(grid, key, metric, Figure{}); err == nil || !strings.Contains(err.Error(), "nodes") {
		t.Errorf("Sweep over a grid: err = %v, want one naming nodes", err)
	}
	if _, err := Curves(nil, metric, Figure{}); err == nil {
		t.Error("Curves of no runs succeeded")
	}
	ch, err := Curves(Filter(runs, map[string]string{key: "0.1"}), metric, Figure{})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := ch.Save(0, 0, filepath.Join(dir, "plot.xyz")); err == nil || !strings.Contains(err.Error(), "xyz") {
		t.Errorf("Save to .xyz: err = %v", err)
	}
	if got := dirNames(t, dir); len(got) != 0 {
		t.Errorf("a failed Save left %q", got)
	}
}

// TestSweepPositionsSpreadCrowdedValues: λ ∈ {0, 0.005, 0.01, 0.05, 0.5, 1}
// crowd at 0, so they go at their ranks; evenly spread values stay put.
func TestSweepPositionsSpreadCrowdedValues(t *testing.T) {
	mk := func(vals ...string) []RunResult {
		var rs []RunResult
		for _, v := range vals {
			rs = append(rs, RunResult{Params: map[string]string{"k": v}})
		}
		return rs
	}
	pos := sweepPositions(mk("0", "0.005", "0.01", "0.05", "0.5", "1"), "k")
	for i, x := range []float64{0, 0.005, 0.01, 0.05, 0.5, 1} {
		if pos(x) != float64(i) {
			t.Errorf("crowded: %g at %g, want %d", x, pos(x), i)
		}
	}
	pos = sweepPositions(mk("0", "0.2", "0.4"), "k")
	if pos(0.2) != 0.2 || pos(0.4) != 0.4 {
		t.Errorf("even values moved: 0.2 → %g, 0.4 → %g", pos(0.2), pos(0.4))
	}
}
