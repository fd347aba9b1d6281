package rundir

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/trellis-fl/trellis/metrics"
)

// StepsFile is an asynchronous run's per-node step records, one line per
// node step (metrics.Step) in the order of virtual time.
const StepsFile = "steps.jsonl"

// AsyncClock is what an asynchronous run's manifest says of its virtual
// clock, so that readers can put its windows on a time axis without the
// config's types: the window each summary record covers, and the time
// one synchronous round would take on the same clock (the slowest node's
// step and link), to compare the steps taken with the rounds that waiting
// for the slowest node would have done.
type AsyncClock struct {
	Window    float64 `json:"window"`
	SyncRound float64 `json:"sync_round"`
}

// stepWriter writes steps.jsonl. A resumed run recomputes every step from
// the start (the simulator has no other checkpoint than the records on
// file), so the lines on file are checked byte for byte as the steps come
// again, and the later ones appended: the file ends identical to an
// uninterrupted run's.
type stepWriter struct {
	dir string
	out *lines
	old [][]byte // complete lines on file, not yet matched
	buf bytes.Buffer
}

// newStepWriter opens dir's steps file; resume keeps and checks its
// complete lines (a torn last line is cut).
func newStepWriter(dir string, resume bool) (*stepWriter, error) {
	path := filepath.Join(dir, StepsFile)
	s := &stepWriter{dir: dir}
	if !resume {
		var err error
		s.out, err = newLines(path)
		return s, err
	}
	b, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		return nil, err
	}
	var off int64
	for {
		i := bytes.IndexByte(b[off:], '\n')
		if i < 0 {
			break
		}
		s.old = append(s.old, b[off:off+int64(i)+1])
		off += int64(i) + 1
	}
	s.out, err = appendLines(path, off)
	return s, err
}

// step writes (or, resuming, checks) one step's line and flushes it.
func (s *stepWriter) step(st metrics.Step) error {
	if len(s.old) > 0 {
		s.buf.Reset()
		if err := json.NewEncoder(&s.buf).Encode(st); err != nil {
			return err
		}
		if !bytes.Equal(s.old[0], s.buf.Bytes()) {
			return fmt.Errorf("resuming %s: node %d's step %d recomputes differently from %s on file (the code, the data or the machine changed what this config computes); redo the run with --force",
				s.dir, st.Node, st.Step, StepsFile)
		}
		s.old = s.old[1:]
		return nil
	}
	if err := s.out.write(st); err != nil {
		return err
	}
	return s.out.flush()
}

// Step records one node step of an asynchronous run (Spec.Steps). It is
// called from the driver's goroutine, in virtual-time order, apart from
// Round: the steps file has a writer of its own.
func (w *Writer) Step(st metrics.Step) error {
	if w.steps == nil {
		return fmt.Errorf("rundir: a step record for a run without %s (Spec.Steps)", StepsFile)
	}
	return w.steps.step(st)
}

// ReadSteps reads dir's steps.jsonl; a torn last line (an interrupted
// run) ends it. A missing file (a run in rounds) is no steps and no
// error.
func ReadSteps(dir string) ([]metrics.Step, error) {
	var out []metrics.Step
	err := eachLine(dir, StepsFile, func(_ int, line []byte, whole bool) error {
		var s metrics.Step
		if !whole || json.Unmarshal(line, &s) != nil {
			return errStop
		}
		out = append(out, s)
		return nil
	})
	if err == errStop {
		err = nil
	}
	return out, err
}

var errStop = fmt.Errorf("stop")
