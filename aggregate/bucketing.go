package aggregate

import (
	"fmt"
	"github.com/trellis-fl/trellis/internal/memsize"
	"math/rand/v2"
)

// Bucketing is the bucketing pre-aggregator of Karimireddy, He and Jaggi
// (ICLR 2022; "bucketing (s)" in docs/methods/toolbox.md): permute the inputs
// at random, average consecutive buckets of S, and hand the ceil(n/S) means
// to the rule. Averaging mixes faulty inputs with honest ones, which
// brings non-iid honest inputs closer together for the rule.
//
// The permutation is drawn from Rand, a stream the caller owns (derived
// from the experiment seed for determinism; DESIGN.md), which advances at
// every call so that each round gets a fresh permutation. When Rand is nil
// the first call creates it from Seed. The permutation applies to the
// inputs in their given (sender-id) order, so, by design, a permutation of
// the inputs changes the buckets: a chain with bucketing is deterministic
// for a given seed and input order, not permutation invariant. Bucket means
// are summed in float64 in bucket order. Credit gives each member of a
// bucket an equal share of the bucket's weight.
type Bucketing struct {
	// S is the bucket size (>= 1).
	S int
	// Seed seeds Rand when it is nil.
	Seed uint64
	// Rand draws the permutations.
	Rand *rand.Rand
	// Threads is the number of goroutines the coordinates are split across.
	Threads int

	perm []int
	mem  [][]float32 // the inputs in permuted order
	buf  []float32
	out  [][]float32
	n    int
	// The current Apply, while it runs.
	sp span
}

// Name implements Pre.
func (*Bucketing) Name() string { return "bucketing" }

// Apply implements Pre.
func (b *Bucketing) Apply(xs [][]float32) ([][]float32, error) {
	b.n = 0
	if b.S < 1 {
		return nil, fmt.Errorf("bucketing: bucket size s = %d, allowed range [1, ∞)", b.S)
	}
	d, err := sameLength("bucketing", xs)
	if err != nil {
		return nil, err
	}
	if b.Rand == nil {
		b.Rand = rand.New(rand.NewPCG(b.Seed, 0x6275636b6574)) // "bucket"
	}
	n := len(xs)
	b.perm = growInts(b.perm, n)
	for i := range b.perm {
		b.perm[i] = i
	}
	b.Rand.Shuffle(n, func(i, j int) { b.perm[i], b.perm[j] = b.perm[j], b.perm[i] })
	b.mem = b.mem[:0]
	for _, i := range b.perm {
		b.mem = append(b.mem, xs[i])
	}
	buckets := (n + b.S - 1) / b.S
	out := vectors(&b.buf, &b.out, buckets, d)
	b.sp = split(d, minGroup, 0)
	parallel(workers(b.Threads), b.sp.count, b)
	clear(b.mem)
	b.n = n
	return out, nil
}

// do implements task: the coordinates of group g of every bucket.
func (b *Bucketing) do(_, g int) {
	lo, hi := b.sp.bounds(g)
	for k, o := range b.out {
		meanRange(o[lo:hi], b.mem[k*b.S:min((k+1)*b.S, len(b.mem))], lo)
	}
}

// Credit implements Pre.
func (b *Bucketing) Credit(w []float64) []float64 {
	if b.n == 0 || len(w) != (b.n+b.S-1)/b.S {
		return nil
	}
	in := make([]float64, b.n)
	for k, i := range b.perm[:b.n] {
		bucket := k / b.S
		size := min((bucket+1)*b.S, b.n) - bucket*b.S
		in[i] = w[bucket] / float64(size)
	}
	return in
}

// bucketingScratch is up to n bucket means.
func bucketingScratch(n, dim int64) (int64, string) {
	return memsize.Alloc(memsize.Mul(4, n, dim)), fmt.Sprintf("up to %d bucket means", n)
}
