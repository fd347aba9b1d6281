package experiment

import (
	"fmt"

	"github.com/trellis-fl/trellis/config"
)

// LaunchEstimate is a deployed run on one machine (`trellis launch`): a
// monitor and one OS process per node, each node process mapping the
// launch's shared dataset file and building its node, plus the launcher
// itself and the file's pages in the page cache, once.
type LaunchEstimate struct {
	// Node is one node process, Monitor the monitor's, and Total the
	// machine's: Nodes node processes, the monitor and the launcher.
	Node    Estimate `json:"node_process"`
	Monitor Estimate `json:"monitor"`
	Total   Estimate `json:"total"`
}

// EstimateLaunch estimates c launched on one machine, on a dataset of
// shape d.
func EstimateLaunch(c config.Config, d DataShape) (LaunchEstimate, error) {
	node, err := EstimateLaunchedNode(c, d)
	if err != nil {
		return LaunchEstimate{}, err
	}
	mon := EstimateMonitor(c)
	total := Estimate{Kind: "launch", Name: c.Name, Nodes: c.Nodes, Params: node.Params, Model: node.Model,
		Parts: []EstimatePart{
			{Name: "node processes", Each: node.Private, Count: c.Nodes, PerNode: true, How: "each its expected peak but for the pages every node process shares: its heap, runtime, index lists and node"},
			{Name: "program text and data", Each: LaunchedNodeProgramBytes, Count: 1, PageCache: true, How: "the binary's pages, shared by the node processes"},
			{Name: "shared dataset file", Each: sharedFileBytes(d), Count: 1, PageCache: true, How: "decoded once by the launcher, in the page cache"},
			{Name: "monitor", Each: mon.Peak, Count: 1},
			{Name: "launcher (this process)", Each: EstimateRuntimeBytes, Count: 1},
		}}
	return LaunchEstimate{Node: node, Monitor: mon, Total: Totals(total)}, nil
}

// sharedFileBytes is the size of the launch's decoded dataset file:
// float32 samples and int32 labels, row positions and groups.
func sharedFileBytes(d DataShape) int64 {
	row := int64(1)
	for _, s := range d.Shape {
		row = mul(row, int64(s))
	}
	n := int64(d.Train + d.Test)
	return add(mul(4, n, row), mul(12, n))
}

// CheckLaunchMemory refuses a launch whose total live memory exceeds
// m.Available, saying what would fit: the most nodes whose launch fits,
// one process instead of one per node, more machines. A zero m.Available
// (unknown) passes.
func CheckLaunchMemory(c config.Config, l LaunchEstimate, d DataShape, m Memory) error {
	if m.Available <= 0 || l.Total.Live <= m.Available {
		return nil
	}
	return &MemoryError{Estimate: l.Total, Memory: m, Fits: launchFits(c, d, m.Available)}
}

// launchFits is the changes that make a launch fit in avail bytes: the
// largest node count whose processes, monitor and launcher fit (a binary
// search; each node process's peak depends on the node count through its
// neighbourhood), running the nodes in one process, or more machines.
func launchFits(c config.Config, d DataShape, avail int64) []string {
	most := mostNodes(c, func(x config.Config) bool {
		node, err := EstimateLaunchedNode(x, d)
		return err == nil && int64(x.Nodes)*node.Private+LaunchedNodeProgramBytes+sharedFileBytes(d)+EstimateMonitor(x).Peak+EstimateRuntimeBytes <= avail
	})

	var fits []string
	if most >= 1 {
		fits = append(fits, fmt.Sprintf("nodes = %d", most))
	}
	return append(fits, "`trellis run` (one process: the dataset once)", "more machines (`trellis slurm launch`, `trellis k8s launch`)")
}

// CheckNodeProcessMemory refuses one node process (`trellis node`) whose
// live memory exceeds m.Available, before anything is loaded: an edge
// device too small for its node says so with the numbers instead of being
// killed mid-run. A zero m.Available (unknown) passes.
func CheckNodeProcessMemory(c config.Config, node Estimate, m Memory) error {
	if m.Available <= 0 || node.Live <= m.Available {
		return nil
	}
	return &MemoryError{Estimate: node, Memory: m,
		// data.samples would not help: a node decodes its whole dataset.
		Fits: []string{"a smaller model (model.kind, model.hidden)", "a machine with more memory"}}
}
