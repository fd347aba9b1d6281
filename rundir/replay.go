package rundir

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/trellis-fl/trellis/metrics"
)

// replayed is what an interrupted run left on file for its first rounds:
// the lines a resumed run must reproduce, and how many bytes of each file
// to keep.
type replayed struct {
	dir    string
	nodes  [][]byte // metrics.jsonl lines, round after round
	rounds [][]byte // rounds.jsonl lines
	keep   map[string]int64
}

// readReplay reads the first n rounds of dir's record files (every round
// has one metrics.jsonl line per node, then one rounds.jsonl line).
func readReplay(dir string, n int) (*replayed, error) {
	old := &replayed{dir: dir, keep: map[string]int64{}}
	read := func(name string, want int) ([][]byte, error) {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return nil, err
		}
		var out [][]byte
		var off int64
		for len(out) < want {
			i := bytes.IndexByte(b[off:], '\n')
			if i < 0 {
				break
			}
			out = append(out, b[off:off+int64(i)+1])
			off += int64(i) + 1
		}
		old.keep[name] = off
		return out, nil
	}
	var err error
	if old.rounds, err = read(RoundsFile, n); err != nil {
		return nil, err
	}
	// Count the node lines of the first n rounds by their round field.
	b, err := os.ReadFile(filepath.Join(dir, MetricsFile))
	if err != nil {
		return nil, err
	}
	var off int64
	for {
		i := bytes.IndexByte(b[off:], '\n')
		if i < 0 {
			break
		}
		line := b[off : off+int64(i)+1]
		var head struct {
			Round int `json:"round"`
		}
		if err := json.Unmarshal(line, &head); err != nil {
			return nil, fmt.Errorf("%s: line %d: %w", filepath.Join(dir, MetricsFile), len(old.nodes)+1, err)
		}
		if head.Round >= n {
			break
		}
		old.nodes = append(old.nodes, line)
		off += int64(i) + 1
	}
	old.keep[MetricsFile] = off
	if _, err := read(TimingsFile, n); err != nil && !os.IsNotExist(err) {
		return nil, err
	}
	if len(old.rounds) != n {
		return nil, fmt.Errorf("%s: %d complete rounds, want %d", filepath.Join(dir, RoundsFile), len(old.rounds), n)
	}
	return old, nil
}

// check compares a recomputed round with the one on file.
func (o *replayed) check(r *metrics.Round, agg *metrics.Round) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	for _, n := range r.Nodes {
		buf.Reset()
		if err := enc.Encode(NodeLine{r.Round, n}); err != nil {
			return err
		}
		if len(o.nodes) == 0 || !bytes.Equal(o.nodes[0], buf.Bytes()) {
			return fmt.Errorf("resuming %s: round %d of node %d recomputes differently from the record on file (the code, the data or the machine changed what this config computes); redo the run with --force", o.dir, r.Round, n.Node)
		}
		o.nodes = o.nodes[1:]
	}
	buf.Reset()
	if err := enc.Encode(agg); err != nil {
		return err
	}
	if r.Round >= len(o.rounds) || !bytes.Equal(o.rounds[r.Round], buf.Bytes()) {
		return fmt.Errorf("resuming %s: round %d's aggregates recompute differently from the record on file; redo the run with --force", o.dir, r.Round)
	}
	return nil
}
