package consensus

// Plain runs average consensus without privacy: every node sends x_i(k) to
// its neighbours and sets x(k+1) = W x(k) with Metropolis–Hastings weights
// (the baseline of §3.2.2; its first message is x_i(0) itself).
func Plain(p *Problem) (*Trace, error) {
	if err := p.check(); err != nil {
		return nil, err
	}
	w, err := Metropolis(p.G)
	if err != nil {
		return nil, err
	}
	t := newTrace(p)
	x := append([]float64(nil), p.X0...)
	t.observe(x)
	for k := range p.Iters {
		t.broadcast(p, k, x)
		x = w.Mix(x)
		t.observe(x)
	}
	t.finish(x)
	return t, nil
}
