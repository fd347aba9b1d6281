package data

import (
	"slices"
	"testing"
)

func TestSplitSizesAndStratification(t *testing.T) {
	d := labelled(5000, 5, 1, 11)
	p, err := NewPartition(d, PartitionConfig{Method: IID, Clients: 4, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	before := make([][]int32, 4)
	for i, c := range p.Clients {
		before[i] = slices.Sorted(slices.Values(c))
	}
	splits, err := SplitClients(d, p, Fractions{}, 2)
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range splits {
		n := len(p.Clients[i])
		if len(s.Test) != roundHalf(0.2*float64(n)) || len(s.Val) != roundHalf(0.1*float64(n)) ||
			len(s.Train) != n-len(s.Test)-len(s.Val) {
			t.Errorf("client %d (%d samples): split %d/%d/%d", i, n, len(s.Train), len(s.Val), len(s.Test))
		}
		// Same samples, only reordered, and the windows tile the list.
		if got := slices.Sorted(slices.Values(p.Clients[i])); !slices.Equal(got, before[i]) {
			t.Fatalf("client %d's samples changed", i)
		}
		if len(s.Train) > 0 && &s.Train[0] != &p.Clients[i][0] {
			t.Error("train split is not a window of the client list")
		}
		// Stratified: each class's count per part is within one of its quota.
		all := classCounts(d, p.Clients[i])
		for part, frac := range map[string]float64{"train": 0.7, "val": 0.1, "test": 0.2} {
			idx := map[string][]int32{"train": s.Train, "val": s.Val, "test": s.Test}[part]
			for c, k := range classCounts(d, idx) {
				if q := frac * float64(all[c]); float64(k) < q-1.5 || float64(k) > q+1.5 {
					t.Errorf("client %d %s: class %d has %d, quota %.1f", i, part, c, k, q)
				}
			}
		}
	}
	again, _ := NewPartition(d, PartitionConfig{Method: IID, Clients: 4, Seed: 1})
	s2, _ := SplitClients(d, again, Fractions{}, 2)
	for i := range splits {
		if !slices.Equal(splits[i].Test, s2[i].Test) || !slices.Equal(splits[i].Train, s2[i].Train) {
			t.Fatal("same seeds, different splits")
		}
	}
}

func roundHalf(x float64) int { return int(x + 0.5) }

func classCounts(d *Dataset, idx []int32) []int {
	c := make([]int, d.NumClasses())
	for _, i := range idx {
		c[d.Y[i]]++
	}
	return c
}

func TestSplitSmallClients(t *testing.T) {
	d := labelled(100, 3, 1, 12)
	for n := 1; n <= 12; n++ {
		p := &Partition{Clients: [][]int32{d.All()[:n]}}
		s, err := SplitClients(d, p, Fractions{}, 1)
		if err != nil {
			t.Fatal(err)
		}
		if len(s[0].Train) < 1 || len(s[0].Train)+len(s[0].Val)+len(s[0].Test) != n {
			t.Errorf("n=%d: %d/%d/%d", n, len(s[0].Train), len(s[0].Val), len(s[0].Test))
		}
	}
	p := &Partition{Clients: [][]int32{{}}}
	if s, err := SplitClients(d, p, Fractions{}, 1); err != nil || len(s[0].Train) != 0 {
		t.Errorf("empty client: %v", err)
	}
}

func TestSplitFractionErrors(t *testing.T) {
	d := labelled(10, 2, 1, 1)
	p := &Partition{Clients: [][]int32{d.All()}}
	for _, f := range []Fractions{{0.5, 0.1, 0.1}, {0, 0.5, 0.5}, {1.2, -0.1, -0.1}} {
		if _, err := SplitClients(d, p, f, 1); err == nil {
			t.Errorf("%+v: want an error", f)
		}
	}
	if s, err := SplitClients(d, p, Fractions{Train: 1}, 1); err != nil || len(s[0].Train) != 10 {
		t.Errorf("train-only split: %v", err)
	}
}

func TestHoldOut(t *testing.T) {
	d := labelled(1000, 4, 1, 13)
	rest, test, err := HoldOut(d, nil, 0.25, 5)
	if err != nil {
		t.Fatal(err)
	}
	if len(test) != 250 || len(rest) != 750 {
		t.Fatalf("sizes %d/%d", len(rest), len(test))
	}
	checkPartition(t, &Partition{Clients: [][]int32{rest, test}}, d.All(), d.Len())
	all := d.ClassCounts()
	for c, k := range classCounts(d, test) {
		if q := 0.25 * float64(all[c]); float64(k) < q-1 || float64(k) > q+1 {
			t.Errorf("class %d: %d held out, quota %.1f", c, k, q)
		}
	}
	// The pool given is not modified.
	pool := []int32{5, 4, 3, 2, 1, 0}
	if _, _, err := HoldOut(d, pool, 0.5, 1); err != nil || !slices.Equal(pool, []int32{5, 4, 3, 2, 1, 0}) {
		t.Errorf("pool modified or error %v", err)
	}
	if _, _, err := HoldOut(d, nil, 1, 1); err == nil {
		t.Error("holding out everything: want an error")
	}
}
