package inversion

import (
	"math"
	"slices"
)

// LabelOne is iDLG's label recovery for one sample (Zhao et al. 2020):
// the last layer's bias gradient is e = p − onehot(y), and only the true
// class has e_c < 0, so the argmin is the label — exactly, for an
// un-noised gradient of one sample. When the last layer's inputs are
// non-negative (ReLU outputs: the MLP), row c of its weight gradient is
// e_c·h with h ≥ 0, and the score gb_c + Σ_j gW_cj = e_c(1 + Σ_j h_j) has
// the same sign while pooling the row's values, the better guess for a
// noisy gradient. Logreg's inputs are normalized pixels of either sign:
// the bias alone. g is a gradient (or a positive multiple of one: an
// update divided by −lr) in the flat layout.
func (n *Net) LabelOne(g []float64) int { return n.last().LabelOne(g) }

// LabelOne is iDLG's rule (Net.LabelOne) on the last layer alone.
func (h LastLayer) LabelOne(g []float64) int {
	gw, gb := h.weightGrad(g), h.biasGrad(g)
	in := h.In
	best, arg := math.Inf(1), 0
	for c, b := range gb {
		s := b
		if h.NonNeg {
			for _, v := range gw[c*in : (c+1)*in] {
				s += v
			}
		}
		if s < best {
			best, arg = s, c
		}
	}
	return arg
}

// LabelCounts recovers the labels of a batch of size batch from the last
// layer's bias gradient, gb_c = p̄_c − n_c/batch (p̄ the batch's mean
// softmax output): n_c = batch·(p̄_c − gb_c). The attacker does not know
// p̄; meanProbs is its estimate (the model's mean prediction on the
// attacker's own data: the model is the victim's start model, which it
// knows). The counts are rounded to sum to batch by largest remainders;
// the result is the multiset of labels, sorted. For batch 1 use LabelOne.
func (n *Net) LabelCounts(g []float64, batch int, meanProbs []float64) []int {
	return n.last().LabelCounts(g, batch, meanProbs)
}

// LabelCounts is the bias-gradient count rule (Net.LabelCounts) on the
// last layer alone.
func (h LastLayer) LabelCounts(g []float64, batch int, meanProbs []float64) []int {
	gb := h.biasGrad(g)
	K := len(gb)
	est := make([]float64, K)
	for c := range K {
		est[c] = max(0, float64(batch)*(meanProbs[c]-gb[c]))
	}
	counts := make([]int, K)
	total := 0
	for c, e := range est {
		counts[c] = int(math.Floor(e))
		total += counts[c]
	}
	// Too few: one more to the classes of the largest remainders, in
	// turn. Too many (noise): one less from the smallest estimates up.
	order := make([]int, K)
	for c := range order {
		order[c] = c
	}
	frac := func(c int) float64 { return est[c] - float64(counts[c]) }
	slices.SortStableFunc(order, func(a, b int) int { return cmpDesc(frac(a), frac(b)) })
	for i := 0; total < batch; i = (i + 1) % K {
		counts[order[i]]++
		total++
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmpDesc(est[a], est[b]) })
	for i := K - 1; total > batch; {
		if counts[order[i]] > 0 {
			counts[order[i]]--
			total--
		} else {
			i--
		}
	}
	var labels []int
	for c, k := range counts {
		for range k {
			labels = append(labels, c)
		}
	}
	return labels
}

func cmpDesc(a, b float64) int {
	switch {
	case a > b:
		return -1
	case a < b:
		return 1
	}
	return 0
}

// LabelHits is how many of truth's labels (a multiset) guess holds.
func LabelHits(guess, truth []int) int {
	left := map[int]int{}
	for _, c := range guess {
		left[c]++
	}
	hits := 0
	for _, c := range truth {
		if left[c] > 0 {
			left[c]--
			hits++
		}
	}
	return hits
}

// MeanProbs is the net's mean softmax output over the samples x
// (sample-major): the attacker's p̄ for LabelCounts, from its own data.
func (n *Net) MeanProbs(x []float64) []float64 {
	D, L := n.Input(), n.Layers()
	t := n.newTrace()
	out := make([]float64, n.Classes())
	k := len(x) / D
	for i := range k {
		n.run(t, x[i*D:(i+1)*D], 0)
		axpy(out, 1/float64(k), t.h[L])
	}
	return out
}
