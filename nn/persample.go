package nn

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/trellis-fl/trellis/internal/memsize"
	"github.com/trellis-fl/trellis/vec"
	"unsafe"
)

// This file is sample-level differential privacy for training: DP-SGD
// (Abadi et al. 2016, "Deep Learning with Differential Privacy", Alg. 1).
// Each step clips every sample's gradient to L2 norm C, sums, adds
// N(0, (zC)² I) and divides by the (expected) batch size.
//
// Per-sample norms come from the layer inputs and output gradients the
// ordinary backward pass already has, never from n passes of batch 1:
//
//   - linear, g_i = δ_i a_iᵀ (weights) and δ_i (bias):
//     ‖g_i‖² = ‖a_i‖²·‖δ_i‖² + ‖δ_i‖² (Goodfellow 2015, "Efficient
//     per-example gradient computations").
//   - conv2d, with U_i = im2col(x_i) (Cin·k² × HoWo) and D_i = δ_i
//     (Cout × HoWo), G_i = D_i U_iᵀ. Either G_i is formed (Cout·Cin·k²·HoWo
//     multiply-adds, kept for the clipped sum) or, when HoWo·(Cout+Cin·k²)
//     is smaller, its norm comes from the Gram trick
//     ‖D_i U_iᵀ‖²_F = ⟨D_iᵀD_i, U_iᵀU_i⟩_F (Li et al. 2022, "Large language
//     models can be strong differentially private learners", ghost
//     clipping; Bu et al. 2022 choose between the two per layer as here).
//
// Clipping then scales each sample's output gradients δ_i by
// c_i = min(1, C/‖g_i‖), divided by the step's denominator (the batch, or
// q·|D| with Poisson sampling), and forms the parameter gradients once
// from the scaled δ (the "book-keeping" of Bu et al. 2023): the cost over
// a plain step is the norms, the noise draw (one pass over the gradient),
// and for conv layers one more product.
// Backward is linear in δ per sample only when no layer mixes samples, so
// batch norm is refused (as Opacus does).

// NoiseSource draws the randomness of DP-SGD: Gaussian noise, and for
// Poisson sampling exponential gaps. *rand.Rand (math/rand/v2) satisfies it,
// and so does every privacy.Source (seeded or crypto/rand).
type NoiseSource interface {
	NormFloat64() float64
	ExpFloat64() float64
}

// bulkNormal is a NoiseSource that adds sd·N(0, 1) to a whole vector at
// once (privacy.Stream does).
type bulkNormal interface {
	AddNormal(dst []float32, sd float32)
}

// DPSampling says how DP-SGD forms its batches, which decides how the
// steps may be accounted.
type DPSampling int

const (
	// ShuffledBatches visits src's batches in turn as Train does (fixed
	// size, a fresh order each pass). That is not Poisson sampling: account
	// the steps with privacy.Unamplified().
	ShuffledBatches DPSampling = iota
	// PoissonBatches includes each sample independently with probability
	// Rate, every step: it draws b ~ Binomial(|D|, Rate) from the noise
	// source and takes the first b samples after src.Reset, which must draw
	// a fresh uniformly random order (data.Batcher with an rng does). A
	// uniformly random b-subset with b binomial is exactly a Poisson sample;
	// account with privacy.Poisson(Rate). For a deployment claim, the
	// batcher's shuffle must be secret too (seeded from crypto/rand).
	PoissonBatches
)

// DPConfig is the DP-SGD setting.
type DPConfig struct {
	// Clip is the per-sample gradient L2 bound C (> 0).
	Clip float64
	// Multiplier is the noise multiplier z ≥ 0: noise N(0, (zC)²) per
	// coordinate on the clipped sum. z = 0 clips without privacy (tests,
	// ablations).
	Multiplier float64
	Sampling   DPSampling
	// Rate is the Poisson sampling rate q in (0, 1] (PoissonBatches only).
	Rate float64
}

// DPSGD trains a model with DP-SGD. It owns the per-sample buffers, sized
// for the model's batch once, so steps do not allocate; it is not safe for
// concurrent use, and the model must not be trained by anything else while
// a step runs.
//
// Memory beyond the model: per conv layer whose per-sample gradients are
// formed, B·(Cout·Cin·k² + Cout) float32; per conv layer using the Gram
// trick, 2·(HoWo)² float32; B float64 norms and B float32 factors.
type DPSGD struct {
	m      *Model
	cfg    DPConfig
	noise  NoiseSource
	dy     [][]float32 // per layer: the output gradient of the last pass
	lowest int         // index of the lowest layer with parameters
	convs  []*dpConv   // per layer (nil unless conv2d)
	norms2 []float64   // per-sample squared gradient norms
	scale  []float32   // per-sample factors c_i/denom (clip, then mean)
	lastN  int         // samples in the last chunk processed
	// forceGhost makes every conv layer use the Gram trick (tests).
	forceGhost bool
}

// dpConv is a conv layer's per-sample scratch.
type dpConv struct {
	ghost  bool
	gw, gb []float32 // B per-sample weight and bias gradients (formed mode)
	gd, gu []float32 // HoWo × HoWo Gram matrices (ghost mode)
	// dense is the batch's output gradient with rows Wo apart, when the
	// layer's comes at a wider pitch (conv2d.outPitch): the per-sample
	// products here take the plain layout.
	dense []float32
}

// NewDPSGD prepares DP-SGD for m. noise may be nil only when the multiplier
// is 0 and the sampling is not Poisson.
func NewDPSGD(m *Model, cfg DPConfig, noise NoiseSource) (*DPSGD, error) {
	if !(cfg.Clip > 0) || math.IsInf(cfg.Clip, 0) {
		return nil, fmt.Errorf("dp-sgd: clip = %v, need a finite value > 0", cfg.Clip)
	}
	if !(cfg.Multiplier >= 0) || math.IsInf(cfg.Multiplier, 0) {
		return nil, fmt.Errorf("dp-sgd: noise multiplier = %v, need a finite value ≥ 0", cfg.Multiplier)
	}
	switch cfg.Sampling {
	case ShuffledBatches:
	case PoissonBatches:
		if !(cfg.Rate > 0 && cfg.Rate <= 1) {
			return nil, fmt.Errorf("dp-sgd: Poisson sampling rate = %v, allowed range (0, 1]", cfg.Rate)
		}
	default:
		return nil, fmt.Errorf("dp-sgd: unknown sampling %d", cfg.Sampling)
	}
	if noise == nil && (cfg.Multiplier > 0 || cfg.Sampling == PoissonBatches) {
		return nil, fmt.Errorf("dp-sgd: a noise source is required")
	}
	d := &DPSGD{m: m, cfg: cfg, noise: noise, dy: make([][]float32, len(m.layers)),
		convs: make([]*dpConv, len(m.layers)), lowest: -1,
		norms2: make([]float64, m.batch), scale: make([]float32, m.batch)}
	for i, l := range m.layers {
		switch l := l.(type) {
		case *batchNorm:
			return nil, fmt.Errorf("dp-sgd: layer %d (%s) mixes the samples of a batch, so per-sample gradients are not defined; use a model without batch norm", i, l.kind())
		case *linear:
			if d.lowest < 0 {
				d.lowest = i
			}
		case *conv2d:
			if d.lowest < 0 {
				d.lowest = i
			}
			d.convs[i] = &dpConv{}
		}
	}
	d.sizeConvs()
	return d, nil
}

// sizeConvs picks each conv layer's mode by cost and sizes its scratch.
func (d *DPSGD) sizeConvs() {
	for i, dc := range d.convs {
		if dc == nil {
			continue
		}
		c := d.m.layers[i].(*conv2d)
		hw, kr := c.ho*c.wo, c.colRows()
		if c.outWide() {
			dc.dense = make([]float32, d.m.batch*c.cout*hw)
		}
		dc.ghost = d.forceGhost || hw*(c.cout+kr) < c.cout*kr
		if dc.ghost {
			dc.gd, dc.gu = make([]float32, hw*hw), make([]float32, hw*hw)
			dc.gw, dc.gb = nil, nil
		} else {
			dc.gw, dc.gb = make([]float32, d.m.batch*c.cout*kr), make([]float32, d.m.batch*c.cout)
			dc.gd, dc.gu = nil, nil
		}
	}
}

// dpFootprint counts what sizeConvs allocates for c with batches of up to
// n samples (Footprint.PerSample).
func (c *conv2d) dpFootprint(n int, fp *footprinter) {
	B, hw, kr, cout := int64(n), int64(c.ho*c.wo), int64(c.colRows()), int64(c.cout)
	if c.outWide() {
		fp.perSample(memsize.Mul(4, B, cout, hw))
	}
	if hw*(cout+kr) < cout*kr { // ghost norms
		fp.perSample(memsize.Mul(4, hw, hw))
		fp.perSample(memsize.Mul(4, hw, hw))
	} else {
		fp.perSample(memsize.Mul(4, B, cout, kr))
		fp.perSample(memsize.Mul(4, B, cout))
	}
	fp.perSample(int64(unsafe.Sizeof(dpConv{})))
}

// Config is the setting d was built with.
func (d *DPSGD) Config() DPConfig { return d.cfg }

// Norms writes the per-sample gradient norms ‖∇ℓ_i‖ (before clipping) of
// the last chunk of samples a step processed into dst, and returns how many.
func (d *DPSGD) Norms(dst []float64) int {
	n := min(len(dst), d.lastN)
	for i := range n {
		dst[i] = math.Sqrt(d.norms2[i])
	}
	return n
}

// Step is one DP-SGD step on the first n samples of x and y, a batch the
// caller chose (ShuffledBatches): clipped per-sample gradients summed, noise
// added, divided by n, then the optimizer step. It returns the summed loss.
func (d *DPSGD) Step(x []float32, y []int, n int, opt Optimizer, cfg TrainConfig, rng *rand.Rand) (float64, error) {
	d.m.Acquire()
	defer d.m.Release()
	if n < 1 || n > d.m.batch {
		return 0, fmt.Errorf("batch of %d samples: model buffers hold 1 to %d", n, d.m.batch)
	}
	clear(d.m.grads)
	loss, err := d.accumulate(x, y, n, 1/float64(n), rng)
	if err != nil {
		return 0, err
	}
	return loss, d.finish(float64(n), opt, cfg)
}

// PoissonStep is one DP-SGD step on a Poisson sample of src (PoissonBatches):
// a fresh order (src.Reset), b ~ Binomial(src.Len(), q), the first b samples
// in chunks of the model's batch size, noise, division by the expected
// batch size q·|D| (Abadi et al. 2016, Alg. 1 with lot size L = qN), the
// optimizer step. It returns the summed loss and b.
func (d *DPSGD) PoissonStep(src Batches, opt Optimizer, cfg TrainConfig, rng *rand.Rand) (float64, int, error) {
	d.m.Acquire()
	defer d.m.Release()
	if d.cfg.Sampling != PoissonBatches {
		return 0, 0, fmt.Errorf("dp-sgd: PoissonStep needs PoissonBatches sampling")
	}
	total := src.Len()
	b := binomial(d.noise, total, d.cfg.Rate)
	denom := d.cfg.Rate * float64(total)
	src.Reset()
	clear(d.m.grads)
	x, y := d.m.inputBuffers()
	var loss float64
	for left := b; left > 0; {
		k := src.Next(x, y[:min(left, d.m.batch)])
		if k == 0 {
			return 0, 0, fmt.Errorf("dp-sgd: the source ended after %d of %d samples of one pass", b-left, total)
		}
		l, err := d.accumulate(x, y, k, 1/denom, rng)
		if err != nil {
			return 0, 0, err
		}
		loss += l
		left -= k
	}
	return loss, b, d.finish(denom, opt, cfg)
}

// Train runs DP-SGD over src like Model.Train: cfg.Steps steps, or
// cfg.Epochs passes (with Poisson sampling an epoch is ⌈1/q⌉ steps). The
// proximal term and global clipping of cfg apply after the noise (they are
// post-processing and cost no privacy).
func (d *DPSGD) Train(src Batches, opt Optimizer, cfg TrainConfig, rng *rand.Rand) (TrainResult, error) {
	d.m.Acquire()
	defer d.m.Release()
	var res TrainResult
	m := d.m
	n := src.Len()
	if err := m.checkTrain(n, cfg); err != nil {
		return res, err
	}
	total := cfg.Steps
	if total == 0 {
		per := (n + m.batch - 1) / m.batch
		if d.cfg.Sampling == PoissonBatches {
			per = int(math.Ceil(1 / d.cfg.Rate))
		}
		total = cfg.Epochs * per
	}
	var lossSum float64
	x, y := m.inputBuffers()
	if d.cfg.Sampling == ShuffledBatches {
		src.Reset()
	}
	for res.Steps < total {
		var l float64
		var b int
		var err error
		if d.cfg.Sampling == PoissonBatches {
			l, b, err = d.PoissonStep(src, opt, cfg, rng)
		} else if b = src.Next(x, y); b == 0 {
			src.Reset() // the pass is over; Next starts the next one
			continue
		} else {
			l, err = d.Step(x, y, b, opt, cfg, rng)
		}
		if err != nil {
			return res, fmt.Errorf("dp-sgd step %d: %w", res.Steps, err)
		}
		lossSum += l
		res.Steps++
		res.Samples += b
	}
	if res.Samples > 0 {
		res.MeanLoss = lossSum / float64(res.Samples)
	}
	return res, nil
}

// finish adds the noise, N(0, (zC/denom)²) per coordinate, to the mean
// clipped gradient in Grads (accumulate divided by denom already, in the
// per-sample factors), applies cfg's post-processing and the optimizer.
func (d *DPSGD) finish(denom float64, opt Optimizer, cfg TrainConfig) error {
	m := d.m
	if sd := float32(d.cfg.Multiplier * d.cfg.Clip / denom); sd > 0 {
		// The noise draw is a large part of what DP-SGD adds to a step
		// (one normal per parameter, a pass over the gradient): a source
		// with a bulk AddNormal (privacy.Stream, SIMD) draws them in one
		// call; a concrete *rand.Rand is called directly rather than
		// through the interface.
		if b, ok := d.noise.(bulkNormal); ok {
			b.AddNormal(m.grads, sd)
		} else if r, ok := d.noise.(*rand.Rand); ok {
			for i := range m.grads {
				m.grads[i] += sd * float32(r.NormFloat64())
			}
		} else {
			for i := range m.grads {
				m.grads[i] += sd * float32(d.noise.NormFloat64())
			}
		}
	}
	if cfg.ProxMu > 0 {
		mu := float32(cfg.ProxMu)
		for i, w := range m.params {
			m.grads[i] += mu * (w - cfg.ProxRef[i])
		}
	}
	if cfg.ClipNorm > 0 {
		ClipGlobalNorm(m.grads, cfg.ClipNorm)
	}
	if ok, _ := vec.AllFinite(m.grads); !ok {
		return fmt.Errorf("non-finite DP-SGD gradient")
	}
	opt.Step(m.params, m.grads)
	return nil
}

// accumulate adds the clipped per-sample gradients of the first n samples
// of x and y, times inv (1 over the step's denominator: the mean is taken
// in the per-sample factors, not by another pass over the gradient), to
// Grads and returns their summed loss.
func (d *DPSGD) accumulate(x []float32, y []int, n int, inv float64, rng *rand.Rand) (float64, error) {
	m := d.m
	m.run = pass{eng: m.eng, train: true, rng: rng, perSample: true}
	p := &m.run
	logits := m.forward(p, x[:n*m.inSize], n)
	dl := m.dlogits[:n*m.classes]
	loss, err := m.head.Loss(logits, y[:n], n, m.classes, dl)
	if err != nil {
		return 0, err
	}
	if math.IsNaN(loss) || math.IsInf(loss, 0) {
		return 0, m.nonFinite("loss", x[:n*m.inSize], n)
	}
	// The head's gradient is of the mean loss; per-sample gradients are of
	// each sample's own loss.
	vec.Scale(float32(n), dl)
	d.lastN = n
	d.perSampleNorms(p, dl, n)
	for i := range n {
		nrm := math.Sqrt(d.norms2[i])
		if math.IsNaN(nrm) || math.IsInf(nrm, 0) {
			return 0, fmt.Errorf("non-finite per-sample gradient norm (sample %d of the batch)", i)
		}
		c := 1.0
		if nrm > d.cfg.Clip {
			c = d.cfg.Clip / nrm
		}
		d.scale[i] = float32(c * inv)
	}
	d.clippedGradients(p, n)
	return loss, nil
}

// perSampleNorms runs the backward pass for the output gradients only,
// keeping each parametric layer's δ and summing its per-sample squared
// gradient norms into norms2.
func (d *DPSGD) perSampleNorms(p *pass, g []float32, n int) {
	clear(d.norms2[:n])
	for i := len(d.m.layers) - 1; i >= d.lowest; i-- {
		switch l := d.m.layers[i].(type) {
		case *linear:
			d.dy[i] = g
			for s := range n {
				a2 := vec.SumSq(l.x[s*l.in : (s+1)*l.in])
				g2 := vec.SumSq(g[s*l.out : (s+1)*l.out])
				d.norms2[s] += a2*g2 + g2
			}
			if i == d.lowest {
				return
			}
			dx := l.dx[:n*l.in]
			p.eng.Sgemm(false, false, n, l.in, l.out, 1, g, l.out, l.w, l.in, 0, dx, l.in)
			g = dx
		case *conv2d:
			if dc := d.convs[i]; dc.dense != nil {
				g = l.denseRows(g, dc.dense, n)
			}
			d.dy[i] = g
			g = d.convNorms(p, l, d.convs[i], g, n, i > d.lowest)
		default:
			g = l.backward(p, g, n)
		}
	}
}

// convNorms adds conv layer c's per-sample squared gradient norms and
// returns its input gradient (nil when not needed).
func (d *DPSGD) convNorms(p *pass, c *conv2d, dc *dpConv, dy []float32, n int, needDx bool) []float32 {
	hw, in, out, kr := c.ho*c.wo, c.cin*c.h*c.w, c.cout*c.ho*c.wo, c.colRows()
	var dx []float32
	if needDx {
		dx = c.dx[:n*in]
		clear(dx)
	}
	for s := range n {
		dys := dy[s*out : (s+1)*out]
		c.im2col(c.x[s*in:(s+1)*in], c.col)
		var b2 float64
		for co := range c.cout {
			var r float64
			for _, v := range dys[co*hw : (co+1)*hw] {
				r += float64(v)
			}
			b2 += r * r
			if !dc.ghost {
				dc.gb[s*c.cout+co] = float32(r)
			}
		}
		if dc.ghost {
			// ‖D Uᵀ‖²_F = ⟨DᵀD, UᵀU⟩_F.
			p.eng.Sgemm(true, false, hw, hw, c.cout, 1, dys, hw, dys, hw, 0, dc.gd, hw)
			p.eng.Sgemm(true, false, hw, hw, kr, 1, c.col, hw, c.col, hw, 0, dc.gu, hw)
			d.norms2[s] += vec.Dot(dc.gd, dc.gu) + b2
		} else {
			gs := dc.gw[s*c.cout*kr : (s+1)*c.cout*kr]
			p.eng.Sgemm(false, true, c.cout, kr, hw, 1, dys, hw, c.col, hw, 0, gs, kr)
			d.norms2[s] += vec.SumSq(gs) + b2
		}
		if needDx {
			p.eng.Sgemm(true, false, kr, hw, c.cout, 1, c.wt, kr, dys, hw, 0, c.dcol, hw)
			c.col2im(c.dcol, dx[s*in:(s+1)*in])
		}
	}
	return dx
}

// clippedGradients adds Σ_i s_i g_i (s_i = d.scale[i], the clip factor
// over the step's denominator) to Grads from the kept δ (or the
// formed per-sample conv gradients).
func (d *DPSGD) clippedGradients(p *pass, n int) {
	cs := d.scale[:n]
	for i := len(d.m.layers) - 1; i >= d.lowest; i-- {
		switch l := d.m.layers[i].(type) {
		case *linear:
			dy := d.dy[i][:n*l.out]
			for s, c := range cs {
				vec.Scale(c, dy[s*l.out:(s+1)*l.out])
			}
			p.eng.Sgemm(true, false, l.out, l.in, n, 1, dy, l.out, l.x, l.in, 1, l.gw, l.in)
			for s := range n {
				vec.Axpy(1, dy[s*l.out:(s+1)*l.out], l.gb)
			}
		case *conv2d:
			d.convClipped(p, l, d.convs[i], d.dy[i], cs)
		}
	}
}

func (d *DPSGD) convClipped(p *pass, c *conv2d, dc *dpConv, dy []float32, cs []float32) {
	n := len(cs)
	hw, in, out, kr := c.ho*c.wo, c.cin*c.h*c.w, c.cout*c.ho*c.wo, c.colRows()
	if !dc.ghost {
		// gw += cᵀ·G over the formed per-sample gradients (a 1×n by
		// n×(Cout·Cin·k²) product).
		nw := c.cout * kr
		p.eng.Sgemm(false, false, 1, nw, n, 1, cs, n, dc.gw[:n*nw], nw, 1, c.gw, nw)
		p.eng.Sgemm(false, false, 1, c.cout, n, 1, cs, n, dc.gb[:n*c.cout], c.cout, 1, c.gb, c.cout)
		return
	}
	for s, f := range cs {
		dys := dy[s*out : (s+1)*out]
		c.im2col(c.x[s*in:(s+1)*in], c.col)
		p.eng.Sgemm(false, true, c.cout, kr, hw, f, dys, hw, c.col, hw, 1, c.gw, kr)
		for co := range c.cout {
			var r float32
			for _, v := range dys[co*hw : (co+1)*hw] {
				r += v
			}
			c.gb[co] += f * r
		}
	}
}

// binomial draws Binomial(n, q) by counting the successes of n Bernoulli(q)
// trials through their geometric gaps: the gap before the next success is
// ⌊E / −log(1−q)⌋ failures for E ~ Exp(1) (the waiting-time method;
// Devroye 1986, "Non-Uniform Random Variate Generation", Ch. X), so a draw
// costs O(nq), not O(n).
func binomial(r NoiseSource, n int, q float64) int {
	if q >= 1 {
		return n
	}
	rate := -math.Log1p(-q)
	k, pos := 0, 0.0
	for {
		pos += math.Floor(r.ExpFloat64()/rate) + 1
		if pos > float64(n) {
			return k
		}
		k++
	}
}
