package strategy

import (
	"errors"
	"math"
	"slices"
)

var afaRow = Row{
	Name:    "afa",
	Summary: "iterative outlier removal by cosine similarity, with a Beta reputation per sender",
	Options: []Option{
		{Name: "xi0", Default: AFAXi0, Lo: 0, Hi: math.Inf(1), LoOpen: true, HiOpen: true},
		{Name: "delta_xi", Default: AFADeltaXi, Lo: 0, Hi: math.Inf(1), HiOpen: true},
		{Name: "alpha0", Default: AFAPrior, Lo: 0, Hi: math.Inf(1), LoOpen: true, HiOpen: true},
		{Name: "beta0", Default: AFAPrior, Lo: 0, Hi: math.Inf(1), LoOpen: true, HiOpen: true},
		{Name: "block_at", Default: AFABlockAt, Lo: 0, Hi: 1, LoOpen: true, HiOpen: true},
	},
	build: func(_ Params, o Values) (Strategy, error) {
		return &AFA{Xi0: o["xi0"], DeltaXi: o["delta_xi"], Alpha0: o["alpha0"], Beta0: o["beta0"], BlockAt: o["block_at"]}, nil
	},
}

// AFA is adaptive federated averaging (Muñoz-González et al. 2019) run on
// the peer side (docs/methods/toolbox.md, "Peer-side defences",
// AFA). Each round, over the node's own model and the models of senders
// not blocked:
//
//  1. the weighted mean m of the inputs still kept, input k weighted by its
//     reputation p_k = α_k/(α_k+β_k);
//  2. s_k = cos(x_k − r, m − r) for the kept inputs, with r the node's
//     start-of-round parameters (so cosines compare updates, as in the
//     paper; r = 0 when View.Start is absent; a zero vector has cosine 0);
//  3. with μ, med and σ the mean, median and population std of the s_k:
//     if μ < med drop the kept inputs with s_k < med − ξσ, else those with
//     s_k > med + ξσ (the paper's one-sided reading of "beyond
//     median ± ξ·std": the side the mean leans to holds the outliers);
//     ξ starts at Xi0 and grows by DeltaXi per pass; repeat until a pass
//     drops nothing.
//
// The node sets x_0 ← Σ p_k x_k / Σ p_k over the kept inputs (p_k as
// before this round's update), then every sender present gets α+1 if kept
// and β+1 if dropped, starting from the prior (Alpha0, Beta0), and is
// blocked for good once BetaCDF(0.5; α, β) > BlockAt. The node's own model
// is never dropped; it keeps a reputation like a sender that is always
// kept, so when everybody agrees AFA is the plain mean. Reputations live in
// the strategy value across rounds.
//
// Spec defaults (New("afa", Params{})): Xi0 = 2, DeltaXi = 0.25,
// Alpha0 = Beta0 = 3, BlockAt = 0.95; fields are used as set. A rounding
// margin of 1e-9 keeps inputs whose cosine differs from the threshold only
// by float error (identical inputs have σ ≈ 1e-16). Sender weights are
// p_k/Σ p, 0 for dropped, blocked and non-finite senders.
type AFA struct {
	Xi0, DeltaXi   float64
	Alpha0, Beta0  float64
	BlockAt        float64
	rep            map[int]*reputation
	p              peerInputs
	xs             [][]float32
	live           []Incoming
	blocked        []int
	ids            []int
	keep           []bool
	rw             []float64 // reputation weight per input
	cos, norm, tmp []float64
	center         []float64 // m − r, model-sized, reused
}

// Spec defaults of AFA.
const (
	AFAXi0     = 2.0
	AFADeltaXi = 0.25
	AFAPrior   = 3.0
	AFABlockAt = 0.95
)

type reputation struct {
	alpha, beta float64
	blocked     bool
}

func (a *AFA) Name() string { return "afa" }

// Share sends the trained model to every out-neighbor.
func (a *AFA) Share(v *View) []Outgoing { return shareModel(v) }

// Blocked reports whether AFA has blocked sender id.
func (a *AFA) Blocked(id int) bool {
	r := a.rep[id]
	return r != nil && r.blocked
}

// Reputation returns sender id's Beta parameters (the prior if unseen).
func (a *AFA) Reputation(id int) (alpha, beta float64) {
	if r := a.rep[id]; r != nil {
		return r.alpha, r.beta
	}
	return a.Alpha0, a.Beta0
}

func (a *AFA) reputationOf(id int) *reputation {
	if a.rep == nil {
		a.rep = make(map[int]*reputation)
	}
	r := a.rep[id]
	if r == nil {
		r = &reputation{alpha: a.Alpha0, beta: a.Beta0}
		a.rep[id] = r
	}
	return r
}

// Combine filters by cosine similarity, averages by reputation and updates
// the reputations.
func (a *AFA) Combine(v *View, in []Incoming) (map[int]float64, error) {
	if !(a.Xi0 > 0) || !(a.DeltaXi >= 0) || !(a.Alpha0 > 0) || !(a.Beta0 > 0) || !(a.BlockAt > 0 && a.BlockAt < 1) {
		return nil, errors.New("afa: need xi0 > 0, delta_xi >= 0, alpha0 > 0, beta0 > 0, block_at in (0, 1) (New(\"afa\", Params{}) gives the defaults)")
	}
	w := v.Model.Params()
	if err := a.p.gather(in, len(w)); err != nil {
		return nil, err
	}
	// Blocked senders take no part; they are reported with weight 0.
	live, blocked := a.live[:0], a.blocked[:0]
	for _, m := range a.p.xs {
		if a.Blocked(m.From) {
			blocked = append(blocked, m.From)
			continue
		}
		live = append(live, m)
	}
	a.live, a.blocked = live, blocked
	self, xs, ids := withOwn(&a.xs, &a.ids, v.ID, w, live)
	n := len(xs)
	ref := reference(v, len(w))
	a.keep = resize(a.keep, n)
	a.rw = resize(a.rw, n)
	a.cos = resize(a.cos, n)
	a.norm = resize(a.norm, n)
	a.center = resize(a.center, len(w))
	for k, id := range ids {
		a.keep[k] = true
		r := a.reputationOf(id)
		a.rw[k] = r.alpha / (r.alpha + r.beta)
		a.norm[k] = math.Sqrt(centeredDot(xs[k], xs[k], ref))
	}
	for xi := a.Xi0; ; xi += a.DeltaXi {
		a.weightedCenter(xs, ref)
		cn := math.Sqrt(dot64(a.center, a.center))
		a.tmp = a.tmp[:0]
		for k, x := range xs {
			if !a.keep[k] {
				continue
			}
			c := 0.0
			if cn > 0 && a.norm[k] > 0 {
				c = max(-1, min(1, centeredDotCenter(x, a.center, ref)/(cn*a.norm[k])))
			}
			a.cos[k] = c
			a.tmp = append(a.tmp, c)
		}
		mu, med, sd := stats(a.tmp)
		const margin = 1e-9
		dropped := false
		for k := range xs {
			if !a.keep[k] || k == self {
				continue
			}
			if (mu < med && a.cos[k] < med-xi*sd-margin) || (mu >= med && a.cos[k] > med+xi*sd+margin) {
				a.keep[k] = false
				dropped = true
			}
		}
		if !dropped {
			break
		}
	}
	// x_0 ← Σ p_k x_k / Σ p_k over the kept inputs.
	var total float64
	for k := range xs {
		if a.keep[k] {
			total += a.rw[k]
		}
	}
	a.p.coef = resize(a.p.coef, len(live))
	selfCoef := 0.0
	j := 0
	for k := range xs {
		c := 0.0
		if a.keep[k] {
			c = a.rw[k] / total
		}
		if k == self {
			selfCoef = c
			continue
		}
		a.p.coef[j] = c
		j++
	}
	if len(live) > 0 {
		mix(w, selfCoef, w, a.p.coef, live)
	}
	out := make(map[int]float64, len(a.p.xs)+len(a.p.bad))
	for k, m := range live {
		out[m.From] = a.p.coef[k]
	}
	for _, id := range blocked {
		out[id] = 0
	}
	for _, id := range a.p.bad {
		out[id] = 0
	}
	// Reputation update and blocking (the node's own is always kept).
	for k, id := range ids {
		r := a.reputationOf(id)
		if a.keep[k] {
			r.alpha++
		} else {
			r.beta++
		}
		if k != self && betaCDF(0.5, r.alpha, r.beta) > a.BlockAt {
			r.blocked = true
		}
	}
	return out, nil
}

// weightedCenter writes Σ p_k (x_k − r) / Σ p_k over the kept inputs into
// a.center, accumulating in input order.
func (a *AFA) weightedCenter(xs [][]float32, ref []float32) {
	clear(a.center)
	var total float64
	for k, x := range xs {
		if !a.keep[k] {
			continue
		}
		p := a.rw[k]
		total += p
		if ref == nil {
			for i, v := range x {
				a.center[i] += p * float64(v)
			}
		} else {
			for i, v := range x {
				a.center[i] += p * (float64(v) - float64(ref[i]))
			}
		}
	}
	for i := range a.center {
		a.center[i] /= total
	}
}

// stats returns the mean, median and population standard deviation of s
// (sorted in place).
func stats(s []float64) (mean, med, sd float64) {
	n := float64(len(s))
	for _, v := range s {
		mean += v
	}
	mean /= n
	for _, v := range s {
		sd += (v - mean) * (v - mean)
	}
	sd = math.Sqrt(sd / n)
	slices.Sort(s)
	if h := len(s) / 2; len(s)%2 == 1 {
		med = s[h]
	} else {
		med = (s[h-1] + s[h]) / 2
	}
	return mean, med, sd
}

// centeredDot returns (a − r)·(b − r), r nil meaning 0.
func centeredDot(a, b, r []float32) float64 {
	var d float64
	if r == nil {
		for i, v := range a {
			d += float64(v) * float64(b[i])
		}
		return d
	}
	for i, v := range a {
		ri := float64(r[i])
		d += (float64(v) - ri) * (float64(b[i]) - ri)
	}
	return d
}

// centeredDotCenter returns (x − r)·c.
func centeredDotCenter(x []float32, c []float64, r []float32) float64 {
	var d float64
	if r == nil {
		for i, v := range x {
			d += float64(v) * c[i]
		}
		return d
	}
	for i, v := range x {
		d += (float64(v) - float64(r[i])) * c[i]
	}
	return d
}

func dot64(a, b []float64) float64 {
	var d float64
	for i, v := range a {
		d += v * b[i]
	}
	return d
}
