package consensus

import (
	"math"
	"slices"
)

// Curious is an honest-but-curious coalition: the colluders C, neighbours
// of the target, follow the protocol and pool what they received, their own
// states and private randomness, the public graph and weights, and the
// value they converged to, to estimate the target's x_i(0). Each method's
// Recover below is the best estimator we built for it; when the coalition
// lacks what the exact attack needs it falls back to a guess that does not
// use the target's messages (the coalition's own final value, ≈ x̄), or, for
// the DP methods, to the target's first noisy message.
type Curious struct {
	Target    int
	Colluders []int
}

func (c Curious) has(j int) bool { return slices.Contains(c.Colluders, j) }

// View is every message a colluder received, in the order sent.
func (c Curious) View(t *Trace) []Message {
	var v []Message
	for _, m := range t.Msgs {
		if c.has(m.To) {
			v = append(v, m)
		}
	}
	return v
}

// coversNeighbours reports whether every neighbour of the target colludes.
func (c Curious) coversNeighbours(p *Problem) bool {
	for _, j := range p.G.Out(c.Target) {
		if !c.has(j) {
			return false
		}
	}
	return true
}

// fallback is the coalition's own final estimate (its first member's).
func (c Curious) fallback(t *Trace) float64 { return t.Final[c.Colluders[0]] }

// series returns, per iteration, the State values that from sent to a
// colluder (or that a colluder itself sent, when from colludes), NaN where
// none was seen.
func (c Curious) series(p *Problem, t *Trace, from int) []float64 {
	s := make([]float64, p.Iters)
	for k := range s {
		s[k] = math.NaN()
	}
	for _, m := range t.Msgs {
		if m.From == from && m.Kind == State && (c.has(m.To) || c.has(from)) {
			s[m.Iter] = m.Value
		}
	}
	return s
}

// FirstMessage is the target's first State message to a colluder (NaN if
// none): x_i(0) itself under Plain, x_i(0) + noise under the DP methods.
func (c Curious) FirstMessage(t *Trace) float64 {
	for _, m := range t.Msgs {
		if m.From == c.Target && m.Kind == State && c.has(m.To) {
			return m.Value
		}
	}
	return math.NaN()
}

// RecoverPlain reads x_i(0) off the first message: exact.
func (c Curious) RecoverPlain(t *Trace) float64 { return c.FirstMessage(t) }

// RecoverDP uses the first noisy message θ_i(0) = x_i(0) + η_i(0): with all
// neighbours colluding, the later messages reveal η_i(k) for k ≥ 1 (given
// θ(k), x_i(k+1) is public) but nothing more about η_i(0).
func (c Curious) RecoverDP(t *Trace) float64 { return c.FirstMessage(t) }

// RecoverDecomp attacks StateDecomposition. With all of N_i colluding the
// coalition knows every flow into α_i, so it knows
// d(k) = α_i(k+1) − α_i(k) − ε Σ_j a_ij(k)(α_j(k) − α_i(k)) = β_i(k) − β_i(k+1),
// hence β_i(0) = β_i(T−1) + Σ_{k<T−1} d(k) with β_i(T−1) ≈ x̄, and
// x_i(0) = (α_i(0) + β_i(0))/2. Short of that, a non-colluding neighbour m
// hides the first step's flow a_im(0)(α_m(0) − α_i(0)), and the coalition
// falls back to x̄.
func (c Curious) RecoverDecomp(p *Problem, s StateDecomposition, t *Trace) float64 {
	i := c.Target
	if !c.coversNeighbours(p) || p.Iters < 2 {
		return c.fallback(t)
	}
	edge := s.Edge
	if edge == nil {
		edge = func(i, j, k int) float64 { return s.DefaultEdge(p.Seed, i, j, k) }
	}
	eps := s.Step(maxDegree(p.G))
	ai := c.series(p, t, i)
	nb := map[int][]float64{}
	for _, j := range p.G.Out(i) {
		nb[j] = c.series(p, t, j) // the colluder's own α_j
	}
	sum := 0.0
	for k := 0; k+1 < p.Iters; k++ {
		flow := 0.0
		for _, j := range p.G.Out(i) {
			flow += edge(i, j, k) * (nb[j][k] - ai[k]) // a colluder knows its own edge's weight
		}
		sum += ai[k+1] - ai[k] - eps*flow
	}
	beta0 := c.fallback(t) + sum
	return (ai[0] + beta0) / 2
}

// RecoverOffsets attacks Offsets. The weights are public, so once the
// coalition sees the states of i and of all its neighbours (each a colluder
// or a colluder's neighbour), x_i(k+1) − Σ_j w_ij x_j(k) = u_i(k+1) and the
// zero sum gives v_i = x_i(0) + Σ_{k≥0} u_i(k+1). Otherwise it falls back
// to x̄.
func (c Curious) RecoverOffsets(p *Problem, t *Trace) float64 {
	i := c.Target
	w, err := Metropolis(p.G)
	if err != nil || p.Iters < 2 {
		return math.NaN()
	}
	xi := c.series(p, t, i)
	nb := map[int][]float64{}
	for _, j := range p.G.Out(i) {
		nb[j] = c.series(p, t, j)
		if math.IsNaN(nb[j][0]) {
			return c.fallback(t)
		}
	}
	if math.IsNaN(xi[0]) {
		return c.fallback(t)
	}
	v := xi[0]
	for k := 0; k+1 < p.Iters; k++ {
		mix := w.Self[i] * xi[k]
		for q, j := range p.G.Out(i) {
			mix += w.Nbr[i][q] * nb[j][k]
		}
		v += xi[k+1] - mix
	}
	return v
}

// RecoverEncrypted attacks Encrypted. A colluder j decrypts
// a_{i→j}(k)(x_i(k) − x_j(k)) from i's reply and knows its own a_{j→i}(k),
// so it knows the flow ε a_ij(k)(x_j − x_i) on its edge; with all of N_i
// colluding the coalition knows x_i(T) − x_i(0), and x_i(T) ≈ x̄. Otherwise
// it falls back to x̄: the ciphertexts under i's key are opaque to it.
func (c Curious) RecoverEncrypted(p *Problem, e Encrypted, t *Trace) float64 {
	i := c.Target
	if !c.coversNeighbours(p) {
		return c.fallback(t)
	}
	e = e.def()
	eps := e.Eps
	if eps == 0 {
		eps = 1 / float64(maxDegree(p.G)+1)
	}
	sum := 0.0
	for _, m := range t.Msgs {
		if m.Kind == Reply && m.From == i && c.has(m.To) {
			a := math.Ldexp(float64(e.Weight(p.Seed, m.To, i, m.Iter)), -e.WeightBits)
			sum -= eps * a * m.Value // the flow into i on edge (i, m.To)
		}
	}
	return c.fallback(t) - sum
}

// RecoverPushSum attacks PushSum (and reads the ratio of any push): the
// target's first push to a colluder carries s x_i(0) and s y_i(0) = s, so
// their ratio is x_i(0) whatever the share s, public or not. A coalition
// with no out-neighbour of the target falls back to x̄.
func (c Curious) RecoverPushSum(t *Trace) float64 {
	var x, y float64
	seen := 0
	for _, m := range t.Msgs {
		if m.From != c.Target || m.Iter != 0 || !c.has(m.To) {
			continue
		}
		switch m.Kind {
		case State:
			x, seen = m.Value, seen+1
		case Mass:
			y, seen = m.Value, seen+1
		}
		if seen == 2 {
			return x / y
		}
	}
	return c.fallback(t)
}

// RecoverDynamicDP attacks DynamicDP with every neighbour colluding: node
// i's update is public but for its own noise, so
// θ_i(k+1) − θ_i(k) − γ_k Σ_j w_ij (θ_j(k) − θ_i(k)) = Δr_i(k) + η_i(k+1) − η_i(k),
// which telescopes from θ_i(0) = r_i(0) + η_i(0) to r_i(T−1) + η_i(T−1):
// the last reference behind one (the largest) noise draw. Short of every
// neighbour it returns the target's last noisy message.
func (c Curious) RecoverDynamicDP(p *Problem, d DynamicDP, t *Trace) float64 {
	i := c.Target
	th := c.series(p, t, i)
	if p.Iters < 1 || math.IsNaN(th[0]) {
		return c.fallback(t)
	}
	if !c.coversNeighbours(p) {
		return th[p.Iters-1]
	}
	w, err := Metropolis(p.G)
	_, gamma, err2 := d.schedule(p.Iters)
	if err != nil || err2 != nil {
		return math.NaN()
	}
	nb := map[int][]float64{}
	for _, j := range p.G.Out(i) {
		nb[j] = c.series(p, t, j)
	}
	est := th[0]
	for k := 0; k+1 < p.Iters; k++ {
		s := 0.0
		for q, j := range p.G.Out(i) {
			s += w.Nbr[i][q] * (nb[j][k] - th[k])
		}
		est += th[k+1] - th[k] - gamma[k]*s
	}
	return est
}

// RecoverDynamicPlain attacks PlainDynamic: one colluder reads r_i(0) off
// the first message; with every neighbour colluding the public weights give
// each increment, r_i(k+1) − r_i(k) = x_i(k+1) − Σ_j w_ij x_j(k), hence
// r_i(T−1) = x_i(T−1)'s telescoped sum. last selects which the coalition
// estimates (r_i(T−1) needs every neighbour, else falls back to r̄).
func (c Curious) RecoverDynamicPlain(p *Problem, t *Trace, last bool) float64 {
	if !last {
		return c.RecoverPlain(t)
	}
	if !c.coversNeighbours(p) || p.Iters < 1 {
		return c.fallback(t)
	}
	// Offsets' attack is exactly this sum with u = Δr and v = r_i(0).
	return c.RecoverOffsets(p, t)
}

// RecoverPushSumDecomp attacks PushSumDecomposition when every in- and
// out-neighbour of the target colludes. Its first push's two parts have
// the ratio α_i^x(0)/α_i^y(0) = α_i^x(0); after step 0 the public shares
// 1/(d⁺_i + 2) give α_i(k) from any push. The pair (α_i, β_i) gains
// exactly the inflows I(k) (the colluders' own pushes) and loses the
// outflows O(k) (pushes the colluders received), so
// β_i(k) − β_i(k+1) = α_i(k+1) − α_i(k) + O(k) − I(k) for both masses:
// summed, it gives β_i^y(T−1) from β_i^y(0) = 1, then
// β_i^x(T−1) ≈ x̄ β_i^y(T−1) once the ratios agree, then β_i^x(0), and
// x_i(0) = (α_i^x(0) + β_i^x(0))/2. Short of every neighbour it falls
// back to x̄.
func (c Curious) RecoverPushSumDecomp(p *Problem, t *Trace) float64 {
	i := c.Target
	for _, j := range append(slices.Clone(p.G.Out(i)), p.G.In(i)...) {
		if !c.has(j) {
			return c.fallback(t)
		}
	}
	if p.Iters < 2 {
		return c.fallback(t)
	}
	T := p.Iters
	ax, ay := make([]float64, T), make([]float64, T) // α_i(k), k < T
	ox, oy := make([]float64, T), make([]float64, T) // outflows
	ix, iy := make([]float64, T), make([]float64, T) // inflows
	first := [2]float64{math.NaN(), math.NaN()}
	d := float64(p.G.OutDegree(i) + 2)
	for _, m := range t.Msgs {
		k := m.Iter
		switch {
		case m.From == i && c.has(m.To):
			if m.Kind == State {
				ox[k] += m.Value
				ax[k] = m.Value * d
				if k == 0 {
					first[0] = m.Value
				}
			} else {
				oy[k] += m.Value
				ay[k] = m.Value * d
				if k == 0 {
					first[1] = m.Value
				}
			}
		case m.To == i && c.has(m.From):
			if m.Kind == State {
				ix[k] += m.Value
			} else {
				iy[k] += m.Value
			}
		}
	}
	ax[0], ay[0] = first[0]/first[1], 1
	sx, sy := 0.0, 0.0 // β(0) − β(T−1)
	for k := 0; k+1 < T; k++ {
		sx += ax[k+1] - ax[k] + ox[k] - ix[k]
		sy += ay[k+1] - ay[k] + oy[k] - iy[k]
	}
	betaX := c.fallback(t)*(1-sy) + sx
	return (ax[0] + betaX) / 2
}
