package data

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// labelled makes a dataset of n one-value rows with labels drawn from a
// skewed distribution over k classes and g groups.
func labelled(n, k, g int, seed uint64) *Dataset {
	r := rand.New(rand.NewPCG(seed, 7))
	d := &Dataset{Name: "labelled", Shape: []int{1}, X: make([]float32, n), Y: make([]int, n),
		Groups: make([]int32, n)}
	for c := range k {
		d.Classes = append(d.Classes, fmt.Sprint(c))
	}
	for j := range g {
		d.GroupNames = append(d.GroupNames, fmt.Sprint("g", j))
	}
	for i := range n {
		d.X[i] = float32(i)
		c := r.IntN(k)
		if r.IntN(3) == 0 { // class 0 over-represented
			c = 0
		}
		d.Y[i] = c
		d.Groups[i] = int32(r.IntN(g))
	}
	return d
}

var partitionConfigs = []PartitionConfig{
	{Method: IID, Clients: 37},
	{Method: Dirichlet, Clients: 37, Alpha: 0.1},
	{Method: Dirichlet, Clients: 37, Alpha: 1},
	{Method: Dirichlet, Clients: 37, Alpha: 100},
	{Method: Shards, Clients: 37, ClassesPerClient: 2},
	{Method: Shards, Clients: 5, ClassesPerClient: 3},
	{Method: Natural},
	{Method: Natural, Clients: 7},
}

// TestPartitionInvariants: for every partitioner and several seeds, every
// pool sample lands in exactly one client and then in exactly one split of
// that client; no client is empty; the same seed gives the same partition
// and a different seed a different one.
func TestPartitionInvariants(t *testing.T) {
	d := labelled(3000, 10, 20, 1)
	subPool := make([]int32, 0, 1500)
	for i := int32(0); i < 3000; i += 2 {
		subPool = append(subPool, i)
	}
	for _, base := range partitionConfigs {
		for _, pool := range [][]int32{nil, subPool} {
			name := fmt.Sprintf("%s/a%v/k%d/c%d/pool%d", base.Method, base.Alpha, base.ClassesPerClient, base.Clients, len(pool))
			t.Run(name, func(t *testing.T) {
				want := pool
				if want == nil {
					want = d.All()
				}
				for seed := uint64(1); seed <= 5; seed++ {
					cfg := base
					cfg.Seed, cfg.Pool = seed, pool
					p, err := NewPartition(d, cfg)
					if err != nil {
						t.Fatal(err)
					}
					checkPartition(t, p, want, d.Len())
					for i, c := range p.Clients {
						if len(c) == 0 {
							t.Fatalf("seed %d: client %d empty", seed, i)
						}
					}
					q, _ := NewPartition(d, cfg)
					if !slices.EqualFunc(p.Clients, q.Clients, slices.Equal) {
						t.Fatalf("seed %d: two runs differ", seed)
					}
					cfg.Seed = seed + 100
					o, _ := NewPartition(d, cfg)
					if slices.EqualFunc(p.Clients, o.Clients, slices.Equal) && !(base.Method == Natural && base.Clients == 0) {
						t.Errorf("seeds %d and %d give the same partition", seed, seed+100)
					}
					splits, err := SplitClients(d, p, Fractions{}, seed)
					if err != nil {
						t.Fatal(err)
					}
					var all []int32
					for _, s := range splits {
						all = append(append(append(all, s.Train...), s.Val...), s.Test...)
					}
					if err := (&Partition{Clients: [][]int32{all}}).Check(want, d.Len()); err != nil {
						t.Fatalf("seed %d: after splitting: %v", seed, err)
					}
				}
			})
		}
	}
}

func TestIIDSizes(t *testing.T) {
	d := labelled(1003, 3, 2, 2)
	p, err := NewPartition(d, PartitionConfig{Method: IID, Clients: 10, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	want := []int{101, 101, 101, 100, 100, 100, 100, 100, 100, 100}
	if got := p.Sizes(); !slices.Equal(got, want) {
		t.Errorf("sizes %v, want %v", got, want)
	}
}

// meanTV is the mean over clients of the total-variation distance between a
// client's label distribution and the pool's.
func meanTV(d *Dataset, p *Partition) float64 {
	global := make([]float64, d.NumClasses())
	total := 0
	for _, c := range p.Clients {
		for _, i := range c {
			global[d.Y[i]]++
			total++
		}
	}
	for c := range global {
		global[c] /= float64(total)
	}
	var sum float64
	for _, counts := range p.LabelCounts(d) {
		n := 0
		for _, k := range counts {
			n += k
		}
		var tv float64
		for c, k := range counts {
			tv += abs(float64(k)/float64(n) - global[c])
		}
		sum += tv / 2
	}
	return sum / float64(len(p.Clients))
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}

// TestDirichletConcentration measures label skew: with a
// large alpha the clients' label distributions are as close to the global
// one as under IID; with a small alpha they concentrate on few classes.
func TestDirichletConcentration(t *testing.T) {
	d := labelled(20000, 10, 1, 4)
	tv := func(cfg PartitionConfig) float64 {
		var s float64
		for seed := uint64(1); seed <= 3; seed++ {
			cfg.Seed = seed
			p, err := NewPartition(d, cfg)
			if err != nil {
				t.Fatal(err)
			}
			s += meanTV(d, p)
		}
		return s / 3
	}
	iid := tv(PartitionConfig{Method: IID, Clients: 20})
	large := tv(PartitionConfig{Method: Dirichlet, Clients: 20, Alpha: 1000})
	mid := tv(PartitionConfig{Method: Dirichlet, Clients: 20, Alpha: 1})
	small := tv(PartitionConfig{Method: Dirichlet, Clients: 20, Alpha: 0.05})
	t.Logf("mean TV to the global label distribution: IID %.3f, alpha=1000 %.3f, alpha=1 %.3f, alpha=0.05 %.3f", iid, large, mid, small)
	if large > 2*iid+0.01 {
		t.Errorf("alpha=1000: TV %.3f, not close to IID's %.3f", large, iid)
	}
	if !(large < mid && mid < small) {
		t.Errorf("TV not increasing as alpha falls: %.3f, %.3f, %.3f", large, mid, small)
	}
	if small < 0.6 {
		t.Errorf("alpha=0.05: TV %.3f; labels should concentrate (> 0.6)", small)
	}
	// Concentration directly: with alpha=0.05 most clients' top class
	// holds most of their samples.
	p, _ := NewPartition(d, PartitionConfig{Method: Dirichlet, Clients: 20, Alpha: 0.05, Seed: 9})
	var topShare float64
	for _, counts := range p.LabelCounts(d) {
		topShare += float64(slices.Max(counts)) / float64(sum(counts))
	}
	if topShare /= 20; topShare < 0.6 {
		t.Errorf("alpha=0.05: mean top-class share %.2f, want > 0.6", topShare)
	}
}

func sum(xs []int) int {
	s := 0
	for _, x := range xs {
		s += x
	}
	return s
}

// TestDirichletAlgorithm checks the spec's steps on a case computed by hand:
// the per-class counts are floor(p·n_c) plus at most one, so each class's
// counts sum to n_c and differ from p·n_c by less than 1 (before fillEmpty,
// which AllowEmpty disables).
func TestDirichletAlgorithm(t *testing.T) {
	d := labelled(5000, 4, 1, 5)
	pool := d.All()
	p := partitionDirichlet(pool, d.Y, 4, 9, 0.7, true, 11)
	// Replay the draws: same stream, same order of use.
	r := stream(11, purposeDirichlet, 0)
	classes := byClass(pool, d.Y, 4)
	counts := p.LabelCounts(d)
	buf := make([]float64, 9)
	for c, idx := range classes {
		shuffle32(r, idx)
		probs := dirichletDraw(r, 0.7, buf)
		n := 0
		for i := range 9 {
			exact := probs[i] * float64(len(idx))
			if k := float64(counts[i][c]); k < exact-1 || k > exact+1 {
				t.Errorf("class %d client %d: %v samples for p·n = %.2f", c, i, k, exact)
			}
			n += counts[i][c]
		}
		if n != len(idx) {
			t.Errorf("class %d: %d of %d samples handed out", c, n, len(idx))
		}
		// Skip the remainder draws to stay aligned with the stream.
		rem := len(idx)
		for i := range 9 {
			rem -= int(probs[i] * float64(len(idx)))
		}
		for j := range rem {
			r.IntN(9 - j)
		}
	}
}

func TestFillEmpty(t *testing.T) {
	// 3 classes × 4 clients; clients 1 and 3 empty; client 0 largest.
	counts := [][]int{{5, 0, 1, 0}, {2, 0, 3, 0}, {0, 0, 0, 0}}
	fillEmpty(counts, 4)
	want := [][]int{{3, 1, 1, 1}, {2, 0, 3, 0}, {0, 0, 0, 0}}
	if !slices.EqualFunc(counts, want, slices.Equal) {
		t.Errorf("got %v, want %v", counts, want)
	}
}

func TestDirichletTinyAlpha(t *testing.T) {
	// alpha so small that Gamma draws underflow: still a valid partition.
	d := labelled(500, 5, 1, 6)
	p, err := NewPartition(d, PartitionConfig{Method: Dirichlet, Clients: 50, Alpha: 1e-4, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	checkPartition(t, p, d.All(), d.Len())
	for _, s := range p.Sizes() {
		if s == 0 {
			t.Fatal("empty client")
		}
	}
	q, _ := NewPartition(d, PartitionConfig{Method: Dirichlet, Clients: 50, Alpha: 1e-4, Seed: 1, AllowEmpty: true})
	empty := 0
	for _, s := range q.Sizes() {
		if s == 0 {
			empty++
		}
	}
	if empty == 0 {
		t.Error("alpha=1e-4 with AllowEmpty should leave clients empty")
	}
}

func TestShardsClassesPerClient(t *testing.T) {
	d := labelled(6000, 10, 1, 7)
	for _, k := range []int{1, 2, 5} {
		p, err := NewPartition(d, PartitionConfig{Method: Shards, Clients: 20, ClassesPerClient: k, Seed: 8})
		if err != nil {
			t.Fatal(err)
		}
		holders := make([]int, 10)
		for i, counts := range p.LabelCounts(d) {
			nz := 0
			for c, n := range counts {
				if n > 0 {
					nz++
					holders[c]++
				}
			}
			if nz != k {
				t.Errorf("k=%d: client %d holds %d classes", k, i, nz)
			}
		}
		for c, h := range holders {
			if h != 20*k/10 {
				t.Errorf("k=%d: class %d held by %d clients, want %d", k, c, h, 20*k/10)
			}
		}
	}
	if _, err := NewPartition(d, PartitionConfig{Method: Shards, Clients: 3, ClassesPerClient: 2}); err == nil {
		t.Error("3 clients × 2 classes cannot cover 10 classes: want an error")
	}
	if _, err := NewPartition(d, PartitionConfig{Method: Shards, Clients: 3, ClassesPerClient: 11}); err == nil {
		t.Error("11 classes per client of 10: want an error")
	}
}

func TestNaturalKeepsGroups(t *testing.T) {
	d := labelled(2000, 3, 12, 9)
	p, err := NewPartition(d, PartitionConfig{Method: Natural})
	if err != nil {
		t.Fatal(err)
	}
	if p.NumClients() != 12 {
		t.Fatalf("%d clients, want one per group (12)", p.NumClients())
	}
	for i, c := range p.Clients {
		for _, s := range c {
			if d.Groups[s] != int32(i) {
				t.Fatalf("client %d holds a sample of group %d", i, d.Groups[s])
			}
		}
	}
	q, err := NewPartition(d, PartitionConfig{Method: Natural, Clients: 5, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	owner := map[int32]int{}
	for i, c := range q.Clients {
		for _, s := range c {
			if o, ok := owner[d.Groups[s]]; ok && o != i {
				t.Fatalf("group %d split over clients %d and %d", d.Groups[s], o, i)
			}
			owner[d.Groups[s]] = i
		}
	}
	if _, err := NewPartition(d, PartitionConfig{Method: Natural, Clients: 13}); err == nil {
		t.Error("13 clients from 12 groups: want an error")
	}
	if q, err := NewPartition(d, PartitionConfig{Method: Natural, Clients: 13, AllowEmpty: true}); err != nil || q.NumClients() != 13 {
		t.Errorf("AllowEmpty: %v", err)
	}
	d.Groups = nil
	if _, err := NewPartition(d, PartitionConfig{Method: Natural}); err == nil {
		t.Error("natural partition without groups: want an error")
	}
}

func TestPartitionConfigErrors(t *testing.T) {
	d := labelled(10, 2, 1, 1)
	for _, cfg := range []PartitionConfig{
		{Method: IID, Clients: 0},
		{Method: IID, Clients: 11},
		{Method: Dirichlet, Clients: 2, Alpha: 0},
		{Method: Dirichlet, Clients: 2, Alpha: -1},
		{Method: "bogus", Clients: 2},
		{Method: IID, Clients: 2, Pool: []int32{3, 10}},
		{Method: IID, Clients: 2, Pool: []int32{}},
		{Method: IID, Clients: 2, Pool: []int32{1, 2, 1}},
	} {
		if _, err := NewPartition(d, cfg); err == nil {
			t.Errorf("%+v: want an error", cfg)
		}
	}
	p, err := NewPartition(d, PartitionConfig{Method: IID, Clients: 11, AllowEmpty: true})
	if err != nil || p.Sizes()[10] != 0 {
		t.Errorf("AllowEmpty: %v %v", err, p)
	}
}

// BenchmarkPartition60k1000: 60,000 MNIST-like labels into 1,000 clients
// (target: < 100 ms), for each partitioner, with the per-client splits.
func BenchmarkPartition60k1000(b *testing.B) {
	d := labelled(60000, 10, 1000, 10)
	for _, cfg := range []PartitionConfig{
		{Method: IID, Clients: 1000},
		{Method: Dirichlet, Clients: 1000, Alpha: 0.5},
		{Method: Shards, Clients: 1000, ClassesPerClient: 2},
		{Method: Natural},
	} {
		b.Run(string(cfg.Method), func(b *testing.B) {
			for b.Loop() {
				p, err := NewPartition(d, cfg)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := SplitClients(d, p, Fractions{}, 1); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
