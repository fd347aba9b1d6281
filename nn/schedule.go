package nn

// RoundScheduled is a part of a model whose training objective depends on
// the round: the evidential head's KL weight anneals over the run
// (docs/methods/murmura.md).
type RoundScheduled interface {
	SetRound(round, rounds int)
}

// SetRound tells the model's round-scheduled parts that round (0-based, of
// rounds) is about to be trained. Models without such parts ignore it.
func (m *Model) SetRound(round, rounds int) {
	if h, ok := m.head.(RoundScheduled); ok {
		h.SetRound(round, rounds)
	}
}

// SetRound sets Lambda to the annealed KL weight of the round (docs/methods/murmura.md:
// λ_t = λ_max · min(1, t/T_anneal)).
func (h *Evidential) SetRound(round, rounds int) {
	h.Lambda = AnnealedLambda(round, rounds, EvidentialLambdaMax)
}
