package data

import (
	"math"
	"slices"
	"strings"
	"testing"
)

// A sampled partition gives every client exactly m distinct samples of the
// pool, each sample lands in about n·m/N lists (binomial counts), and the
// share of the pool some client holds is close to 1 − (1 − m/N)^n.
func TestSampledPartitionStatistics(t *testing.T) {
	d := labelled(30000, 10, 1, 3)
	pool := d.All()[5000:25000] // N = 20,000, not starting at 0
	const clients, m = 5000, 4
	p, err := NewPartition(d, PartitionConfig{Method: Sampled, Clients: clients, PerClient: m, Pool: pool, Seed: 9})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.CheckSampled(pool, d.Len(), m); err != nil {
		t.Fatal(err)
	}
	if err := p.Check(pool, d.Len()); err == nil {
		t.Error("Check accepts a sampled partition, whose clients share samples and miss some")
	}
	counts := make([]int, d.Len())
	for _, c := range p.Clients {
		for _, i := range c {
			counts[i]++
		}
	}
	N := float64(len(pool))
	held, sum, sq := 0, 0.0, 0.0
	for _, i := range pool {
		if counts[i] > 0 {
			held++
		}
		sum += float64(counts[i])
		sq += float64(counts[i]) * float64(counts[i])
	}
	want := 1 - math.Pow(1-m/N, clients) // 0.632…
	// The held share is a mean of N nearly independent indicators: its
	// standard deviation is about √(want(1 − want)/N) = 0.0034.
	if got := float64(held) / N; math.Abs(got-want) > 0.015 {
		t.Errorf("%.4f of the pool is held by some client, want 1 − (1 − m/N)^n = %.4f", got, want)
	}
	mean := sum / N
	variance := sq/N - mean*mean
	q := m / N
	if wantMean := clients * q; math.Abs(mean-wantMean) > 1e-9 {
		t.Errorf("a sample is held %v times on average, want n·m/N = %v", mean, wantMean)
	}
	// Binomial(n, m/N) counts: variance n·q·(1 − q) = 0.9998; a sampling
	// error of a few percent.
	if wantVar := clients * q * (1 - q); math.Abs(variance-wantVar) > 0.06 {
		t.Errorf("variance of the counts %v, want n·q·(1 − q) = %v", variance, wantVar)
	}
	for _, i := range d.All()[:5000] {
		if counts[i] != 0 {
			t.Fatalf("sample %d outside the pool is held", i)
		}
	}
}

// Client i's draw depends on (seed, i) alone: the same with more clients,
// again with the same seed, another with another seed.
func TestSampledPartitionDeterminism(t *testing.T) {
	d := labelled(500, 4, 1, 5)
	part := func(clients int, seed uint64) *Partition {
		t.Helper()
		p, err := NewPartition(d, PartitionConfig{Method: Sampled, Clients: clients, PerClient: 20, Seed: seed})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	a, b, more, other := part(40, 1), part(40, 1), part(80, 1), part(40, 2)
	for i := range a.Clients {
		if !slices.Equal(a.Clients[i], b.Clients[i]) {
			t.Fatalf("client %d: two draws of one seed differ", i)
		}
		if !slices.Equal(a.Clients[i], more.Clients[i]) {
			t.Fatalf("client %d: its draw changes with the number of clients", i)
		}
	}
	same := 0
	for i := range a.Clients {
		if slices.Equal(a.Clients[i], other.Clients[i]) {
			same++
		}
	}
	if same > 0 {
		t.Errorf("%d clients draw the same samples under seeds 1 and 2", same)
	}
	// Every client holds all of the pool when m = N; more clients than
	// samples is fine.
	full, err := NewPartition(d, PartitionConfig{Method: Sampled, Clients: 1000, PerClient: 500, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range full.Clients {
		if !slices.Equal(slices.Sorted(slices.Values(c)), d.All()) {
			t.Fatalf("client %d of m = N does not hold the whole pool", i)
		}
	}
	// The local splits still apply: 20 samples → 14 / 2 / 4.
	sp, err := SplitClients(d, a, Fractions{Train: 0.7, Val: 0.1, Test: 0.2}, 1)
	if err != nil {
		t.Fatal(err)
	}
	if s := sp[3]; len(s.Train) != 14 || len(s.Val) != 2 || len(s.Test) != 4 {
		t.Errorf("client 3's splits %d / %d / %d, want 14 / 2 / 4", len(s.Train), len(s.Val), len(s.Test))
	}
}

func TestSampledPartitionRefusals(t *testing.T) {
	d := labelled(100, 4, 1, 5)
	for _, c := range []struct {
		m    int
		want string
	}{
		{0, "need at least 1"},
		{-3, "need at least 1"},
		{101, "use at most 100"},
	} {
		_, err := NewPartition(d, PartitionConfig{Method: Sampled, Clients: 5, PerClient: c.m, Seed: 1})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("per client %d: error %v, want one saying %q", c.m, err, c.want)
		}
	}
	_, err := NewPartition(d, PartitionConfig{Method: Sampled, Clients: 1 << 30, PerClient: 4, Seed: 1})
	if err == nil || !strings.Contains(err.Error(), "index entries") {
		t.Errorf("2^32 index entries: error %v", err)
	}
}
