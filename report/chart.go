package report

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/trellis-fl/trellis/rundir"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// Chart is a plot whose legend is drawn to the right of its axes rather
// than inside them, where with many labels it would hide curves.
type Chart struct {
	Plot   *plot.Plot  // title, axes and data; its own Legend stays empty
	Legend plot.Legend // one entry per label, drawn by Draw
}

// Default figure size and raster resolution.
const (
	DefaultWidth  = 6 * vg.Inch
	DefaultHeight = 4 * vg.Inch
	pngDPI        = 150          // 900 × 600 pixels at the default size
	margin        = vg.Length(8) // points, around the figure
	legendGap     = vg.Length(8) // points, between the axes and the legend
)

// Draw draws the chart on c: the plot, then the legend in a column on the
// right, its top level with the top of the axes.
func (ch *Chart) Draw(c draw.Canvas) {
	c = draw.Crop(c, margin, -margin, margin, -margin)
	legendW := ch.Legend.Rectangle(c).Size().X
	if legendW > 0 {
		legendW += legendGap
	}
	ch.Plot.Draw(draw.Crop(c, 0, -legendW, 0, 0))
	if legendW == 0 {
		return
	}
	top := vg.Length(0)
	if t := ch.Plot.Title; t.Text != "" {
		top = t.TextStyle.Rectangle(t.Text).Size().Y + t.Padding
	}
	ch.Legend.Draw(draw.Crop(c, c.Size().X-legendW+legendGap, 0, 0, -top))
}

// Save draws the chart into each of paths, in the format its extension
// names (.png, .svg, or another gonum/plot format: .pdf, .eps, .jpg, .tif,
// .tex), each file written atomically. A zero width or height takes the
// default. SVG files name their fonts (Liberation) rather than embed them,
// which keeps them small; a viewer without the font substitutes a similar
// one.
func (ch *Chart) Save(width, height vg.Length, paths ...string) error {
	if width <= 0 {
		width = DefaultWidth
	}
	if height <= 0 {
		height = DefaultHeight
	}
	for _, path := range paths {
		format := strings.ToLower(strings.TrimPrefix(filepath.Ext(path), "."))
		var c vg.CanvasWriterTo
		switch format {
		case "png":
			c = vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(width, height), vgimg.UseDPI(pngDPI))}
		case "svg":
			c = vgsvg.New(width, height)
		default:
			var err error
			c, err = draw.NewFormattedCanvas(width, height, format)
			if err != nil {
				return fmt.Errorf("report: plot %s: %w", path, err)
			}
		}
		ch.Draw(draw.New(c))
		err := rundir.WriteAtomicFunc(path, func(w io.Writer) error {
			_, err := c.WriteTo(w)
			return err
		})
		if err != nil {
			return fmt.Errorf("report: plot %s: %w", path, err)
		}
	}
	return nil
}
