package rundir

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/trellis-fl/trellis/metrics"
)

// NodeLine is one line of metrics.jsonl: a node's record of a round.
type NodeLine struct {
	Round int `json:"round"`
	metrics.NodeRound
}

// maxLine bounds one line of a record file when reading (a round's
// aggregates of a large run, with per-node Live data left out, fit well
// within it).
const maxLine = 1 << 26

// scanLines calls fn with each line of dir's file name until fn returns
// false; a missing file is no lines and no error.
func scanLines(dir, name string, fn func(line []byte) bool) error {
	f, err := os.Open(filepath.Join(dir, name))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, maxLine)
	for sc.Scan() {
		if !fn(sc.Bytes()) {
			break
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("%s: %w", filepath.Join(dir, name), err)
	}
	return nil
}

// readLines decodes dir's file name line by line; a line that does not
// decode (the torn last line of an interrupted run) or is too long to
// read ends it.
func readLines[T any](dir, name string) ([]*T, error) {
	var out []*T
	err := scanLines(dir, name, func(line []byte) bool {
		v := new(T)
		if json.Unmarshal(line, v) != nil {
			return false
		}
		out = append(out, v)
		return true
	})
	if errors.Is(err, bufio.ErrTooLong) {
		err = nil
	}
	return out, err
}

// ReadRounds reads dir's rounds.jsonl: the aggregates of every complete
// round (without Nodes: ReadNodes has them). A missing file is no rounds.
func ReadRounds(dir string) ([]*metrics.Round, error) {
	return readLines[metrics.Round](dir, RoundsFile)
}

// ReadNodes reads dir's metrics.jsonl: every node's record of every
// complete round, in file order. A missing file is no records.
func ReadNodes(dir string) ([]*NodeLine, error) { return readLines[NodeLine](dir, MetricsFile) }

// ReadRoundFields reads dir's rounds.jsonl with every line as a JSON
// object, its keys those of the file (for tools that go by metric name).
func ReadRoundFields(dir string) ([]map[string]any, error) {
	ms, err := readLines[map[string]any](dir, RoundsFile)
	out := make([]map[string]any, len(ms))
	for i, m := range ms {
		out[i] = *m
	}
	return out, err
}

// EachHonestNode calls fn with every honest node's record in dir's
// metrics.jsonl whose line holds the field key (a cheap filter before
// decoding); an undecodable line (an interrupted run's last) is skipped.
func EachHonestNode(dir, field string, fn func(*metrics.NodeRound)) error {
	key := []byte(`"` + field + `"`)
	return scanLines(dir, MetricsFile, func(line []byte) bool {
		if !bytes.Contains(line, key) {
			return true
		}
		var n metrics.NodeRound
		if json.Unmarshal(line, &n) == nil && !n.Byzantine {
			fn(&n)
		}
		return true
	})
}

// LastRound reads the number and node records of the last round in dir's
// metrics.jsonl; a line that does not decode is an error (what reads it
// checks models against these records).
func LastRound(dir string) (int, []metrics.NodeRound, error) {
	path := filepath.Join(dir, MetricsFile)
	if _, err := os.Stat(path); err != nil {
		return 0, nil, err
	}
	var recs []metrics.NodeRound
	round := -1
	var bad error
	err := scanLines(dir, MetricsFile, func(line []byte) bool {
		var r NodeLine
		if err := json.Unmarshal(line, &r); err != nil {
			bad = fmt.Errorf("%s: %w", path, err)
			return false
		}
		if r.Round != round {
			round, recs = r.Round, recs[:0]
		}
		recs = append(recs, r.NodeRound)
		return true
	})
	if err == nil {
		err = bad
	}
	if err != nil {
		return 0, nil, err
	}
	if len(recs) == 0 {
		return 0, nil, fmt.Errorf("%s: no records", path)
	}
	return round, recs, nil
}

// Digest is the SHA-256 of dir's record file name (MetricsFile,
// RoundsFile): two runs computed the same when their digests are equal.
func Digest(dir, name string) ([sha256.Size]byte, error) {
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		return [sha256.Size]byte{}, err
	}
	return sha256.Sum256(b), nil
}
