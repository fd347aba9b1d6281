package experiment

import (
	"fmt"
	"math"
	"runtime"
	"slices"
	"strings"
	"unsafe"

	"github.com/trellis-fl/trellis/adversary"
	"github.com/trellis-fl/trellis/aggregate"
	"github.com/trellis-fl/trellis/config"
	"github.com/trellis-fl/trellis/data"
	"github.com/trellis-fl/trellis/internal/memsize"
	"github.com/trellis-fl/trellis/metrics"
	"github.com/trellis-fl/trellis/nn"
	"github.com/trellis-fl/trellis/strategy"
	"github.com/trellis-fl/trellis/topology"
	"github.com/trellis-fl/trellis/wire"
)

// An Estimate is the memory a run needs, part by part, worked out from its
// config alone: nothing of the model, the nodes or the graph is allocated,
// so a config that would not fit (hidden = [1000000, 1000000], 20,000
// nodes) is refused before it takes the machine down (CheckMemory).
//
// Every part is counted the way the code allocates it: the same slices,
// each rounded up to the Go allocator's size class or page. What the
// estimate does not count is small (goroutine stacks, a few maps); the
// runtime and the program's own pages are one measured constant
// (EstimateRuntimeBytes).
type Estimate struct {
	// What is estimated: "run" (a simulated run: every node in one
	// process), "node process" (one node of a deployed run), "launched
	// node process" (one of `trellis launch`, mapping the shared dataset
	// file) or "monitor".
	Kind  string `json:"kind"`
	Name  string `json:"name"`
	Nodes int    `json:"nodes"`
	// Params is the model's parameter count P (one vector is 4P bytes).
	Params int64  `json:"params"`
	Model  string `json:"model"`
	// Parts are the components: per node (Count nodes each hold Each
	// bytes) or shared (Count 1).
	Parts []EstimatePart `json:"parts"`
	// Live is what stays allocated while rounds run (every part but the
	// garbage); Peak adds the garbage the collector lets pile up between
	// collections: the expected peak resident set.
	Live int64 `json:"live_bytes"`
	Peak int64 `json:"peak_bytes"`
	// PerNode is the bytes every node adds (the per-node parts).
	PerNode int64 `json:"per_node_bytes"`
	// Private is the part of Peak that is this process's own: Peak less
	// the pages it shares with the machine's other processes (PageCache
	// parts). A launch's machine holds every process's Private and the
	// shared pages once.
	Private int64 `json:"private_bytes"`
	// GCPercent is the collector's GOGC the process runs with: the
	// garbage between collections is at most this share of the heap.
	GCPercent int `json:"gc_percent"`
	// Work is a round's work: training samples and evaluated samples
	// (all nodes), the basis of a time estimate (Probe measures one).
	TrainSamples int64 `json:"train_samples_per_round"`
	EvalSamples  int64 `json:"eval_samples_per_round"`
	// Eval is what EvalSamples is made of and its share of the work.
	Eval *EvalWork `json:"evaluation,omitempty"`
	// RoundGarbage is what a round allocates and drops, over Rounds
	// rounds (the garbage part: setGarbage).
	RoundGarbage int64 `json:"round_garbage_bytes"`
	Rounds       int   `json:"rounds"`
	// Notes say what the estimate assumed.
	Notes []string `json:"notes,omitempty"`
}

// An EstimatePart is one component of an Estimate.
type EstimatePart struct {
	Name string `json:"name"`
	// Each is the bytes one holder has; Count the holders (nodes, or 1
	// for a shared part); Bytes = Each × Count.
	Each  int64 `json:"each_bytes"`
	Count int   `json:"count"`
	Bytes int64 `json:"bytes"`
	// PerNode says the part is held by each node (Count = nodes).
	PerNode bool `json:"per_node"`
	// Garbage marks the part that is not live: what accumulates between
	// collections.
	Garbage bool `json:"garbage,omitempty"`
	// OutsideHeap marks a part that is not on the Go heap (the runtime's
	// own structures, program text, mapped file pages): the collector's
	// garbage is a share of the heap only.
	OutsideHeap bool `json:"outside_heap,omitempty"`
	// PageCache marks file pages shared with every process that maps the
	// same file (the program's text, the launch's dataset file): in each
	// process's resident set, once on the machine.
	PageCache bool `json:"page_cache,omitempty"`
	// How says how it was counted.
	How string `json:"how,omitempty"`
}

// NodeGCPercent is the Go collector's GOGC in a node process (`trellis
// node`, unless GOGC is set): its heap grows this many percent above the
// live data between collections.
const NodeGCPercent = 10

// EstimateRuntimeBytes is what a trellis process takes besides its heap:
// the Go runtime's own structures, goroutine stacks, the program's text
// and data (the embedded MNIST files among them) and the heap's metadata.
// Measured: the peak resident set of a 2-node logistic regression on MNIST
// less its heap (BENCHMARKS.md, "Memory estimate").
const EstimateRuntimeBytes = 48 << 20

// A node process of `trellis launch` maps the shared dataset file and so
// never touches the embedded MNIST files; its resident memory outside the
// heap is the runtime's own (private) and the program's text and data
// pages it executes and reads (shared with every process of the same
// binary, in the page cache once). Measured on the 200-process MNIST MLP
// launch (BENCHMARKS.md, "200 node processes"): RssAnon less the heap for
// the first, the binary's resident pages (smaps) for the second.
const (
	LaunchedNodeRuntimeBytes = 6 << 20
	LaunchedNodeProgramBytes = 19 << 20
)

// DataShape is what an estimate needs of a dataset: its sample counts, one
// sample's shape and the classes.
type DataShape struct {
	Name        string `json:"name"`
	Train, Test int
	Shape       []int
	Classes     int
	// Groups says the samples carry group ids (writers, subjects).
	Groups bool
}

// ShapeOf is the shape of a loaded dataset.
func ShapeOf(tt data.TrainTest) DataShape {
	var d DataShape
	if tt.Train != nil {
		d = DataShape{Name: tt.Train.Name, Train: tt.Train.Len(), Shape: slices.Clone(tt.Train.Shape),
			Classes: tt.Train.NumClasses(), Groups: tt.Train.Groups != nil}
	}
	if tt.Test != nil {
		d.Test = tt.Test.Len()
	}
	return d
}

// KnownShape is the shape of the configured dataset when it is known
// without loading it: the embedded MNIST (data.dir unset). Other datasets
// come from files whose size only loading them tells (LoadData, then
// ShapeOf).
func KnownShape(c config.Config) (DataShape, bool) {
	if c.Data.Dataset == "mnist" && c.Data.Dir == "" {
		return DataShape{Name: "MNIST", Train: 60000, Test: 10000, Shape: []int{1, 28, 28}, Classes: 10}, true
	}
	return DataShape{}, false
}

// EstimateOf estimates a simulated run of c: with KnownShape's dataset
// shape, or loading the dataset to learn it (EstimateWith takes the shape).
func EstimateOf(c config.Config) (Estimate, error) {
	d, ok := KnownShape(c)
	if !ok {
		tt, err := LoadData(c)
		if err != nil {
			return Estimate{}, err
		}
		d = ShapeOf(tt)
	}
	return EstimateWith(c, d)
}

// The estimate's byte arithmetic (internal/memsize): saturating, each
// allocation rounded as the Go allocator does.
const satMax = memsize.Max

var (
	mul    = memsize.Mul
	add    = memsize.Add
	alloc  = memsize.Alloc
	floats = memsize.Floats
)

// degrees are the configured topology's mean and largest in-degree for n
// nodes, worked out without building the graph (a complete graph of 20,000
// nodes is 6 GB); a graph from a file is read (its size is the file's).
func degrees(c config.Config, n int) (mean, most float64, err error) {
	t := c.Topology
	nn1 := float64(n - 1)
	switch t.Kind {
	case "complete":
		return nn1, nn1, nil
	case "ring":
		return min(2, nn1), min(2, nn1), nil
	case "kregular", "small_world":
		k := min(float64(t.K), nn1)
		if t.Kind == "small_world" {
			return k, min(nn1, k+3*math.Sqrt(k)+1), nil
		}
		return k, k, nil
	case "erdos_renyi":
		m := t.P * nn1
		return m, min(nn1, m+3*math.Sqrt(m*(1-t.P))+1), nil
	case "star":
		return 2 * nn1 / float64(n), nn1, nil
	case "mobility":
		// Contacts within r_c on the A × A torus: a share π r_c² / A² of
		// the others.
		share := min(1, math.Pi*topology.ContactRange*topology.ContactRange/(topology.TorusSide*topology.TorusSide))
		m := share * nn1
		return m, min(nn1, m+3*math.Sqrt(m*(1-share))+1), nil
	case "edge_list", "trace":
		g, err := c.Graph() // bounded by the file
		if err != nil {
			return 0, 0, err
		}
		g0 := g.At(0)
		sum, top := 0, 0
		for i := range n {
			d := len(g0.In(i))
			sum, top = sum+d, max(top, d)
		}
		return float64(sum) / float64(n), float64(top), nil
	}
	return 0, 0, fmt.Errorf("topology.kind = %q: want one of %v", t.Kind, config.Topologies)
}

// Sizes of the structures the estimate counts by their Go types.
var (
	sizeMessage   = int64(unsafe.Sizeof(wire.Message{}))
	sizeIncoming  = int64(unsafe.Sizeof(strategy.Incoming{}))
	sizeNodeRound = int64(unsafe.Sizeof(metrics.NodeRound{}))
	sizeCounts    = int64(unsafe.Sizeof(wire.Counts{}))
)

// ruleScratch is one node's aggregation-rule scratch, in bytes, for rule
// (with pre-aggregators, "nnm+krum") over k inputs of vectors of p floats:
// what the rules say of themselves (aggregate.Spec.Scratch).
func ruleScratch(rule string, k, p int64) (int64, string) {
	spec, _ := aggregate.ParseSpec(rule) // validated before any estimate
	return spec.Scratch(int(k), int(min(p, math.MaxInt)))
}

// EstimateWith estimates a simulated run of c (every node in this
// process) on a dataset of shape d.
func EstimateWith(c config.Config, d DataShape) (Estimate, error) {
	return estimate(c, "run", d)
}

// EstimateNodeProcess estimates one node process of a deployed run that
// loads its own data (`trellis node` without --data-file, each Kubernetes
// or Slurm task): it loads its shard (LoadNodeData) and builds one node,
// and holds what its in-neighbours send it as decoded messages.
func EstimateNodeProcess(c config.Config, d DataShape) (Estimate, error) {
	return estimate(c, "node process", d)
}

// streamsShard says whether a node process of the dataset decodes only
// its shard's values (LoadNodeData); the others decode the whole dataset
// first.
func streamsShard(dataset string) bool { return dataset == "mnist" || dataset == "fashion_mnist" }

// launchedNode is the kind of a `trellis launch` node process: it maps the
// launch's shared dataset file (data.OpenShared) instead of decoding the
// dataset, so its dataset memory is the pages of its own samples and of
// the global test set it evaluates on, and the labels.
const launchedNode = "launched node process"

// EstimateLaunchedNode estimates one node process of `trellis launch`.
func EstimateLaunchedNode(c config.Config, d DataShape) (Estimate, error) {
	return estimate(c, launchedNode, d)
}

// EstimateMonitor estimates a deployed run's monitor: no dataset, no
// model, the nodes' records of the rounds in flight.
func EstimateMonitor(c config.Config) Estimate {
	n := int64(c.Nodes)
	e := Estimate{Kind: "monitor", Name: c.Name, Nodes: c.Nodes}
	mean, _, _ := degrees(c, c.Nodes)
	graph := alloc(mul(8, int64(float64(n)*mean+0.5))) + alloc(8*(n+1))
	e.Parts = []EstimatePart{
		{Name: "graph", Each: graph, Count: 1, How: fmt.Sprintf("%s adjacency, %.4g links a node", c.Topology.Kind, mean)},
		{Name: "round records in flight", Each: mul(4, n, alloc(sizeNodeRound+512)), Count: 1, How: "a node's record and its frame, up to 4 rounds"},
		{Name: "runtime and program", Each: EstimateRuntimeBytes, Count: 1, How: "measured"},
	}
	e.finish()
	return e
}

func estimate(c config.Config, kind string, d DataShape) (Estimate, error) {
	e := Estimate{Kind: kind, Name: c.Name, Nodes: c.Nodes, GCPercent: 100}
	mapped := kind == launchedNode
	shard := kind == "node process" // it loads its shard (LoadNodeData)
	if mapped {
		kind = "node process" // but for the dataset
	}
	if kind == "node process" {
		e.GCPercent = NodeGCPercent // `trellis node` sets it
	}
	if c.Nodes < 1 {
		return e, fmt.Errorf("nodes = %d, need ≥ 1", c.Nodes)
	}
	if d.Classes < 2 || len(d.Shape) == 0 {
		return e, fmt.Errorf("dataset %s: no shape to estimate from", c.Data.Dataset)
	}
	spec := c.ModelSpec(nil)
	spec.Input, spec.Classes = d.Shape, d.Classes
	batch := max(1, c.Training.Batch)
	mf, err := spec.Footprint(batch)
	if err != nil {
		return e, err
	}
	P := mf.Params
	e.Params = P
	e.Model = modelDescription(spec)
	V := floats(P)
	n := int64(c.Nodes)
	holders := c.Nodes // nodes this process holds
	if kind == "node process" {
		holders = 1
	}
	mean, most, err := degrees(c, c.Nodes)
	if err != nil {
		return e, err
	}
	deg := mean
	if kind == "node process" {
		deg = most // the busiest node's process
	}
	degI := int64(math.Ceil(deg))
	per := func(name string, each int64, how string) {
		if each > 0 {
			e.Parts = append(e.Parts, EstimatePart{Name: name, Each: each, Count: holders, PerNode: true, How: how})
		}
	}
	shared := func(name string, b int64, how string) {
		if b > 0 {
			e.Parts = append(e.Parts, EstimatePart{Name: name, Each: b, Count: 1, How: how})
		}
	}
	st := c.Strategy.Name

	// The model: its parameters and node-local state (batch-norm
	// statistics) in every node; its gradients, activation buffers for a
	// full batch and the matrix engine's packing buffers in a scratch
	// (nn.Pool) that a simulation's nodes share, one per worker computing
	// at a time, and that a node process's model owns.
	workers := 1
	if kind == "run" {
		workers = c.Run.Workers
		if workers <= 0 {
			workers = runtime.GOMAXPROCS(0)
		}
		workers = min(workers, c.Nodes)
	}
	per("model parameters", mf.PerModel, fmt.Sprintf("%s parameters × 4 B", group(P)))
	e.Parts = append(e.Parts, EstimatePart{Name: "model scratch", Each: mf.Scratch, Count: workers,
		How: fmt.Sprintf("gradients, activations of batch %d through %d layers, matrix workspace; one a worker (%d)", batch, len(mf.Layers), workers)})

	// Optimizer state.
	optState, optHow := int64(0), ""
	switch c.Training.Optimizer {
	case "adam", "adamw":
		optState, optHow = 2*V, c.Training.Optimizer+": first and second moments"
	default:
		if c.Training.Momentum > 0 {
			optState, optHow = V, "sgd: momentum buffer"
		}
	}
	if st == "ditto" {
		optState *= 2 // a second optimizer for the personal model's copy
		optHow += " (×2: ditto trains a second model)"
	}
	per("optimizer state", optState, optHow)

	// The node: the round's start, the send buffers (one per distinct
	// vector the strategy shares), a scratch copy where the node scores
	// or trains a second model.
	sends := int64(1)
	switch st {
	case "local":
		sends = 0
	case "gradient_tracking", "gradient_tracking_sd":
		sends = 2
	case "function_sharing":
		if c.Strategy.Options["tracking"] == 1 {
			sends = 2
		}
	case "admm":
		sends = degI
	}
	startB, startHow := int64(0), "no round start (the strategy never reads it)"
	if readsStart(c) {
		startB, startHow = V, "the round start"
	}
	sendHow := fmt.Sprintf("%d send vectors", sends)
	if sends == 1 {
		sendHow = "1 send vector"
	}
	per("round start and send buffers", startB+sends*V, startHow+", "+sendHow)

	// Strategy state.
	var stratB int64
	var stratHow string
	evalOut := func(nval int64, outputs int64) int64 {
		// agreement.Outputs: probabilities, features, vacuity, for nval
		// samples; the node's validation batch and labels; a saved copy.
		o := floats(nval*mf.Classes) + floats(nval*mf.Feature) + floats(nval)
		return mul(outputs, o) + floats(int64(batch)*mf.InputSize) + alloc(8*nval) + V
	}
	k := int64(math.Ceil(deg)) + 1 // inputs of an aggregation: the in-neighbours and itself
	switch st {
	case "dpsgd":
		stratB, stratHow = V, "the local update"
	case "gradient_tracking":
		stratB, stratHow = 4*V, "tracker, mixed tracker, update, previous update"
	case "gradient_tracking_sd":
		// α, β and the two mixing buffers in float64 (8 vectors' worth),
		// the update, the previous update, α as sent, and the private
		// edge weights of round 0, one vector a neighbour.
		stratB, stratHow = (11+degI)*V, fmt.Sprintf("float64 shares α, β and mixing buffers, update, previous update, α sent, %d edge-weight vectors", degI)
	case "function_sharing":
		// p_i in float64 and the a_ij sent, one vector a neighbour, and
		// the base method's state.
		stratB, stratHow = (2+degI+1)*V, fmt.Sprintf("the perturbation p_i (float64), %d sent perturbation vectors, D-PSGD's update", degI)
		if c.Strategy.Options["tracking"] == 1 {
			stratB, stratHow = (2+degI+4)*V, fmt.Sprintf("the perturbation p_i (float64), %d sent perturbation vectors, gradient tracking's tracker, mixed tracker, update, previous update", degI)
		}
	case "ditto":
		stratB, stratHow = 2*V, "the global model and a saved copy"
	case "robust":
		stratB, stratHow = V, "the aggregate"
		if c.Strategy.Exchange == "update" {
			stratB, stratHow = 2*V, "the aggregate and the update"
		}
		rs, how := ruleScratch(c.Strategy.Rule, k, P)
		per("aggregation scratch ("+c.Strategy.Rule+")", rs, how)
	case "rdpfl":
		stratB, stratHow = 4*V, "history: direction, w^{t−2}, two past aggregates"
		rs, how := ruleScratch(c.Strategy.Rule, k-1, P)
		per("aggregation scratch ("+c.Strategy.Rule+")", rs, how)
	case "afa":
		stratB, stratHow = alloc(8*P), "a float64 centre"
	case "admm":
		stratB, stratHow = mul(degI, 3, V)+V, fmt.Sprintf("per in-neighbour: dual, edge variable, message (%d in-neighbours); a reference", degI)
	case "lightyear":
		// Kernels, own and peer's: the spec's and the logits' (a Gram
		// matrix and its centring each), and one centred block per class
		// plus a scratch matrix (the score variants, agreement/variants.go).
		nval := int64(strategy.LightyearNVal)
		gram := alloc(8 * nval * nval)
		stratB = evalOut(nval, 2) + 8*gram + mul(2*(mf.Classes+1), gram)
		stratHow = fmt.Sprintf("outputs of %d validation samples for the own and a peer's model, their kernels (spec, logits, %d class blocks), a saved copy", nval, mf.Classes)
	case "dmtt", "murmura":
		stratB, stratHow = evalOut(strategy.DMTTNEval, 1), fmt.Sprintf("outputs of %d validation samples, a saved copy", strategy.DMTTNEval)
	case "ubar":
		stratB, stratHow = floats(int64(batch)*mf.InputSize)+alloc(8*int64(batch))+V, "a probe batch and a saved copy"
	case "cfl", "asmr":
		stratB, stratHow = 2*alloc(8*k*k), "a Gram matrix and distances over the inputs"
	}
	per("strategy state ("+st+")", stratB, stratHow)

	// Privacy.
	switch c.Privacy.Mode {
	case "node":
		per("privacy layer (node-level DP)", 2*V, "the round's start and clipped update")
	case "sample":
		per("privacy layer (DP-SGD)", mf.PerSample, "per-sample norms and scales, the convolutions' per-sample gradients")
	case "laplace_decaying":
		if tracksWithDP(c.Strategy.Name) {
			per("privacy layer (decaying Laplace, gradient tracking)", 3*V, "the last released state and tracker (or its exchanged share), and the move being clipped")
			break
		}
		per("privacy layer (decaying Laplace)", 2*V, "the round's start and the update being clipped")
	case "ternary":
		per("privacy layer (ternary quantization)", 2*V, "the round's start and the update being clipped and quantized")
	}

	// Trust layer (DMTT): a peer record per known node (its claim with
	// its neighbour list) and the edges it reasons about.
	if c.TrustOn() {
		// Claims travel HopLimit hops: at most mean^H nodes are known.
		known := n - 1
		if reach := math.Pow(max(mean, 1), float64(max(1, c.Trust.HopLimit))); reach < float64(known) {
			known = int64(math.Ceil(reach))
		}
		peer := alloc(600) + alloc(4*int64(math.Ceil(mean))) + 96
		edges := min(known*int64(math.Ceil(mean)), n*int64(math.Ceil(mean)))
		per("trust state", mul(known, peer)+mul(edges, 96), fmt.Sprintf("%d known peers, %d edges", known, edges))
	}

	// Messages: the validator's state per sender, the inbox, its key (the
	// digester that hashes messages is borrowed from a pool while it does).
	msgs := int64(1)
	if c.TrustOn() {
		msgs += 1 + int64(c.Trust.Budget) // its claim and forwarded ones
	}
	inbox := mul(degI, sizeIncoming) + mul(degI, alloc(sizeCounts+32)+48) + 512
	if kind == "node process" {
		// Decoded vectors from every in-neighbour (each its own copy
		// here, not the sender's buffer), as many held for the next round
		// (a node whose round overran its window gets its neighbours'
		// next messages before it is done), their frames while decoding,
		// and the own vector encoded once for all out-links.
		inbox = add(inbox, mul(2, degI, sends, V+alloc(sizeMessage)), mul(2, V))
	}
	how := fmt.Sprintf("%d in-neighbours", degI)
	if kind == "node process" {
		how += ", this round's messages and the next's"
	}
	per("validator and inbox", inbox, how)

	// Data: the shared decoded dataset, the nodes' index lists (train,
	// validation and test splits, each copied by its batcher) and, where
	// evaluated, every node's copy of the global test indices.
	row := int64(1)
	for _, s := range d.Shape {
		row = mul(row, int64(s))
	}
	ds := func(samples int64) int64 {
		b := floats(mul(samples, row)) + alloc(8*samples)
		if d.Groups {
			b += alloc(4 * samples)
		}
		return b
	}
	pool := int64(d.Train)
	if c.Data.Samples > 0 {
		pool = min(pool, int64(c.Data.Samples))
	}
	perNodeSamples := (pool + n - 1) / n
	sampled := c.Partition.Method == "sampled"
	if sampled {
		perNodeSamples = int64(c.Partition.PerNode)
	}
	var global int64
	switch {
	case c.Evaluation.GlobalTest < 0:
		global = int64(d.Test)
	case c.Evaluation.GlobalTest > 0:
		global = min(int64(c.Evaluation.GlobalTest), int64(d.Test))
	}
	rotating := c.Evaluation.GlobalSample == "rotating" && global > 0 && global < int64(d.Test)
	if mapped {
		// Its own samples are next to each other in the file (the
		// launch's row order); the global test set is read through a
		// window whose pages are dropped as it goes (data.OpenShared).
		pages := floats(mul(perNodeSamples, row)) + min(floats(mul(global, row)), data.SharedStreamWindow) + 2*64<<10
		e.Parts = append(e.Parts, EstimatePart{Name: fmt.Sprintf("dataset %s (mapped file)", c.Data.Dataset), Each: pages, Count: 1,
			OutsideHeap: true, PageCache: true,
			How: fmt.Sprintf("the pages of its %s samples and a %s window of the global test set", group(perNodeSamples), bytesText(data.SharedStreamWindow))})
		shared("labels and row positions", alloc(8*int64(d.Train+d.Test))+alloc(4*int64(d.Train)), "of every sample")
	} else if shard && streamsShard(c.Data.Dataset) {
		// Its samples' pixels and the whole global test set's, a byte
		// each (data.Dataset.Codes), every label and training row
		// position: the training images stream through, never decoded
		// whole.
		own := alloc(mul(perNodeSamples+int64(d.Test), row)) + alloc(8*int64(d.Train+d.Test)) + alloc(4*int64(d.Train))
		shared(fmt.Sprintf("dataset %s (its shard)", c.Data.Dataset), own,
			fmt.Sprintf("%s + %s test samples × %s bytes, labels and row positions of %s", group(perNodeSamples), group(int64(d.Test)), group(row), group(int64(d.Train))))
	} else if streamsShard(c.Data.Dataset) {
		// LoadData keeps the MNIST family's pixels as bytes, every
		// sample's (everySample), with each sample's row position.
		all := int64(d.Train + d.Test)
		b := alloc(mul(int64(d.Train), row)) + alloc(mul(int64(d.Test), row)) + alloc(8*all) + alloc(4*all)
		how := fmt.Sprintf("%s + %s samples × %s bytes, labels and row positions", group(int64(d.Train)), group(int64(d.Test)), group(row))
		if global > 0 {
			// Every node evaluates on the global test set: the
			// simulator decodes it once (data.Dataset.Decoded).
			b += floats(mul(int64(d.Test), row))
			how += "; the test samples decoded once, as float32"
		}
		shared(fmt.Sprintf("dataset %s (bytes)", c.Data.Dataset), b, how)
	} else {
		b, how := ds(int64(d.Train))+ds(int64(d.Test)), fmt.Sprintf("%s + %s samples × %s float32, labels", group(int64(d.Train)), group(int64(d.Test)), group(row))
		if shard {
			// A node process of another format decodes the whole
			// dataset and copies its shard out before it drops the
			// rest: that is its peak.
			b += floats(mul(perNodeSamples, row)) + alloc(4*int64(d.Train))
			how += fmt.Sprintf(", while loading; then its %s samples' values", group(perNodeSamples))
		}
		shared(fmt.Sprintf("dataset %s (decoded)", c.Data.Dataset), b, how)
	}
	// The partition and the splits of every client (all of them, in a
	// node process too: the split is computed whole).
	if sampled {
		// Each node's own list of per_node samples (nodes share samples,
		// each holds its copy of the index) and a marker per sample.
		shared("partition and splits", add(alloc(mul(n, 4, perNodeSamples)), alloc(pool), mul(n, 4, 48)),
			fmt.Sprintf("index lists of every client: %s sampled samples each", group(perNodeSamples)))
	} else {
		shared("partition and splits", add(mul(3, 4, pool), mul(n, 4, 48)), "index lists of every client")
	}
	// The training batcher copies its split to shuffle it; the validation
	// and test batchers read their split in place (data.NewEvalBatcher).
	batcher := alloc(int64(unsafe.Sizeof(data.Batcher{})))
	batchers := alloc(4*int64(float64(perNodeSamples)*splitFraction(c, 0)+0.5)) + 3*batcher
	batchersHow := fmt.Sprintf("%s samples a node: the training split's order", group(perNodeSamples))
	if global > 0 && !rotating {
		// The first global test samples need no index list
		// (data.NewPrefixBatcher).
		batchers += batcher
		batchersHow += "; the global test batcher without one"
	}
	per("data batchers", batchers, batchersHow)
	if rotating {
		shared("global test order", alloc(4*int64(d.Test)), "one shuffled order, windows of which the nodes evaluate on")
		per("evaluation: global test window", batcher+alloc(int64(unsafe.Sizeof(data.Rotating{})))+alloc(8),
			fmt.Sprintf("%s samples a round at an offset from (seed, node, round); no index list", group(global)))
	}
	localTest := int64(float64(perNodeSamples)*splitFraction(c, 2) + 0.5)
	e.EvalSamples = mul(int64(c.Nodes), global+localTest)
	e.Eval = &EvalWork{GlobalPerNode: global, GlobalSample: "first", LocalPerNode: localTest,
		EvaluatedRounds: config.Evaluations(c.Rounds, c.EvalEvery), Rounds: c.Rounds}
	switch {
	case global == 0:
		e.Eval.GlobalSample = "none"
	case rotating:
		e.Eval.GlobalSample = "rotating"
	case global == int64(d.Test):
		e.Eval.GlobalSample = "all"
	}

	// The graph (compressed rows; undirected graphs store each link
	// twice), the keys and, in a simulation, the shared signature cache.
	links := int64(float64(n)*mean + 0.5)
	graph := alloc(mul(8, links)) + alloc(8*(n+1))
	if c.Topology.Kind == "mobility" {
		graph = add(2*graph, alloc(mul(8, links))) // the last graph, the build's edges
	}
	shared("graph", graph, fmt.Sprintf("%s, %.4g in-neighbours a node", c.Topology.Kind, mean))
	shared("keys and directory", mul(n, 256), "Ed25519 keys and the public directory")
	if kind == "run" {
		entries := min(1<<18, mul(int64(max(1, c.Rounds)), n, msgs))
		cache := alloc(mul(64, int64(1)<<int(math.Ceil(math.Log2(float64(max(8, entries)))))))
		shared("signature cache", cache, fmt.Sprintf("%s verified messages", group(entries)))
		// A round's records and messages.
		shared("round records and messages", mul(n, 2*sizeNodeRound+msgs*(sizeMessage+64)+alloc(16*degI)+512),
			"per node: its records, messages, weights")
	}

	// The adversary's crafted vectors. The simulator makes those of a
	// round's last exchange phase when their receiver takes them, into
	// its worker's buffers (adversary.RewriteLazy): k vectors a worker and
	// a few hundred bytes a link; with same_for_all one vector a sender.
	// Vectors of an earlier phase (the trust layer's rounds) are made up
	// front, one per out-link, alive through the round.
	if byz := int64(len(ByzantineIDs(c))); byz > 0 && c.Adversary.Attack != "none" && c.Adversary.Attack != "" && kind == "run" {
		links := mul(byz, degI)
		switch {
		case c.TrustOn():
			fan := degI
			if c.Adversary.SameForAll {
				fan = 1
			}
			shared("attack vectors", mul(byz, fan, sends, V), fmt.Sprintf("%d Byzantine nodes × %d links, made before the round's last phase", byz, fan))
		case c.Adversary.SameForAll:
			shared("attack vectors", add(adversary.HeldShared(int(byz), int(sends), V), mul(links, adversary.HeldPerLink)),
				fmt.Sprintf("%d Byzantine nodes × %d vector, %s links", byz, sends, group(links)))
		default:
			e.Parts = append(e.Parts, EstimatePart{Name: "attack vectors", Each: adversary.HeldPerWorker(int(degI*sends), V), Count: workers,
				How: fmt.Sprintf("made when received: %d a worker (%d)", degI*sends, workers)})
			shared("attack messages", mul(links, adversary.HeldPerLink), fmt.Sprintf("%s links of %d Byzantine nodes", group(links), byz))
		}
	}
	if mapped {
		e.Parts = append(e.Parts,
			EstimatePart{Name: "Go runtime and stacks", Each: LaunchedNodeRuntimeBytes, Count: 1, OutsideHeap: true, How: "measured"},
			EstimatePart{Name: "program text and data", Each: LaunchedNodeProgramBytes, Count: 1, OutsideHeap: true, PageCache: true,
				How: "measured: the pages of the binary it runs, shared by every node process"})
	} else {
		e.Parts = append(e.Parts, EstimatePart{Name: "runtime and program", Each: EstimateRuntimeBytes, Count: 1, OutsideHeap: true,
			How: "measured: Go runtime, stacks, program text and data"})
	}

	// Training work of a round.
	steps := int64(c.Training.Steps)
	trainPer := int64(float64(perNodeSamples)*splitFraction(c, 0) + 0.5)
	if steps == 0 {
		e.TrainSamples = mul(int64(c.Nodes), int64(max(1, c.Training.Epochs)), trainPer)
	} else {
		e.TrainSamples = mul(int64(c.Nodes), steps, int64(batch))
	}
	if all := e.TrainSamples + e.EvalSamples; all > 0 && e.Eval != nil {
		e.Eval.Share = float64(e.EvalSamples) / float64(all)
	}

	// Garbage: what a round allocates and drops (signing scratch, the
	// round's records and messages, the crafted messages; the vectors made
	// up front), piling up until the
	// collector runs (setGarbage).
	roundGarbage := mul(n, msgs, sizeMessage)
	if kind == "node process" {
		roundGarbage = mul(degI, sends, 2*V)
	}
	for _, p := range e.Parts {
		if p.Name == "round records and messages" || p.Name == "attack messages" || (p.Name == "attack vectors" && p.Count == 1) {
			roundGarbage = add(roundGarbage, p.Each)
		}
	}
	e.RoundGarbage, e.Rounds = roundGarbage, c.Rounds
	e.setGarbage(c.Rounds - 1) // the last round's is live
	if c.Data.Samples > 0 && c.Data.Samples < d.Train && !mapped {
		e.Notes = append(e.Notes, fmt.Sprintf("data.samples = %d uses part of the training set; the whole dataset is loaded", c.Data.Samples))
	}
	return e, nil
}

// readsStart says whether c's strategy reads the round start (the node then
// keeps a copy of it: strategy.ReadsStart).
func readsStart(c config.Config) bool {
	p, err := c.StrategyParams()
	if err != nil {
		return true // validated before any estimate; count the copy
	}
	st, err := strategy.New(c.Strategy.Name, p)
	return err != nil || strategy.ReadsStart(st)
}

// splitFraction is the clients' train (0), validation (1) or test (2)
// fraction.
func splitFraction(c config.Config, i int) float64 {
	if len(c.Partition.Split) == 3 {
		return c.Partition.Split[i]
	}
	return []float64{0.7, 0.1, 0.2}[i]
}

// setGarbage puts the garbage of k rounds in e: what piles up until the
// collector runs, at the latest when the heap has grown by e.GCPercent
// (GOGC).
func (e *Estimate) setGarbage(k int) {
	e.Parts = slices.DeleteFunc(e.Parts, func(p EstimatePart) bool { return p.Garbage })
	e.finish()
	var heap int64
	for _, p := range e.Parts {
		if !p.OutsideHeap {
			heap = add(heap, p.Bytes)
		}
	}
	bound := fmt.Sprintf("at most %d %% of the live heap (GOGC = %d)", e.GCPercent, e.GCPercent)
	most := heap / 100 * int64(e.GCPercent)
	if e.Kind == "run" && heapHeadroom(heap) < most {
		// `trellis run` sets a soft memory limit this far above the live
		// heap (LimitHeap).
		most, bound = heapHeadroom(heap), "at most the memory limit's headroom (a sixty-fourth of the live heap, at least 64 MiB)"
	}
	if g := min(most, mul(int64(max(0, k)), e.RoundGarbage)); g > 0 {
		e.Parts = append(e.Parts, EstimatePart{Name: "garbage between collections", Each: g, Count: 1, Garbage: true,
			How: fmt.Sprintf("%s a round over %d rounds, %s", bytesText(e.RoundGarbage), k, bound)})
		e.finish()
	}
}

// WithRoundTime is e for rounds of secs seconds (Probe's): the Go runtime
// collects at least every two minutes, so garbage piles up over at most
// that many rounds.
func (e Estimate) WithRoundTime(secs float64) Estimate {
	k := e.Rounds - 1
	if secs > 0 {
		k = min(k, int(math.Ceil(120/secs)))
	}
	e.Parts = slices.Clone(e.Parts)
	e.setGarbage(k)
	return e
}

// Totals is e with Bytes, Live, Peak and PerNode worked out from its
// parts (for estimates composed of others: a launch's processes).
func Totals(e Estimate) Estimate {
	e.Parts = slices.Clone(e.Parts)
	e.finish()
	return e
}

// finish fills the totals from the parts.
func (e *Estimate) finish() {
	e.Live, e.PerNode, e.Peak, e.Private = 0, 0, 0, 0
	var pageCache int64
	for i := range e.Parts {
		p := &e.Parts[i]
		p.Bytes = mul(p.Each, int64(max(1, p.Count)))
		if p.PageCache {
			pageCache = add(pageCache, p.Bytes)
		}
		if p.Garbage {
			e.Peak = add(e.Peak, p.Bytes)
			continue
		}
		e.Live = add(e.Live, p.Bytes)
		if p.PerNode {
			e.PerNode = add(e.PerNode, p.Each)
		}
	}
	e.Peak = add(e.Peak, e.Live)
	e.Private = e.Peak - pageCache
}

func modelDescription(s nn.Spec) string {
	in := make([]string, len(s.Input))
	for i, d := range s.Input {
		in[i] = fmt.Sprint(d)
	}
	desc := s.Kind + " " + strings.Join(in, "×")
	if s.Kind == "mlp" || s.Kind == "logreg" {
		if s.Kind == "logreg" {
			s.Hidden = nil // a logistic regression has no hidden layer, whatever model.hidden says
		}
		for _, h := range s.Hidden {
			desc += fmt.Sprintf("→%d", h)
		}
		desc += fmt.Sprintf("→%d", s.Classes)
	}
	return desc
}

// EvalWork is the evaluation of an evaluated round: per node, the global
// test samples (GlobalSample: "first" ones, "all", a "rotating" window,
// or "none") and the local test split's; the evaluated rounds of the run;
// and Share, the evaluated samples' part of an evaluated round's samples
// (training and evaluated), which is what eval_every, global_test and
// global_sample cut.
type EvalWork struct {
	GlobalPerNode   int64   `json:"global_per_node"`
	GlobalSample    string  `json:"global_sample"`
	LocalPerNode    int64   `json:"local_per_node"`
	EvaluatedRounds int     `json:"evaluated_rounds"`
	Rounds          int     `json:"rounds"`
	Share           float64 `json:"share"`
}
