package strategy

import (
	"errors"
	"math"
	"slices"
)

// TagPerturb tags function sharing's round-0 message a_ij to neighbour j.
const TagPerturb = "perturb"

// FunctionSharingScale is the default bound of the perturbation vectors:
// a_ij is drawn per coordinate from [−scale, scale] (on the grid below).
const FunctionSharingScale = 0.1

// fsGridBits is the resolution of the drawn a_ij: integers times a power
// of two, 2^-20 of the scale rounded up to a power of two, so that every
// sum of them is exact in float64 and Σ_i ∇s_i is exactly zero.
const fsGridBits = 20

var functionSharingRow = Row{
	Name:      "function_sharing",
	Summary:   "D-PSGD (tracking = 1: gradient tracking) on f_i + s_i, s_i affine from random vectors swapped with each neighbour in a setup round, Σ_i s_i ≡ 0 (the survey, §3.4.2, ref. [171]): protects as gradient_tracking_sd does; no Byzantine defence",
	Weighting: true,
	Options: []Option{
		{Name: "scale", Default: FunctionSharingScale, Lo: 0, Hi: math.Inf(1), LoOpen: true, HiOpen: true},
		{Name: "tracking", Default: 0, Lo: 0, Hi: 1, Whole: true},
	},
	build: func(p Params, o Values) (Strategy, error) {
		f := &FunctionSharing{Scale: o["scale"], Tracking: o["tracking"] == 1}
		if f.Tracking {
			f.inner = &GradientTracking{Weighting: p.Weighting}
		} else {
			f.inner = &DPSGD{Weighting: p.Weighting}
		}
		return f, nil
	},
}

// FunctionSharing is ref. [171]'s zero-sum objective perturbation (the
// survey, §3.4.2, Table 6: |N_i| shares, "zero-sum deterministic objective
// perturbation"; the survey: "obfuscate individual objective functions by
// adding deliberately designed affine functions"; Gade and Vaidya's
// function sharing). In round 0 node i draws a random vector a_ij for each
// neighbour j and sends it to j alone; its perturbation is the affine
// function
//
//	s_i(x) = ⟨p_i, x⟩,   p_i = Σ_{j∈N_i} (a_ji − a_ij)
//
// and Σ_i s_i ≡ 0, since every a_ij appears once with each sign. The
// setup round sends nothing else and drops its local training (the model
// goes back to the round's start), whose update, taken before p_i is
// known, the next start model would show. From round 1 on the node runs
// the base method on f_i + s_i: its local update
// d_i (which stands for η·∇f_i) becomes d_i + LR·Steps·p_i, what that many
// plain SGD steps on f_i + s_i give (∇s_i is constant). The base is D-PSGD
// (w_i ← Σ_j W_ij w_j^start − d_i, the original's distributed gradient
// descent) or, with Tracking, GradientTracking, which reaches the optimum
// with a constant step. The optimum of Σ_i (f_i + s_i) is that of Σ_i f_i.
//
// What it hides: f_i's linear part. f_i + ⟨δ, x⟩ at i with f_m − ⟨δ, x⟩ at
// a neighbour m, and a_im + δ, give every other node the same messages
// (tested); a coalition holding all of N_i knows p_i and sees f_i's
// gradients as the base method shows them. The a_ij are drawn on a grid
// (integers times a power of two), so Σ_i p_i is exactly zero in float64.
type FunctionSharing struct {
	// Scale bounds a_ij's coordinates.
	Scale float64
	// Tracking runs the perturbed objective through gradient tracking.
	Tracking bool
	// Sent holds a_ij by neighbour j; Share draws those that are missing
	// in round 0 (drawing every one anyway, so the node's stream stays in
	// step). The privacy test presets one to build a second execution.
	Sent map[int][]float32

	inner Strategy // *DPSGD or *GradientTracking
	p     []float64
	setup bool
	at    int // the round of the setup
}

// Name implements Strategy.
func (*FunctionSharing) Name() string { return "function_sharing" }

// grid returns the unit u of a_ij and the largest multiple K: a_ij = u·k,
// k an integer in [−K, K].
func (f *FunctionSharing) grid() (u float64, K int) {
	e := math.Ceil(math.Log2(f.Scale))
	u = math.Ldexp(1, int(e)-fsGridBits)
	return u, int(math.Floor(f.Scale / u))
}

// Perturbation returns ∇s_i, the same at every point (nil before round 0
// ends).
func (f *FunctionSharing) Perturbation() []float64 { return f.p }

// Share sends a_ij to each neighbour in the setup round (and subtracts it
// from p_i), and nothing else; later it adds LR·Steps·p_i to the round's
// update, then lets the base method share.
func (f *FunctionSharing) Share(v *View) []Outgoing {
	var out []Outgoing
	w := v.Model.Params()
	if !f.setup {
		f.p = make([]float64, len(w))
		if f.Sent == nil {
			f.Sent = map[int][]float32{}
		}
		u, K := f.grid()
		for _, j := range v.Neighbors {
			a := make([]float32, len(w))
			for k := range a {
				a[k] = float32(u * float64(v.RNG.IntN(2*K+1)-K))
			}
			if pre, ok := f.Sent[j]; ok && len(pre) == len(w) {
				a = pre
			}
			f.Sent[j] = a
			for k, x := range a {
				f.p[k] -= float64(x)
			}
			out = append(out, Outgoing{To: j, Tag: TagPerturb, Vector: a})
		}
		f.setup, f.at = true, v.Round
		return out // the setup round shares nothing else
	}
	// w is the trained model: moving it by −η·p_i adds η·p_i to the
	// update start − trained the base method reads.
	eta := v.LR * float64(max(v.Steps, 1))
	for k, x := range f.p {
		w[k] = float32(float64(w[k]) - eta*x)
	}
	return f.inner.Share(v)
}

// Combine, in the setup round, adds the a_ji that arrived to p_i and
// puts the model back to the round's start; later the base method
// combines.
func (f *FunctionSharing) Combine(v *View, in []Incoming) (map[int]float64, error) {
	got, err := withTag(in, TagPerturb, len(v.Model.Params()))
	if err != nil {
		return nil, err
	}
	if f.setup && v.Round == f.at {
		for _, m := range got {
			if !slices.Contains(v.Neighbors, m.From) {
				continue
			}
			for k, x := range m.Vector {
				f.p[k] += float64(x)
			}
		}
		// The round's training used f_i alone: it is dropped, or the
		// next round's start would show its update.
		copy(v.Model.Params(), v.Start)
		return nil, nil
	}
	return f.inner.Combine(v, in)
}

// SaveState implements Stateful: the setup, p_i, and the base method's
// state (gradient tracking's; D-PSGD keeps none).
func (f *FunctionSharing) SaveState() ([]byte, error) {
	w := newStateWriter(f.Name())
	w.bool(f.setup)
	w.i64(int64(f.at))
	writeF64s(w, f.p)
	if g, ok := f.inner.(*GradientTracking); ok {
		w.bool(g.started)
		w.floats(g.y)
		w.floats(g.yMix)
		w.floats(g.dPrev)
	}
	return w.b, nil
}

// LoadState implements Stateful.
func (f *FunctionSharing) LoadState(b []byte) error {
	r, err := newStateReader(b, f.Name())
	if err != nil {
		return err
	}
	f.setup, f.at = r.bool(), int(r.i64())
	f.p = readF64s(r)
	if g, ok := f.inner.(*GradientTracking); ok {
		g.started = r.bool()
		g.y, g.yMix, g.dPrev = r.floats(), r.floats(), r.floats()
		if r.err == nil && (len(g.yMix) != len(g.y) || len(g.dPrev) != len(g.y)) {
			r.err = errors.New("tracker vectors of different lengths")
		}
	}
	return r.done()
}

// writeF64s writes a float64 vector: u32 count + f64s.
func writeF64s(w *stateWriter, xs []float64) {
	w.u32(uint32(len(xs)))
	for _, x := range xs {
		w.f64(x)
	}
}

// readF64s reads what writeF64s wrote.
func readF64s(r *stateReader) []float64 {
	n := r.count(8)
	if n == 0 {
		return nil
	}
	xs := make([]float64, n)
	for k := range xs {
		xs[k] = r.f64()
	}
	return xs
}
