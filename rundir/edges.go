package rundir

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/trellis-fl/trellis/metrics"
)

// EdgeRound is one line of an edges file: the weight each receiver gave
// each sender in one round, as [receiver, sender, weight] triples sorted
// by receiver and sender, the non-zero weights only (a node's weight on
// its own model included, when its strategy counts it). A weight that is
// not finite is null.
type EdgeRound struct {
	Round int          `json:"round"`
	Edges [][3]float64 `json:"edges"`
}

// edgeWriter is the sink that writes each round's weights (Round.Live) as
// one line of edges.jsonl (EdgeRound), so that a finished run's viewer
// can draw who gave whom how much. A round without Live is skipped.
// Weights are written with 6 significant digits: the file is for looking
// at, and the run's metrics never depend on it. It is written apart from
// metrics.jsonl, whose bytes it does not touch.
type edgeWriter struct {
	f    *os.File
	w    *bufio.Writer
	next int // the first round not on file
	line []byte
}

// newEdgeWriter opens path for a run whose first keep rounds are on file
// already (a resumed run; 0 starts afresh): it keeps the file's complete
// lines of rounds 0, 1, … below keep, drops the rest, and writes every
// later round it is given — a resumed run replays its early rounds, so a
// round missing from the file is written again.
func newEdgeWriter(path string, keep int) (*edgeWriter, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	e := &edgeWriter{f: f}
	var off int64
	if keep > 0 {
		if off, e.next, err = keptLines(f, keep); err != nil {
			f.Close()
			return nil, err
		}
	}
	if err := cutAt(f, off); err != nil {
		f.Close()
		return nil, err
	}
	e.w = bufio.NewWriterSize(f, 1<<16)
	return e, nil
}

// keptLines returns the length of the file's leading complete lines of
// rounds 0, 1, … below keep, and how many there are.
func keptLines(f *os.File, keep int) (int64, int, error) {
	b, err := io.ReadAll(f)
	if err != nil {
		return 0, 0, err
	}
	var off int64
	n := 0
	for n < keep {
		i := bytes.IndexByte(b[off:], '\n')
		if i < 0 {
			break
		}
		var head struct {
			Round *int `json:"round"`
		}
		if json.Unmarshal(b[off:off+int64(i)], &head) != nil || head.Round == nil || *head.Round != n {
			break
		}
		off += int64(i) + 1
		n++
	}
	return off, n, nil
}

// Round implements metrics.Sink: it writes r's line and flushes it, unless r is a
// round on file already or has no Live.
func (e *edgeWriter) Round(r *metrics.Round) error {
	if r.Round < e.next || r.Live == nil {
		return nil
	}
	e.next = r.Round + 1
	b := append(e.line[:0], `{"round":`...)
	b = strconv.AppendInt(b, int64(r.Round), 10)
	b = append(b, `,"edges":[`...)
	first := true
	for recv, w := range r.Live.Weights {
		senders := make([]int, 0, len(w))
		for s, x := range w {
			if x != 0 {
				senders = append(senders, s)
			}
		}
		slices.Sort(senders)
		for _, s := range senders {
			if !first {
				b = append(b, ',')
			}
			first = false
			b = append(b, '[')
			b = strconv.AppendInt(b, int64(recv), 10)
			b = append(b, ',')
			b = strconv.AppendInt(b, int64(s), 10)
			b = append(b, ',')
			if x := w[s]; math.IsNaN(x) || math.IsInf(x, 0) {
				b = append(b, "null"...)
			} else {
				b = strconv.AppendFloat(b, x, 'g', 6, 64)
			}
			b = append(b, ']')
		}
	}
	b = append(b, "]}\n"...)
	e.line = b
	if _, err := e.w.Write(b); err != nil {
		return err
	}
	return e.w.Flush()
}

// Close flushes and closes the file.
func (e *edgeWriter) Close() error {
	return errors.Join(e.w.Flush(), e.f.Close())
}

// ReadEdges reads dir's edges.jsonl, round by round; a torn last line (an
// interrupted run) ends it. A missing file (a run without run.edges) is
// no rounds and no error.
func ReadEdges(dir string) ([]EdgeRound, error) {
	f, err := os.Open(filepath.Join(dir, EdgesFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<28)
	var out []EdgeRound
	for sc.Scan() {
		var raw struct {
			Round int           `json:"round"`
			Edges [][3]*float64 `json:"edges"`
		}
		if err := json.Unmarshal(sc.Bytes(), &raw); err != nil {
			break
		}
		er := EdgeRound{Round: raw.Round, Edges: make([][3]float64, len(raw.Edges))}
		for i, t := range raw.Edges {
			for k, p := range t {
				er.Edges[i][k] = math.NaN()
				if p != nil {
					er.Edges[i][k] = *p
				}
			}
		}
		out = append(out, er)
	}
	return out, sc.Err()
}
