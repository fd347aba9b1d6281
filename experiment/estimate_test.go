package experiment

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/trellis-fl/trellis/config"
	"github.com/trellis-fl/trellis/sim"
)

// handConfig is a 3-node MLP 4 → 3 → 2 at batch 2 on a dataset of 100
// training and 10 test samples of 4 features.
func handConfig() (config.Config, DataShape) {
	c := config.Default()
	c.Name, c.Nodes, c.Rounds = "tiny", 3, 1
	c.Model.Hidden = []int{3}
	c.Training.Batch, c.Training.Momentum = 2, 0.5
	c.Run.Workers = 2
	return c, DataShape{Train: 100, Test: 10, Shape: []int{4}, Classes: 2}
}

func part(t *testing.T, e Estimate, name string) EstimatePart {
	t.Helper()
	for _, p := range e.Parts {
		if strings.HasPrefix(p.Name, name) {
			return p
		}
	}
	t.Fatalf("no part %q in %+v", name, e.Parts)
	return EstimatePart{}
}

// The arithmetic of a tiny model, counted by hand.
func TestEstimateHandCount(t *testing.T) {
	c, d := handConfig()
	e, err := EstimateWith(c, d)
	if err != nil {
		t.Fatal(err)
	}
	// 4·3 + 3 + 3·2 + 2 = 23 parameters: 92 bytes a vector, 96 on the heap
	// (the allocator's size class).
	if e.Params != 23 {
		t.Fatalf("params %d, want 23", e.Params)
	}
	for _, w := range []struct {
		name string
		each int64
	}{
		{"model parameters", 96},
		{"optimizer state", 96},              // momentum
		{"round start and send buffers", 96}, // one send buffer (FedAvg reads no start)
		// 100 samples over 3 nodes: 34 a node, 24 to train on, whose
		// order the training batcher copies (96 B); four batchers of
		// 128 B (training, validation, test, global test), the others
		// without an index list of their own.
		{"data batchers", 96 + 4*128},
	} {
		p := part(t, e, w.name)
		if p.Each != w.each || p.Count != 3 || p.Bytes != 3*w.each || !p.PerNode {
			t.Errorf("%s: each %d × %d = %d, want %d × 3", w.name, p.Each, p.Count, p.Bytes, w.each)
		}
	}
	// The scratch, once a worker (2 of them): gradients (96) and the
	// activation buffers — linear 4→3: output 2·3 (24 B; the first layer
	// has no input gradient); relu: output and gradient 2·3 (24 + 24);
	// linear 3→2: output 2·2 (16), input gradient 2·3 (24); logit
	// gradients 2·2 (16); input batch 2·4 (32); labels 2 ints (16) — and
	// the matrix engine's workspace, which nn counts.
	spec := c.ModelSpec(nil)
	spec.Input, spec.Classes = d.Shape, d.Classes
	mf, err := spec.Footprint(c.Training.Batch)
	if err != nil {
		t.Fatal(err)
	}
	if mf.Buffers != 24+24+24+16+24+16+32+16 {
		t.Errorf("activation buffers %d bytes, want %d", mf.Buffers, 24+24+24+16+24+16+32+16)
	}
	if p := part(t, e, "model scratch"); p.Each != 96+mf.Buffers+mf.Workspace || p.Count != 2 || p.PerNode {
		t.Errorf("model scratch: each %d × %d, want %d × 2 workers", p.Each, p.Count, 96+mf.Buffers+mf.Workspace)
	}
	// MNIST-family values are bytes: 100 samples × 4 (400 B → 416) and
	// 10 × 4 (40 → 48), 110 labels (880 → 896) and row positions (440 → 448);
	// and, as the nodes evaluate on the global test set, its 10 × 4 values
	// decoded once as float32 (160).
	if p := part(t, e, "dataset"); p.Bytes != 416+48+896+448+160 || p.PerNode {
		t.Errorf("dataset %d bytes, want %d", p.Bytes, 416+48+896+448+160)
	}
	// Another dataset's are float32: 100 samples × 4 floats (1600 B → 1792)
	// + 100 labels (800 → 896); 10 × 4 floats (160) + 10 labels (80).
	cifar := c
	cifar.Data.Dataset = "cifar10"
	if e, _ := EstimateWith(cifar, d); part(t, e, "dataset").Bytes != 1792+896+160+80 {
		t.Errorf("float dataset %d bytes, want %d", part(t, e, "dataset").Bytes, 1792+896+160+80)
	}
	// A strategy that reads the round start has the node keep it.
	afa := c
	afa.Strategy.Name = "afa"
	if e, _ := EstimateWith(afa, d); part(t, e, "round start and send buffers").Each != 2*96 {
		t.Errorf("afa: %+v", part(t, e, "round start and send buffers"))
	}
	var live, perNode int64
	for _, p := range e.Parts {
		if !p.Garbage {
			live += p.Bytes
		}
		if p.PerNode {
			perNode += p.Each
		}
	}
	if e.Live != live || e.PerNode != perNode || e.Peak < e.Live {
		t.Errorf("live %d (parts %d), per node %d (%d), peak %d", e.Live, live, e.PerNode, perNode, e.Peak)
	}

	// Adam holds two moments; ditto a second optimizer.
	c.Training.Optimizer = "adam"
	if e, _ := EstimateWith(c, d); part(t, e, "optimizer state").Each != 2*96 {
		t.Errorf("adam: %+v", part(t, e, "optimizer state"))
	}
	c.Strategy.Name = "ditto"
	if e, _ := EstimateWith(c, d); part(t, e, "optimizer state").Each != 4*96 || part(t, e, "strategy state").Each != 2*96 {
		t.Errorf("ditto: %+v %+v", part(t, e, "optimizer state"), part(t, e, "strategy state"))
	}

	// Per-node parts scale with the nodes, shared ones do not.
	c, d = handConfig()
	c.Nodes = 6
	e6, _ := EstimateWith(c, d)
	if p := part(t, e6, "model parameters"); p.Bytes != 6*96 {
		t.Errorf("6 nodes: %+v", p)
	}
	if a, b := part(t, e, "dataset"), part(t, e6, "dataset"); a.Bytes != b.Bytes {
		t.Errorf("the dataset changed with the nodes: %d, %d", a.Bytes, b.Bytes)
	}
}

func TestAlloc(t *testing.T) {
	for _, c := range [][2]int64{{0, 0}, {1, 8}, {92, 96}, {1600, 1792}, {32768, 32768}, {32769, 40960}, {101800, 106496}} {
		if got := alloc(c[0]); got != c[1] {
			t.Errorf("alloc(%d) = %d, want %d", c[0], got, c[1])
		}
	}
	if mul(1<<40, 1<<40) != satMax || add(satMax, satMax) != satMax {
		t.Error("sizes do not saturate")
	}
}

// A config that cannot fit is refused from its estimate alone: nothing of
// the model is allocated (the heap grows by far less than one of its
// vectors), and the error has the numbers and what would fit.
func TestImpossibleConfigRefused(t *testing.T) {
	mem := Memory{Available: 16 << 30, Source: "test"}
	for _, set := range [][2]string{{"model.hidden", "[1000000, 1000000]"}, {"nodes", "20000"}} {
		c := config.Default()
		if err := c.Set(set[0], set[1]); err != nil {
			t.Fatal(err)
		}
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		d, ok := KnownShape(c)
		if !ok {
			t.Fatal("MNIST's shape is known")
		}
		e, err := EstimateWith(c, d)
		if err != nil {
			t.Fatal(err)
		}
		err = CheckMemory(c, e, d, mem)
		runtime.ReadMemStats(&after)
		var me *MemoryError
		if !errors.As(err, &me) {
			t.Fatalf("%s = %s: %v, want a MemoryError", set[0], set[1], err)
		}
		if grew := after.TotalAlloc - before.TotalAlloc; grew > 64<<20 {
			t.Errorf("%s = %s: estimating allocated %d bytes", set[0], set[1], grew)
		}
		msg := err.Error()
		for _, want := range []string{"needs about", "16.0 GiB is available", "the largest parts", "--no-memory-check", "it would fit with"} {
			if !strings.Contains(msg, want) {
				t.Errorf("%s = %s: the error lacks %q:\n%s", set[0], set[1], want, msg)
			}
		}
		if set[0] == "model.hidden" && !strings.Contains(msg, "model.hidden = [") {
			t.Errorf("no smaller model proposed:\n%s", msg)
		}
		if set[0] == "nodes" && !strings.Contains(msg, "nodes = ") {
			t.Errorf("no node count proposed:\n%s", msg)
		}
		// What it proposes fits.
		for _, fit := range me.Fits {
			x := c
			k, v, _ := strings.Cut(fit, " = ")
			if strings.Contains(v, " with ") {
				continue
			}
			if err := x.Set(k, v); err != nil {
				t.Fatalf("%s: %v", fit, err)
			}
			if e, _ := EstimateWith(x, d); e.Live > mem.Available {
				t.Errorf("proposed %s does not fit: %s", fit, bytesText(e.Live))
			}
		}
	}
	// A config that fits passes, and an unknown amount of memory checks
	// nothing.
	c := config.Default()
	d, _ := KnownShape(c)
	e, _ := EstimateWith(c, d)
	if err := CheckMemory(c, e, d, mem); err != nil {
		t.Error(err)
	}
	c.Nodes = 20000
	e, _ = EstimateWith(c, d)
	if err := CheckMemory(c, e, d, Memory{}); err != nil {
		t.Errorf("unknown memory: %v", err)
	}
}

func TestReadMemory(t *testing.T) {
	write := func(root, path, text string) {
		p := filepath.Join(root, path)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	meminfo := "MemTotal:       32000000 kB\nMemFree:         1000000 kB\nMemAvailable:   20000000 kB\n"
	// No cgroup limit: MemAvailable.
	root := t.TempDir()
	write(root, "proc/meminfo", meminfo)
	write(root, "proc/self/cgroup", "0::/user.slice\n")
	write(root, "sys/fs/cgroup/user.slice/memory.max", "max\n")
	m, err := readMemory(root)
	if err != nil || m.Available != 20000000*1024 || m.Source != "MemAvailable" || m.CgroupLimit != 0 {
		t.Errorf("no limit: %+v, %v", m, err)
	}
	// cgroup v2 with a limit (a container's namespace: the hierarchy's
	// root), usage less its inactive page cache.
	root = t.TempDir()
	write(root, "proc/meminfo", meminfo)
	write(root, "proc/self/cgroup", "0::/\n")
	write(root, "sys/fs/cgroup/memory.max", "4294967296\n")
	write(root, "sys/fs/cgroup/memory.current", "1073741824\n")
	write(root, "sys/fs/cgroup/memory.stat", "anon 536870912\ninactive_file 536870912\n")
	m, err = readMemory(root)
	if err != nil || m.CgroupLimit != 4<<30 || m.CgroupFree != 4<<30-512<<20 || m.Available != m.CgroupFree || m.Source != "cgroup limit" {
		t.Errorf("v2: %+v, %v", m, err)
	}
	// cgroup v1 under its path; a limit larger than MemAvailable leaves
	// MemAvailable.
	root = t.TempDir()
	write(root, "proc/meminfo", meminfo)
	write(root, "proc/self/cgroup", "5:cpu,cpuacct:/job\n4:memory:/slurm/job_7\n")
	write(root, "sys/fs/cgroup/memory/slurm/job_7/memory.limit_in_bytes", "2147483648\n")
	write(root, "sys/fs/cgroup/memory/slurm/job_7/memory.usage_in_bytes", "1073741824\n")
	write(root, "sys/fs/cgroup/memory/slurm/job_7/memory.stat", "cache 0\ntotal_inactive_file 0\n")
	m, err = readMemory(root)
	if err != nil || m.CgroupLimit != 2<<30 || m.Available != 1<<30 {
		t.Errorf("v1: %+v, %v", m, err)
	}
	write(root, "sys/fs/cgroup/memory/slurm/job_7/memory.limit_in_bytes", "9223372036854771712\n") // v1: none
	if m, _ := readMemory(root); m.CgroupLimit != 0 || m.Source != "MemAvailable" {
		t.Errorf("v1 without a limit: %+v", m)
	}
	if _, err := readMemory(t.TempDir()); err == nil {
		t.Error("nothing to read: no error")
	}
	t.Setenv(EnvMemoryAvailable, "1.5GiB")
	if m, err := MachineMemory(); err != nil || m.Available != 3<<29 || m.Source != EnvMemoryAvailable {
		t.Errorf("%s: %+v, %v", EnvMemoryAvailable, m, err)
	}
}

func TestParseBytes(t *testing.T) {
	for s, want := range map[string]int64{"123": 123, "4G": 4e9, "4 GiB": 4 << 30, "512Mi": 512 << 20, "1.5k": 1500, "2TB": 2e12} {
		if got, err := ParseBytes(s); err != nil || got != want {
			t.Errorf("%q: %d, %v; want %d", s, got, err, want)
		}
	}
	for _, s := range []string{"", "lots", "-4G", "4 parsecs"} {
		if _, err := ParseBytes(s); err == nil {
			t.Errorf("%q: no error", s)
		}
	}
}

// A node process holds its shard of the dataset and one node, with its
// in-neighbours' vectors decoded; the monitor neither.
func TestEstimateNodeProcess(t *testing.T) {
	c := config.Default()
	c.Nodes, c.Topology.Kind, c.Topology.K = 20, "kregular", 4
	d, _ := KnownShape(c)
	run, _ := EstimateWith(c, d)
	proc, err := EstimateNodeProcess(c, d)
	if err != nil {
		t.Fatal(err)
	}
	if p := part(t, proc, "model parameters"); p.Count != 1 {
		t.Errorf("a node process holds %d nodes", p.Count)
	}
	// MNIST: its shard, not the dataset — the pixels of its 3,000
	// samples and of the 10,000 test samples, a byte each, 8 bytes of
	// label per sample and 4 of row position per training sample (up
	// to 64 KiB more: the allocator's rounding).
	want := int64((3000+10000)*784 + 70000*8 + 60000*4)
	if got := part(t, proc, "dataset mnist (its shard)").Bytes; got < want || got > want+64<<10 {
		t.Errorf("a node process's shard of MNIST: %d bytes, want %d (+ at most 64 KiB)", got, want)
	}
	// CIFAR-10 decodes whole before it keeps its shard: the dataset and
	// the shard's values and row positions are its peak.
	cifar := DataShape{Name: "CIFAR-10", Train: 50000, Test: 10000, Shape: []int{3, 32, 32}, Classes: 10}
	cc := c
	cc.Data.Dataset = "cifar10"
	crun, _ := EstimateWith(cc, cifar)
	cproc, err := EstimateNodeProcess(cc, cifar)
	if err != nil {
		t.Fatal(err)
	}
	shard := int64(2500*3072*4 + 50000*4)
	if got, whole := part(t, cproc, "dataset cifar10 (decoded)").Bytes, part(t, crun, "dataset").Bytes; got < whole+shard || got > whole+shard+64<<10 {
		t.Errorf("a node process of CIFAR-10: %d bytes, want the dataset's %d and its shard's %d", got, whole, shard)
	}
	// 4 decoded vectors and the own one encoded: ≥ 6 vectors more than a
	// simulated node's inbox.
	vec := floats(proc.Params)
	if in, sim := part(t, proc, "validator and inbox").Each, part(t, run, "validator and inbox").Each; in < sim+6*vec {
		t.Errorf("node process inbox %d, simulated %d, vector %d", in, sim, vec)
	}
	// The monitor: the runtime and records, no dataset nor model.
	if mon := EstimateMonitor(c); mon.Live >= proc.Live || mon.Live < EstimateRuntimeBytes || mon.Live > EstimateRuntimeBytes+1<<20 {
		t.Errorf("monitor %d, node process %d", mon.Live, proc.Live)
	}
}

// The estimate of a small run against what building it and running a
// round takes on the heap (runtime.MemStats after a collection): within
// 25 %. A guard against a buffer the estimate does not know of.
func TestEstimateMatchesHeap(t *testing.T) {
	if testing.Short() {
		t.Skip("builds 8 nodes of a 2 MiB model and runs a round")
	}
	c := config.Default()
	c.Name, c.Nodes, c.Rounds, c.Data.Samples = "heap", 8, 1, 4000
	c.Model.Hidden = []int{512, 256}
	c.Training.Steps, c.Training.Momentum = 2, 0.9
	c.Evaluation.GlobalTest = 500
	c.Strategy.Name, c.Strategy.Rule = "robust", "median"
	c.Adversary.Fraction, c.Adversary.Attack = 0.25, "sign_flip"
	tt, err := LoadData(c)
	if err != nil {
		t.Fatal(err)
	}
	d := ShapeOf(tt)
	e, err := EstimateWith(c, d)
	if err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	s, err := SetupOf(c, tt)
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.Build()
	if err != nil {
		t.Fatal(err)
	}
	if err := sim.Run(context.Background(), b.Config, b.Nodes, discard{}); err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(b)
	got := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	// The nodes' parts, the graph, keys, splits, the last round's attack
	// vectors (the inboxes' backing arrays still point at them): all but
	// the dataset (loaded before), the runtime and the round's records.
	var want int64
	for _, p := range e.Parts {
		switch {
		case p.Garbage, strings.HasPrefix(p.Name, "dataset"), p.Name == "runtime and program", p.Name == "round records and messages":
		default:
			want += p.Bytes
		}
	}
	if r := float64(want) / float64(got); r < 0.75 || r > 1.25 {
		t.Errorf("estimate %s, heap grew by %s (ratio %.2f)", bytesText(want), bytesText(got), r)
	} else {
		t.Logf("estimate %s, heap grew by %s (ratio %.2f)", bytesText(want), bytesText(got), r)
	}
}
