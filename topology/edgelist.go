package topology

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

// ParseError is a malformed line of an edge list or contact trace.
type ParseError struct {
	Name string // file path; empty when parsing a reader
	Line int    // 1-based; 0 when the error concerns the whole input
	Msg  string
}

func (e *ParseError) Error() string {
	where := e.Name
	if where == "" {
		where = "input"
	}
	if e.Line > 0 {
		return fmt.Sprintf("topology: %s:%d: %s", where, e.Line, e.Msg)
	}
	return fmt.Sprintf("topology: %s: %s", where, e.Msg)
}

// maxLineBytes bounds one line of an edge list or trace.
const maxLineBytes = 1 << 16

// ParseEdgeList reads an edge list: one edge "i j" or "i,j" per line, blank
// lines ignored, "#" starting a comment (whole line or trailing). With n > 0
// ids must be in [0, n); with n == 0 the graph has max id + 1 nodes (an edge
// list cannot mention isolated nodes beyond the last id, so pass n when there
// are some). Duplicates are merged; in an undirected list "i j" and "j i" are
// the same edge. A malformed line is a *ParseError naming the line.
func ParseEdgeList(r io.Reader, n int, directed bool) (*Graph, error) {
	if n < 0 || n > MaxNodes {
		return nil, fmt.Errorf("topology: ParseEdgeList: n = %d, want 0 (infer) or 1 <= n <= %d", n, MaxNodes)
	}
	var es []Edge
	maxID := -1
	err := scanRecords(r, func(line int, fs []string) error {
		if len(fs) != 2 {
			return &ParseError{Line: line, Msg: fmt.Sprintf("%d fields, want 2 (\"i j\" or \"i,j\")", len(fs))}
		}
		var ids [2]int
		for k, f := range fs {
			v, err := parseID(f, n)
			if err != nil {
				return &ParseError{Line: line, Msg: err.Error()}
			}
			ids[k] = v
		}
		if ids[0] == ids[1] {
			return &ParseError{Line: line, Msg: fmt.Sprintf("self-loop on node %d (self-loops are not edges)", ids[0])}
		}
		maxID = max(maxID, ids[0], ids[1])
		es = append(es, Edge{ids[0], ids[1]})
		return nil
	})
	if err != nil {
		return nil, err
	}
	if n == 0 {
		if len(es) == 0 {
			return nil, &ParseError{Msg: "no edges, so the node count cannot be inferred; pass n"}
		}
		n = maxID + 1
	}
	return build(n, directed, normalize(es, directed)), nil
}

// LoadEdgeList is ParseEdgeList on the file at path; errors name the path.
func LoadEdgeList(path string, n int, directed bool) (*Graph, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("topology: edge list: %w", err)
	}
	defer f.Close()
	g, err := ParseEdgeList(f, n, directed)
	return g, named(err, path)
}

// named sets the file name of a *ParseError.
func named(err error, path string) error {
	var pe *ParseError
	if errors.As(err, &pe) {
		pe.Name = path
	}
	return err
}

// scanRecords calls fn with the fields of every non-blank, non-comment line.
// Fields are separated by commas if the line has one (each trimmed), by white
// space otherwise. Text after "#" is a comment.
func scanRecords(r io.Reader, fn func(line int, fields []string) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), maxLineBytes)
	line := 0
	for sc.Scan() {
		line++
		s := sc.Text()
		if k := strings.IndexByte(s, '#'); k >= 0 {
			s = s[:k]
		}
		s = strings.TrimSpace(s)
		if s == "" {
			continue
		}
		var fs []string
		if strings.IndexByte(s, ',') >= 0 {
			fs = strings.Split(s, ",")
			for k := range fs {
				fs[k] = strings.TrimSpace(fs[k])
			}
		} else {
			fs = strings.Fields(s)
		}
		if err := fn(line, fs); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return &ParseError{Line: line + 1, Msg: fmt.Sprintf("line longer than %d bytes", maxLineBytes)}
		}
		return &ParseError{Line: line + 1, Msg: err.Error()}
	}
	return nil
}

// parseID parses a node id: a decimal integer in [0, n), or in
// [0, MaxNodes) when n == 0 (inferred count).
func parseID(f string, n int) (int, error) {
	v, err := strconv.Atoi(f)
	if err != nil || f == "" || f[0] == '+' {
		return 0, fmt.Errorf("node id %q is not a decimal integer", f)
	}
	limit := n
	if n == 0 {
		limit = MaxNodes
	}
	if v < 0 || v >= limit {
		return 0, fmt.Errorf("node id %d out of range [0, %d)", v, limit)
	}
	return v, nil
}
