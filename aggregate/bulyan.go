package aggregate

import (
	"fmt"
	"github.com/trellis-fl/trellis/internal/memsize"
	"slices"
)

// Bulyan is the rule of El Mhamdi, Guerraoui and Rouault (ICML 2018),
// "bulyan" in docs/methods/toolbox.md: select θ = n − 2f inputs by iterated
// Krum (each round picks the input with the lowest Krum score among those
// not yet picked, scored against the not-yet-picked ones with
// max(0, r − f − 2) neighbors for r of them, and removes it), then per
// coordinate average the β = θ − 2f = n − 4f selected values closest to
// their median. It needs n > 4f + 3.
//
// The distances come from a Gram-matrix product (see gram) reused by
// every round. Per coordinate the selected values are sorted; the β closest
// to the median are a window of the sorted values, found by dropping, 2f
// times, whichever end of the window is farther from the median (the upper
// one on a tie), and summed in ascending order. Rounds break equal scores
// by contents, then index, so the output is bit-identical under any
// permutation of the inputs and for every thread count. Weights gives each
// input its share of use: per coordinate 1/β to each of the β values
// averaged, averaged over coordinates (0 for inputs never selected).
//
// A Bulyan holds scratch: use it through a pointer, from one goroutine at a
// time.
type Bulyan struct {
	// F is the number of faulty inputs to tolerate.
	F int
	// Threads is the number of goroutines the work is split across (0 or 1:
	// the caller's only). The output does not depend on it.
	Threads int

	s      screen
	g      gram
	rk     ranker
	c      columns
	scores []float64
	row    []float64
	rest   []int
	picked []int // kept-input indices in the order Krum picked them
	sel    [][]float32
	k      bulyanKernel
}

// Name implements Rule.
func (*Bulyan) Name() string { return "bulyan" }

// Aggregate implements Rule.
func (b *Bulyan) Aggregate(dst []float32, xs [][]float32) error {
	if b.F < 0 {
		b.s.fail()
		return fmt.Errorf("bulyan: f = %d, allowed range [0, ∞)", b.F)
	}
	xs, _, err := b.s.in("bulyan", dst, xs, b.Threads)
	if err != nil {
		return err
	}
	n, f := len(xs), b.F
	if f >= n || n <= 4*f+3 { // f >= n first: 4f+3 could overflow
		b.s.fail()
		return b.s.tooFew("bulyan", n, f, fmt.Sprintf("n > 4f + 3 = %d", 4*f+3))
	}
	b.g.run(xs, b.Threads)
	b.rest = growInts(b.rest, n)
	for i := range b.rest {
		b.rest[i] = i
	}
	b.scores, b.row = growFloats(b.scores, n), growFloats(b.row, n)
	b.rk.reset(n)
	theta := n - 2*f
	b.picked = b.picked[:0]
	rest := b.rest
	for range theta {
		krumScores(b.scores, b.g.d2, n, rest, f, b.row)
		b.rk.sort(rest, xs, b.scores)
		b.picked = append(b.picked, rest[0])
		rest = rest[1:]
	}
	b.sel = b.sel[:0]
	for _, i := range b.picked {
		b.sel = append(b.sel, xs[i])
	}
	b.k = bulyanKernel{drop: 2 * f}
	b.c.run(dst, b.sel, b.Threads, &b.k)
	clear(b.sel)
	b.s.done()
	return nil
}

// Weights implements Selector.
func (b *Bulyan) Weights() []float64 {
	if b.s.n == 0 {
		return nil
	}
	ws := b.c.weights() // over the picked inputs
	w := make([]float64, len(b.s.bad)-b.s.dropped)
	for k, i := range b.picked {
		w[i] = ws[k]
	}
	return b.s.expand(w)
}

// Dropped implements Dropper.
func (b *Bulyan) Dropped() int { return b.s.Dropped() }

// bulyanKernel averages the θ − drop values of a coordinate closest to its
// median.
type bulyanKernel struct{ drop int }

func (k *bulyanKernel) coord(c *coords, keys []uint64, _ int) float32 {
	t := len(keys)
	s := c.a[:t]
	copy(s, keys)
	slices.Sort(s)
	var med float64
	if t%2 == 1 {
		med = float64(keyValue(s[t/2]))
	} else {
		med = (float64(keyValue(s[t/2-1])) + float64(keyValue(s[t/2]))) / 2
	}
	lo, hi := 0, t-1
	for range k.drop {
		if med-float64(keyValue(s[lo])) > float64(keyValue(s[hi]))-med {
			lo++
		} else {
			hi--
		}
	}
	var sum float64
	for _, key := range s[lo : hi+1] {
		sum += float64(keyValue(key))
		c.counts[keyInput(key)]++
	}
	return float32(sum / float64(hi-lo+1))
}

// bulyanScratch is the Gram matrix's (the selection) and the
// coordinate-wise trimmed mean's over the selected inputs.
func bulyanScratch(n, dim int64) (int64, string) {
	g, _ := gramScratch(n, dim)
	c, _ := columnsScratch(n, dim)
	return memsize.Add(g, c, 3*memsize.Alloc(8*n)), ""
}
