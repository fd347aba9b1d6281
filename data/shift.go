package data

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// Feature shift: a fixed per-client
// transform of the inputs, to emulate sites that see the same classes
// differently (LIGHTYEAR's multi-site heterogeneity). The dataset copy is
// shared, so a client's transform is applied to each row as a batch is filled
// (Batcher), never stored: a rotation costs no memory per client, a
// permutation 4 bytes per pixel.

// Transform maps one sample row to another of the same length. dst and src
// must not overlap. Implementations are read-only after construction and safe
// for concurrent use.
type Transform interface {
	Apply(dst, src []float32)
}

// ShiftKind names a feature-shift family.
type ShiftKind string

const (
	NoShift ShiftKind = ""        // identity for every client
	Rotate  ShiftKind = "rotate"  // client i rotates images by i·MaxDegrees/clients degrees
	Permute ShiftKind = "permute" // client i applies its own fixed pixel permutation
)

// ShiftConfig configures FeatureShift.
type ShiftConfig struct {
	Kind       ShiftKind
	MaxDegrees float64 // Rotate: angles are spread evenly over [0, MaxDegrees); 0 means 360
	Seed       uint64  // Permute: client i's permutation derives from (Seed, i)
}

// FeatureShift returns one Transform per client (nil entries mean identity)
// for samples of the given shape. Client 0 is unrotated; client i is rotated
// by i·MaxDegrees/clients degrees, so with the default 360 the clients are
// spaced evenly around the circle.
func FeatureShift(shape []int, clients int, cfg ShiftConfig) ([]Transform, error) {
	out := make([]Transform, clients)
	switch cfg.Kind {
	case NoShift:
	case Rotate:
		maxDeg := cfg.MaxDegrees
		if maxDeg == 0 {
			maxDeg = 360
		}
		for i := range out {
			if i == 0 {
				continue
			}
			t, err := NewRotation(shape, float64(i)*maxDeg/float64(clients))
			if err != nil {
				return nil, err
			}
			out[i] = t
		}
	case Permute:
		for i := range out {
			out[i] = NewPermutation(shape, stream(cfg.Seed, purposePermutation, uint64(i)))
		}
	default:
		return nil, fmt.Errorf("data: unknown feature shift %q (rotate, permute, or empty for none)", cfg.Kind)
	}
	return out, nil
}

// Rotation rotates images of shape [C, H, W] or [H, W] about their centre by
// a fixed angle (counter-clockwise as displayed, row 0 at the top), with
// bilinear interpolation; points that fall outside the image take the value
// of the nearest edge pixel, which for MNIST-like images is the background
// whatever the normalization.
type Rotation struct {
	Degrees  float64
	c, h, w  int
	cos, sin float64
}

// NewRotation returns the rotation by degrees for images of the given shape.
func NewRotation(shape []int, degrees float64) (*Rotation, error) {
	var c, h, w int
	switch len(shape) {
	case 2:
		c, h, w = 1, shape[0], shape[1]
	case 3:
		c, h, w = shape[0], shape[1], shape[2]
	default:
		return nil, fmt.Errorf("data: rotation needs image samples of shape [C H W] or [H W], not %v", shape)
	}
	if c < 1 || h < 1 || w < 1 {
		return nil, fmt.Errorf("data: rotation: bad image shape %v", shape)
	}
	rad := degrees * math.Pi / 180
	return &Rotation{Degrees: degrees, c: c, h: h, w: w, cos: math.Cos(rad), sin: math.Sin(rad)}, nil
}

// Apply writes the rotated src to dst. For the output pixel at (x, y)
// relative to the centre it samples the source at the inverse rotation
// (x·cos − y·sin, x·sin + y·cos) (with y pointing down).
func (t *Rotation) Apply(dst, src []float32) {
	h, w := t.h, t.w
	plane := h * w
	_, _ = dst[t.c*plane-1], src[t.c*plane-1]
	cx, cy := float64(w-1)/2, float64(h-1)/2
	for i := range h {
		dy := float64(i) - cy
		for j := range w {
			dx := float64(j) - cx
			sx := dx*t.cos - dy*t.sin + cx
			sy := dx*t.sin + dy*t.cos + cy
			sx = min(max(sx, 0), float64(w-1))
			sy = min(max(sy, 0), float64(h-1))
			x0, y0 := int(sx), int(sy)
			x1, y1 := min(x0+1, w-1), min(y0+1, h-1)
			fx, fy := float32(sx-float64(x0)), float32(sy-float64(y0))
			w00, w01 := (1-fx)*(1-fy), fx*(1-fy)
			w10, w11 := (1-fx)*fy, fx*fy
			o := i*w + j
			a, b, c, d := y0*w+x0, y0*w+x1, y1*w+x0, y1*w+x1
			for ch := range t.c {
				p := src[ch*plane : (ch+1)*plane]
				dst[ch*plane+o] = w00*p[a] + w01*p[b] + w10*p[c] + w11*p[d]
			}
		}
	}
}

// Permutation moves values to fixed new positions: for images [C, H, W]
// the same pixel permutation applies to every channel; for any other shape
// the whole row is permuted. dst[perm-applied position p] = src[Perm[p]].
type Permutation struct {
	Perm   []int32 // source position of each output position within a plane
	planes int
}

// NewPermutation draws a uniformly random permutation for samples of shape.
func NewPermutation(shape []int, r *rand.Rand) *Permutation {
	plane, planes := 1, 1
	if len(shape) == 3 {
		planes = shape[0]
		plane = shape[1] * shape[2]
	} else {
		for _, s := range shape {
			plane *= s
		}
	}
	perm := make([]int32, plane)
	for i := range perm {
		perm[i] = int32(i)
	}
	shuffle32(r, perm)
	return &Permutation{Perm: perm, planes: planes}
}

// Apply writes the permuted src to dst.
func (t *Permutation) Apply(dst, src []float32) {
	n := len(t.Perm)
	for ch := range t.planes {
		s := src[ch*n : (ch+1)*n]
		d := dst[ch*n : (ch+1)*n]
		for p, q := range t.Perm {
			d[p] = s[q]
		}
	}
}
