package data

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// Fractions of a client's samples for training, validation and test
// (defaults 0.7 / 0.1 / 0.2). The zero value means the
// defaults.
type Fractions struct {
	Train, Val, Test float64
}

// DefaultFractions returns 0.7 / 0.1 / 0.2.
func DefaultFractions() Fractions { return Fractions{Train: 0.7, Val: 0.1, Test: 0.2} }

func (f Fractions) orDefault() Fractions {
	if f == (Fractions{}) {
		return DefaultFractions()
	}
	return f
}

func (f Fractions) validate() error {
	for _, v := range []float64{f.Train, f.Val, f.Test} {
		if !(v >= 0 && v <= 1) {
			return fmt.Errorf("data: split fractions %+v: each must be in [0, 1]", f)
		}
	}
	if f.Train == 0 {
		return fmt.Errorf("data: split fractions %+v: the training fraction must be positive", f)
	}
	if s := f.Train + f.Val + f.Test; math.Abs(s-1) > 1e-9 {
		return fmt.Errorf("data: split fractions %+v sum to %v, not 1", f, s)
	}
	return nil
}

// ClientSplit is one client's train / validation / test samples, as
// indices into the dataset. The three are windows of the client's list in
// its Partition (no copy).
type ClientSplit struct {
	Train, Val, Test []int32
}

// SplitClients splits each client's samples into train, validation and
// test, stratified by label, with client i's randomness drawn from (seed,
// i). It reorders each p.Clients[i] in place so that its train, validation
// and test samples are consecutive; the returned splits are windows of those
// lists, so splitting costs no index memory. Every sample of the partition
// ends in exactly one split of its client.
func SplitClients(d *Dataset, p *Partition, fr Fractions, seed uint64) ([]ClientSplit, error) {
	fr = fr.orDefault()
	if err := fr.validate(); err != nil {
		return nil, err
	}
	out := make([]ClientSplit, len(p.Clients))
	sc := newSplitter(d.NumClasses())
	for i, idx := range p.Clients {
		out[i] = sc.split(idx, d.Y, fr, stream(seed, purposeSplit, uint64(i)))
	}
	return out, nil
}

// HoldOut carves a stratified test set of about testFrac of the pool (for
// datasets without an official test set, such as PAMAP2): rest and test are
// windows of one new copy of the pool.
func HoldOut(d *Dataset, pool []int32, testFrac float64, seed uint64) (rest, test []int32, err error) {
	fr := Fractions{Train: 1 - testFrac, Test: testFrac}
	if err := fr.validate(); err != nil {
		return nil, nil, err
	}
	if pool == nil {
		pool = d.All()
	} else {
		pool = append([]int32(nil), pool...)
	}
	s := newSplitter(d.NumClasses()).split(pool, d.Y, fr, stream(seed, purposeHoldOut, 0))
	return s.Train, s.Test, nil
}

// splitter holds scratch space reused across clients.
type splitter struct {
	count   []int
	scratch []int32
	dest    []uint8
}

func newSplitter(k int) *splitter { return &splitter{count: make([]int, k)} }

// split reorders idx into [train | val | test] and returns the windows.
//
// Stratification: after a shuffle, the samples are ordered by class and
// dealt to the three parts in that order, each next sample going to the part
// furthest behind its quota (largest target·t/n − assigned). Every class's
// run is therefore spread over the parts in proportion to the fractions (to
// within one sample per class and part), and the part sizes are exactly the
// rounded targets. With few samples per class this degrades gracefully to a
// plain random split.
func (s *splitter) split(idx []int32, labels []int, fr Fractions, r *rand.Rand) ClientSplit {
	n := len(idx)
	nVal := int(math.Round(fr.Val * float64(n)))
	nTest := int(math.Round(fr.Test * float64(n)))
	for n > 0 && nVal+nTest > n-1 { // keep at least one training sample
		if nTest >= nVal && nTest > 0 {
			nTest--
		} else {
			nVal--
		}
	}
	target := [3]int{n - nVal - nTest, nVal, nTest}

	shuffle32(r, idx)
	// Counting sort by label into scratch (stable, so the shuffle decides
	// the order within a class).
	clear(s.count)
	for _, i := range idx {
		s.count[labels[i]]++
	}
	off := 0
	for c, k := range s.count {
		s.count[c] = off
		off += k
	}
	if cap(s.scratch) < n {
		s.scratch = make([]int32, n)
		s.dest = make([]uint8, n)
	}
	sorted, dest := s.scratch[:n], s.dest[:n]
	for _, i := range idx {
		c := labels[i]
		sorted[s.count[c]] = i
		s.count[c]++
	}
	var assigned [3]int
	for t := range n {
		best := -1
		var bestDef int64
		for p := range 3 {
			if assigned[p] == target[p] {
				continue
			}
			def := int64(target[p])*int64(t+1) - int64(assigned[p])*int64(n)
			if best < 0 || def > bestDef {
				best, bestDef = p, def
			}
		}
		dest[t] = uint8(best)
		assigned[best]++
	}
	start := [3]int{0, target[0], target[0] + target[1]}
	for t, i := range sorted {
		p := dest[t]
		idx[start[p]] = i
		start[p]++
	}
	cs := ClientSplit{
		Train: idx[:target[0]:target[0]],
		Val:   idx[target[0] : target[0]+target[1] : target[0]+target[1]],
		Test:  idx[target[0]+target[1] : n : n],
	}
	// Within each part, a random order rather than class order.
	shuffle32(r, cs.Train)
	shuffle32(r, cs.Val)
	shuffle32(r, cs.Test)
	return cs
}
