package rundir

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/trellis-fl/trellis/metrics"
)

// ErrDamaged is wrapped by Verify's error: a record file of the run
// directory is not what the run wrote (cut short, a line changed, the
// summary disagreeing with the rounds).
var ErrDamaged = errors.New("damaged run directory")

// Verify checks that dir's record files are whole and agree with each
// other, for a run of nodes nodes whose final metrics average its last
// finalRounds evaluated rounds — what a tool that reads a run back (the
// report, trellis serve) does first, since the readers stop quietly at the
// first line that does not decode (the torn last line an interrupted run
// may leave):
//
//   - manifest.json, when there, decodes;
//   - every line of rounds.jsonl and metrics.jsonl decodes and ends in a
//     newline, except the last line of an unfinished run (no summary.csv);
//   - rounds.jsonl numbers its rounds 0, 1, …; metrics.jsonl holds nodes
//     lines per round, rounds in order (none in a run of task type
//     consensus, every round of which carries its consensus record);
//   - each round's aggregates in rounds.jsonl are those of its node lines
//     (metrics.Round.Summarize);
//   - an asynchronous run's steps.jsonl (verifySteps): its steps in time
//     order inside their windows, and each window's node lines the sum of
//     its steps;
//   - a finished run has as many rounds as its summary.csv and manifest
//     count, and its final metrics are the mean of its last finalRounds
//     evaluated rounds.
//
// The error (wrapping ErrDamaged) names the file and the line. nodes ≤ 0
// skips the count of node lines per round.
func Verify(dir string, nodes, finalRounds int) error {
	man, err := ReadManifest(dir)
	hasMan := err == nil
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return damaged(dir, ManifestFile, 0, "does not decode (%v)", err)
	}
	fin, finished := ReadFinal(dir)
	if !finished && Has(dir, SummaryFile) {
		if rows, err := ReadSummary(dir); err != nil || len(rows) == 1 {
			return damaged(dir, SummaryFile, 0, "is not one run's row of final metrics")
		}
	}
	rounds, err := verifyRounds(dir, finished)
	if err != nil {
		return err
	}
	if finished && len(rounds) != fin.Rounds {
		return damaged(dir, RoundsFile, len(rounds), "holds %d rounds, %s counts %d: the file was cut short or extended", len(rounds), SummaryFile, fin.Rounds)
	}
	if err := verifyNodes(dir, rounds, nodes, finished); err != nil {
		return err
	}
	var clock *AsyncClock
	if hasMan {
		clock = man.Async
	}
	if err := verifySteps(dir, clock, rounds, finished); err != nil {
		return err
	}
	if !finished {
		return nil
	}
	if hasMan && man.Rounds != fin.Rounds {
		return damaged(dir, ManifestFile, 0, "counts %d finished rounds, %s %d", man.Rounds, SummaryFile, fin.Rounds)
	}
	var evaluated []*metrics.Round
	for _, r := range rounds {
		if r.Evaluated {
			evaluated = append(evaluated, r)
		}
	}
	want := finalOf(evaluated, finalRounds, len(rounds))
	names := finalColumns[:6]
	for i, v := range want.values()[:6] {
		if got := fin.values()[i]; !agree(got, v) {
			return damaged(dir, SummaryFile, 2, "%s = %s, but the mean of the last %d evaluated rounds of %s is %s",
				names[i], strconv.FormatFloat(got, 'g', -1, 64), finalRounds, RoundsFile, strconv.FormatFloat(v, 'g', -1, 64))
		}
	}
	if w, g := want.Consensus, fin.Consensus; (w == nil) != (g == nil) || (w != nil && (!agree(g.MSE, w.MSE) || !agree(g.MaxAbsErr, w.MaxAbsErr))) {
		return damaged(dir, SummaryFile, 2, "does not hold the consensus error of the last round of %s", RoundsFile)
	}
	return nil
}

// consensusRun reports whether rounds are those of a run of task type
// consensus, which writes no node lines (metrics.ConsensusRound).
func consensusRun(rounds []*metrics.Round) bool {
	return len(rounds) > 0 && !slices.ContainsFunc(rounds, func(r *metrics.Round) bool { return r.Consensus == nil })
}

// damaged is Verify's error for line (1-based; 0: the whole file) of
// dir's file name.
func damaged(dir, name string, line int, format string, args ...any) error {
	where := filepath.Join(dir, name)
	if line > 0 {
		where += " line " + strconv.Itoa(line)
	}
	return fmt.Errorf("%w: %s %s; redo the run (--force) or remove the directory", ErrDamaged, where, fmt.Sprintf(format, args...))
}

// agree reports whether a recomputed aggregate matches the one on file:
// equal but for the last bits (a sum in another order).
func agree(a, b float64) bool {
	if a == b || math.IsNaN(a) && math.IsNaN(b) {
		return true
	}
	return math.Abs(a-b) <= 1e-9*max(1, math.Abs(a), math.Abs(b))
}

// eachLine calls fn with every line of dir's file name and its number
// (from 1), and whether it ended in a newline; a missing file has no
// lines.
func eachLine(dir, name string, fn func(n int, line []byte, whole bool) error) error {
	f, err := os.Open(filepath.Join(dir, name))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 1<<20)
	for n := 1; ; n++ {
		line, err := r.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			// A line longer than the buffer: read it whole.
			long := append([]byte(nil), line...)
			for errors.Is(err, bufio.ErrBufferFull) {
				line, err = r.ReadSlice('\n')
				long = append(long, line...)
			}
			line = long
		}
		if len(line) == 0 && errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return fmt.Errorf("%s: %w", filepath.Join(dir, name), err)
		}
		whole := err == nil
		if whole {
			line = line[:len(line)-1]
		}
		if ferr := fn(n, line, whole); ferr != nil {
			return ferr
		}
		if !whole {
			return nil
		}
	}
}

// verifyRounds reads rounds.jsonl line by line: every line whole and
// decoding, rounds numbered from 0; an unfinished run's torn last line
// is left out.
func verifyRounds(dir string, finished bool) ([]*metrics.Round, error) {
	var out []*metrics.Round
	err := eachLine(dir, RoundsFile, func(n int, line []byte, whole bool) error {
		r := new(metrics.Round)
		if err := json.Unmarshal(line, r); err != nil || !whole {
			if !whole && !finished {
				return nil // an interrupted run's torn last line
			}
			return damaged(dir, RoundsFile, n, "is not a whole round record (%s)", why(err, whole))
		}
		if r.Round != n-1 {
			return damaged(dir, RoundsFile, n, "is round %d, want %d (rounds in order from 0)", r.Round, n-1)
		}
		out = append(out, r)
		return nil
	})
	return out, err
}

// verifyNodes reads metrics.jsonl line by line against the rounds of
// rounds.jsonl: nodes lines per round, in order, whose aggregates are the
// round's. An unfinished run may end with a torn line, or with the node
// lines of a round whose aggregate line was not written.
func verifyNodes(dir string, rounds []*metrics.Round, nodes int, finished bool) error {
	cur := &metrics.Round{Round: -1}
	first := 0 // line number of cur's first node line
	check := func(last int) error {
		if cur.Round < 0 {
			return nil
		}
		if cur.Round >= len(rounds) {
			if finished {
				return damaged(dir, MetricsFile, first, "is round %d, but %s has %d rounds", cur.Round, RoundsFile, len(rounds))
			}
			return nil // written before the run stopped, its aggregate not
		}
		if nodes > 0 && len(cur.Nodes) != nodes {
			return damaged(dir, MetricsFile, first, "begins round %d, which has %d node lines, want %d (lines %d–%d)", cur.Round, len(cur.Nodes), nodes, first, last)
		}
		want := rounds[cur.Round]
		cur.Evaluated = want.Evaluated
		cur.Summarize()
		for _, c := range []struct {
			name      string
			got, want float64
		}{
			{"honest_local_acc", cur.HonestLocalAcc, want.HonestLocalAcc},
			{"honest_global_acc", cur.HonestGlobalAcc, want.HonestGlobalAcc},
			{"all_acc", cur.AllAcc, want.AllAcc},
			{"honest_loss", cur.HonestLoss, want.HonestLoss},
			{"delta_max", cur.DeltaMax, want.DeltaMax},
			{"mean_byz_weight", cur.MeanByzWeight, want.MeanByzWeight},
			{"bytes_sent", float64(cur.BytesSent), float64(want.BytesSent)},
		} {
			if !agree(c.got, c.want) {
				return damaged(dir, MetricsFile, first, "begins round %d, whose node lines (%d–%d) give %s = %s, but %s line %d says %s",
					cur.Round, first, last, c.name, strconv.FormatFloat(c.got, 'g', -1, 64), RoundsFile, cur.Round+1, strconv.FormatFloat(c.want, 'g', -1, 64))
			}
		}
		return nil
	}
	last := 0
	err := eachLine(dir, MetricsFile, func(n int, line []byte, whole bool) error {
		var nl NodeLine
		if err := json.Unmarshal(line, &nl); err != nil || !whole {
			if !whole && !finished {
				return nil
			}
			return damaged(dir, MetricsFile, n, "is not a whole node record (%s)", why(err, whole))
		}
		last = n
		if nl.Round == cur.Round {
			cur.Nodes = append(cur.Nodes, nl.NodeRound)
			return nil
		}
		if nl.Round != cur.Round+1 {
			return damaged(dir, MetricsFile, n, "is round %d after round %d (rounds in order from 0)", nl.Round, cur.Round)
		}
		if err := check(n - 1); err != nil {
			return err
		}
		cur, first = &metrics.Round{Round: nl.Round, Nodes: []metrics.NodeRound{nl.NodeRound}}, n
		return nil
	})
	if err != nil {
		return err
	}
	if err := check(last); err != nil {
		return err
	}
	if finished && cur.Round+1 != len(rounds) && !(cur.Round < 0 && consensusRun(rounds)) {
		return damaged(dir, MetricsFile, last, "ends with round %d, but %s has %d rounds: the file was cut short", cur.Round, RoundsFile, len(rounds))
	}
	return nil
}

// why says what is wrong with a record line.
func why(err error, whole bool) string {
	if err != nil {
		return err.Error()
	}
	if !whole {
		return "no newline: cut short"
	}
	return "ok"
}
