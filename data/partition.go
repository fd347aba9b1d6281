package data

import (
	"fmt"
	"math"
	"unsafe"
)

// Method names a partitioner.
type Method string

const (
	IID       Method = "iid"       // uniform random, equal sizes (±1)
	Dirichlet Method = "dirichlet" // label skew: per class p ~ Dir(alpha·1)
	Shards    Method = "shards"    // each client holds ClassesPerClient classes
	Natural   Method = "natural"   // one client per group (writer, subject)
	// Sampled gives each client PerClient distinct samples drawn uniformly
	// and independently per client: clients may share samples, and there
	// may be more clients than samples (scale experiments).
	Sampled Method = "sampled"
)

// PartitionConfig selects and parameterizes a partitioner.
type PartitionConfig struct {
	Method           Method
	Clients          int     // number of clients; Natural accepts 0, one client per group
	Alpha            float64 // Dirichlet concentration, > 0; large → IID, small → one class per client
	ClassesPerClient int     // Shards: k ≥ 1
	PerClient        int     // Sampled: samples per client, 1 ≤ m ≤ pool size
	AllowEmpty       bool    // permit clients without samples (otherwise they are fixed or an error)
	Pool             []int32 // sample indices to partition; nil means the whole dataset
	Seed             uint64  // all randomness derives from it
}

// Partition assigns samples of one dataset to clients. Clients[i] lists
// client i's sample indices into the dataset; every sample of the pool is in
// exactly one list (except for Sampled, whose clients may share samples and
// leave some out: each list holds distinct samples of the pool). The lists are windows of a single backing array (their
// capacities are clipped, so appending to one cannot overwrite another), so
// a partition costs 4 bytes per sample plus one slice header per client.
type Partition struct {
	Clients [][]int32
}

// NewPartition partitions cfg.Pool (or all of d) among cfg.Clients clients.
func NewPartition(d *Dataset, cfg PartitionConfig) (*Partition, error) {
	pool := cfg.Pool
	if pool == nil {
		pool = d.All()
	}
	if len(pool) == 0 {
		return nil, fmt.Errorf("data: partition: empty pool")
	}
	inPool := make([]bool, d.Len())
	for _, i := range pool {
		if i < 0 || int(i) >= d.Len() {
			return nil, fmt.Errorf("data: partition: pool index %d outside dataset %q of %d samples", i, d.Name, d.Len())
		}
		if inPool[i] {
			return nil, fmt.Errorf("data: partition: sample %d appears twice in the pool", i)
		}
		inPool[i] = true
		if y := d.Y[i]; y < 0 || y >= d.NumClasses() {
			return nil, fmt.Errorf("data: partition: sample %d has label %d outside [0, %d)", i, y, d.NumClasses())
		}
		if d.Groups != nil && (d.Groups[i] < 0 || int(d.Groups[i]) >= len(d.GroupNames)) {
			return nil, fmt.Errorf("data: partition: sample %d has group %d outside [0, %d)", i, d.Groups[i], len(d.GroupNames))
		}
	}
	if cfg.Clients < 0 || (cfg.Clients == 0 && cfg.Method != Natural) {
		return nil, fmt.Errorf("data: partition: %d clients; need at least 1", cfg.Clients)
	}
	if !cfg.AllowEmpty && cfg.Clients > len(pool) && cfg.Method != Sampled {
		return nil, fmt.Errorf("data: partition: %d samples cannot fill %d clients (set AllowEmpty to allow empty clients)", len(pool), cfg.Clients)
	}
	switch cfg.Method {
	case IID:
		return partitionIID(pool, cfg.Clients, cfg.Seed), nil
	case Dirichlet:
		if !(cfg.Alpha > 0) || math.IsInf(cfg.Alpha, 0) {
			return nil, fmt.Errorf("data: partition: Dirichlet alpha %v; need a finite alpha > 0", cfg.Alpha)
		}
		return partitionDirichlet(pool, d.Y, d.NumClasses(), cfg.Clients, cfg.Alpha, cfg.AllowEmpty, cfg.Seed), nil
	case Shards:
		return partitionShards(pool, d.Y, d.NumClasses(), cfg.Clients, cfg.ClassesPerClient, cfg.AllowEmpty, cfg.Seed)
	case Natural:
		if d.Groups == nil {
			return nil, fmt.Errorf("data: partition: dataset %q has no groups (writer or subject) for a natural partition", d.Name)
		}
		return partitionNatural(pool, d.Groups, len(d.GroupNames), cfg.Clients, cfg.AllowEmpty, cfg.Seed)
	case Sampled:
		return partitionSampled(pool, cfg.Clients, cfg.PerClient, cfg.Seed)
	default:
		return nil, fmt.Errorf("data: partition: unknown method %q (iid, dirichlet, shards, natural, sampled)", cfg.Method)
	}
}

// NumClients is len(p.Clients).
func (p *Partition) NumClients() int { return len(p.Clients) }

// Sizes returns each client's number of samples.
func (p *Partition) Sizes() []int {
	s := make([]int, len(p.Clients))
	for i, c := range p.Clients {
		s[i] = len(c)
	}
	return s
}

// LabelCounts returns, per client, how many samples of each class it holds.
func (p *Partition) LabelCounts(d *Dataset) [][]int {
	out := make([][]int, len(p.Clients))
	for i, c := range p.Clients {
		out[i] = make([]int, d.NumClasses())
		for _, s := range c {
			out[i][d.Y[s]]++
		}
	}
	return out
}

// IndexBytes is the memory the partition's index lists and slice headers
// occupy.
func (p *Partition) IndexBytes() int64 {
	var n int64
	for _, c := range p.Clients {
		n += int64(cap(c)) * 4
	}
	return n + int64(len(p.Clients))*int64(unsafe.Sizeof([]int32(nil)))
}

// Check verifies that the clients' lists together hold every pool sample
// exactly once and nothing else; n is the dataset size. A Sampled
// partition fails it by design (CheckSampled is its check).
func (p *Partition) Check(pool []int32, n int) error {
	seen := make([]uint8, n)
	for _, i := range pool {
		seen[i] = 1
	}
	for ci, c := range p.Clients {
		for _, i := range c {
			switch {
			case i < 0 || int(i) >= n:
				return fmt.Errorf("data: client %d holds index %d outside [0, %d)", ci, i, n)
			case seen[i] == 0:
				return fmt.Errorf("data: client %d holds sample %d, which is not in the pool", ci, i)
			case seen[i] == 2:
				return fmt.Errorf("data: sample %d is held twice (again by client %d)", i, ci)
			}
			seen[i] = 2
		}
	}
	for _, i := range pool {
		if seen[i] != 2 {
			return fmt.Errorf("data: sample %d of the pool is held by no client", i)
		}
	}
	return nil
}

// layout cuts one backing array into per-client windows of the given sizes.
func layout(backing []int32, sizes []int) [][]int32 {
	out := make([][]int32, len(sizes))
	off := 0
	for i, s := range sizes {
		out[i] = backing[off : off+s : off+s]
		off += s
	}
	return out
}

// byClass groups pool indices by label, each group in pool order, in one
// backing array.
func byClass(pool []int32, labels []int, k int) [][]int32 {
	sizes := make([]int, k)
	for _, i := range pool {
		sizes[labels[i]]++
	}
	groups := layout(make([]int32, len(pool)), sizes)
	fill := make([]int, k)
	for _, i := range pool {
		c := labels[i]
		groups[c][fill[c]] = i
		fill[c]++
	}
	return groups
}

// fromCounts builds a partition from shuffled per-class sample lists and
// counts[c][i], the number of class-c samples client i gets: client i takes
// the next counts[c][i] samples of each class, clients in index order.
func fromCounts(classes [][]int32, counts [][]int, clients int) *Partition {
	sizes := make([]int, clients)
	total := 0
	for _, row := range counts {
		for i, n := range row {
			sizes[i] += n
			total += n
		}
	}
	p := &Partition{Clients: layout(make([]int32, total), sizes)}
	fill := make([]int, clients)
	for c, row := range counts {
		next := 0
		for i, n := range row {
			copy(p.Clients[i][fill[i]:], classes[c][next:next+n])
			fill[i] += n
			next += n
		}
	}
	return p
}

// fillEmpty makes every client non-empty by moving single samples from the
// largest client (ties to the lowest index), one at a time, taking a sample
// of that client's most frequent class (ties to the lowest class); the spec's
// last step of the Dirichlet partition. The caller guarantees enough samples.
func fillEmpty(counts [][]int, clients int) {
	sizes := make([]int, clients)
	for _, row := range counts {
		for i, n := range row {
			sizes[i] += n
		}
	}
	for i := range clients {
		if sizes[i] > 0 {
			continue
		}
		big := 0
		for j, s := range sizes {
			if s > sizes[big] {
				big = j
			}
		}
		cls := 0
		for c := range counts {
			if counts[c][big] > counts[cls][big] {
				cls = c
			}
		}
		counts[cls][big]--
		counts[cls][i]++
		sizes[big]--
		sizes[i]++
	}
}

// CheckSampled verifies a Sampled partition: every client holds exactly
// perClient distinct samples of the pool; n is the dataset size.
func (p *Partition) CheckSampled(pool []int32, n, perClient int) error {
	inPool := make([]bool, n)
	for _, i := range pool {
		inPool[i] = true
	}
	seen := make([]int, n) // the last client (plus one) that held each sample
	for ci, c := range p.Clients {
		if len(c) != perClient {
			return fmt.Errorf("data: client %d holds %d samples, not %d", ci, len(c), perClient)
		}
		for _, i := range c {
			switch {
			case i < 0 || int(i) >= n:
				return fmt.Errorf("data: client %d holds index %d outside [0, %d)", ci, i, n)
			case !inPool[i]:
				return fmt.Errorf("data: client %d holds sample %d, which is not in the pool", ci, i)
			case seen[i] == ci+1:
				return fmt.Errorf("data: client %d holds sample %d twice", ci, i)
			}
			seen[i] = ci + 1
		}
	}
	return nil
}
