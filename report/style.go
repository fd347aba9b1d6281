package report

import (
	"image/color"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Figure holds a plot's text; an empty field takes the default the
// plotting function documents.
type Figure struct {
	Title  string
	XLabel string
	YLabel string
}

// seriesColor is the colour of the i-th label: the Tableau 10 palette
// (matplotlib's default cycle), readable on white and in grey print.
func seriesColor(i int) color.NRGBA {
	palette := [...]color.NRGBA{
		{0x1f, 0x77, 0xb4, 0xff}, // blue
		{0xff, 0x7f, 0x0e, 0xff}, // orange
		{0x2c, 0xa0, 0x2c, 0xff}, // green
		{0xd6, 0x27, 0x28, 0xff}, // red
		{0x94, 0x67, 0xbd, 0xff}, // purple
		{0x8c, 0x56, 0x4b, 0xff}, // brown
		{0xe3, 0x77, 0xc2, 0xff}, // pink
		{0x7f, 0x7f, 0x7f, 0xff}, // grey
		{0xbc, 0xbd, 0x22, 0xff}, // olive
		{0x17, 0xbe, 0xcf, 0xff}, // cyan
	}
	return palette[i%len(palette)]
}

// bandColor is the translucent fill of the i-th label's ± std band.
func bandColor(i int) color.NRGBA {
	c := seriesColor(i)
	c.A = 0x40
	return c
}

// seriesDashes tells labels apart once the palette has cycled: solid for
// the first ten, then dashed, then dotted.
func seriesDashes(i int) []vg.Length {
	switch (i / 10) % 3 {
	case 1:
		return []vg.Length{vg.Points(6), vg.Points(3)}
	case 2:
		return []vg.Length{vg.Points(1.5), vg.Points(2)}
	}
	return nil
}

// seriesLine is the i-th label's line style.
func seriesLine(i int) draw.LineStyle {
	return draw.LineStyle{Color: seriesColor(i), Width: vg.Points(1.5), Dashes: seriesDashes(i)}
}

// seriesGlyph is the i-th label's marker, so points stay distinguishable
// without colour.
func seriesGlyph(i int) draw.GlyphStyle {
	shapes := [...]draw.GlyphDrawer{
		draw.CircleGlyph{}, draw.SquareGlyph{}, draw.TriangleGlyph{},
		draw.PyramidGlyph{}, draw.CrossGlyph{}, draw.PlusGlyph{},
	}
	return draw.GlyphStyle{Color: seriesColor(i), Radius: vg.Points(3), Shape: shapes[i%len(shapes)]}
}

// newChart returns a chart with the figure's text (or the defaults given),
// a light grid and an empty legend.
func newChart(fig Figure, title, xlabel, ylabel string) *Chart {
	p := plot.New()
	p.Title.Text = or(fig.Title, title)
	p.X.Label.Text = or(fig.XLabel, xlabel)
	p.Y.Label.Text = or(fig.YLabel, ylabel)
	// A grid lighter than any palette colour, so it neither competes with
	// the series nor shares a colour with one (the palette's grey is 0x7f).
	g := plotter.NewGrid()
	g.Vertical.Color = color.Gray{Y: 0xdd}
	g.Horizontal.Color = color.Gray{Y: 0xdd}
	p.Add(g)
	legend := plot.NewLegend()
	legend.Top, legend.Left = true, true
	legend.Padding = vg.Points(3)
	return &Chart{Plot: p, Legend: legend}
}

func or(s, def string) string {
	if s != "" {
		return s
	}
	return def
}
