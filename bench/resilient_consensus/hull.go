package main

import (
	"math"
	"slices"
)

// hull is the convex hull of the honest initial vectors, as the facets of
// the hull within its affine span (an orthonormal basis from Gram–Schmidt)
// found by brute force: every r points of the r-dimensional projection
// span a hyperplane, kept when all points are on one side.
type hull struct {
	origin []float64
	basis  [][]float64 // orthonormal, r vectors
	facets []facet     // in basis coordinates: n·y <= c
	spread float64
}

type facet struct {
	n []float64
	c float64
}

func newHull(pts [][]float64) *hull {
	d := len(pts[0])
	mean := make([]float64, d)
	for _, p := range pts {
		for k := range p {
			mean[k] += p[k] / float64(len(pts))
		}
	}
	h := &hull{origin: mean}
	for _, p := range pts {
		h.spread = max(h.spread, dist(p, mean))
	}
	for _, p := range pts {
		v := sub(p, mean)
		for _, e := range h.basis {
			axpy(-dot(v, e), e, v)
		}
		if n := math.Sqrt(dot(v, v)); n > 1e-9*h.spread {
			for k := range v {
				v[k] /= n
			}
			h.basis = append(h.basis, v)
		}
	}
	r := len(h.basis)
	ys := make([][]float64, len(pts))
	for i, p := range pts {
		ys[i] = h.coords(p)
	}
	idx := make([]int, r)
	var rec func(start, depth int)
	rec = func(start, depth int) {
		if depth == r {
			n := normal(ys, idx)
			if n == nil {
				return
			}
			c := dot(n, ys[idx[0]])
			lo, hi := 0, 0
			for _, y := range ys {
				switch v := dot(n, y) - c; {
				case v > 1e-9*h.spread:
					hi++
				case v < -1e-9*h.spread:
					lo++
				}
			}
			if hi == 0 {
				h.facets = append(h.facets, facet{n, c})
			} else if lo == 0 {
				h.facets = append(h.facets, facet{scale(-1, n), -c})
			}
			return
		}
		for i := start; i < len(ys); i++ {
			idx[depth] = i
			rec(i+1, depth+1)
		}
	}
	rec(0, 0)
	return h
}

func (h *hull) coords(p []float64) []float64 {
	v := sub(p, h.origin)
	y := make([]float64, len(h.basis))
	for i, e := range h.basis {
		y[i] = dot(v, e)
	}
	return y
}

// out is the distance off the affine span, or the largest violation of a
// facet's plane, whichever is larger: 0 inside the hull.
func (h *hull) out(p []float64) float64 {
	y := h.coords(p)
	v := sub(p, h.origin)
	for i, e := range h.basis {
		axpy(-y[i], e, v)
	}
	o := math.Sqrt(dot(v, v))
	for _, f := range h.facets {
		o = max(o, dot(f.n, y)-f.c)
	}
	return o
}

// normal is the unit normal of the hyperplane through ys[idx] (r points
// in r dimensions), nil when they are degenerate; r <= 3.
func normal(ys [][]float64, idx []int) []float64 {
	var n []float64
	switch len(idx) {
	case 1:
		n = []float64{1}
	case 2:
		a, b := ys[idx[0]], ys[idx[1]]
		n = []float64{-(b[1] - a[1]), b[0] - a[0]}
	case 3:
		a := ys[idx[0]]
		u, w := sub(ys[idx[1]], a), sub(ys[idx[2]], a)
		n = []float64{u[1]*w[2] - u[2]*w[1], u[2]*w[0] - u[0]*w[2], u[0]*w[1] - u[1]*w[0]}
	default:
		panic("hull: dimension above 3")
	}
	l := math.Sqrt(dot(n, n))
	if l < 1e-12 {
		return nil
	}
	return scale(1/l, n)
}

func sub(a, b []float64) []float64 {
	out := slices.Clone(a)
	for k := range out {
		out[k] -= b[k]
	}
	return out
}

func dot(a, b []float64) float64 {
	var s float64
	for k := range a {
		s += a[k] * b[k]
	}
	return s
}

func axpy(a float64, x, y []float64) {
	for k := range y {
		y[k] += a * x[k]
	}
}

func scale(a float64, x []float64) []float64 {
	out := make([]float64, len(x))
	for k := range x {
		out[k] = a * x[k]
	}
	return out
}
