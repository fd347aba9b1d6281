package topology

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
)

// MaxTraceRound bounds the round numbers of a contact trace: rounds are in
// [0, MaxTraceRound).
const MaxTraceRound = 1 << 31

// Contact is an undirected contact between nodes I and J during Round.
type Contact struct {
	Round, I, J int
}

// Trace is a dynamic graph replayed from recorded contacts (the DMTT paper,
// §V-C: CSV rows round,i,j). Its period is Len() = last round + 1;
// round t plays the contacts of round t mod Len(), so the trace wraps around
// when a run has more rounds than it. A round without contacts is a graph
// without edges. Graphs are built once, at construction, so At is a binary
// search; memory is proportional to the number of contacts. Safe for
// concurrent use.
type Trace struct {
	n      int
	period int
	rounds []int    // sorted rounds that have contacts
	graphs []*Graph // graphs[k] is round rounds[k]
	empty  *Graph
}

// NewTrace builds a trace on n nodes (1..MaxNodes) from contacts, which need
// not be sorted; duplicates and {i, j}/{j, i} repeats are merged. Rounds must
// be in [0, MaxTraceRound), ids in [0, n), i != j; an error names the
// offending contact's index. There must be at least one contact.
func NewTrace(n int, contacts []Contact) (*Trace, error) {
	if err := checkN("NewTrace", n, 1); err != nil {
		return nil, err
	}
	for k, c := range contacts {
		if c.Round < 0 || c.Round >= MaxTraceRound {
			return nil, fmt.Errorf("topology: NewTrace: contact %d: round %d out of range [0, %d)", k, c.Round, MaxTraceRound)
		}
		if err := checkEdge(n, c.I, c.J); err != nil {
			return nil, fmt.Errorf("topology: NewTrace: contact %d (round %d, %d, %d): %w", k, c.Round, c.I, c.J, err)
		}
	}
	if len(contacts) == 0 {
		return nil, fmt.Errorf("topology: NewTrace: no contacts")
	}
	cs := slices.Clone(contacts)
	for k, c := range cs {
		if c.I > c.J {
			cs[k].I, cs[k].J = c.J, c.I
		}
	}
	slices.SortFunc(cs, func(a, b Contact) int {
		if a.Round != b.Round {
			return a.Round - b.Round
		}
		return compareEdges(Edge{a.I, a.J}, Edge{b.I, b.J})
	})
	cs = slices.Compact(cs)
	t := &Trace{n: n, period: cs[len(cs)-1].Round + 1, empty: build(n, false, nil)}
	for lo := 0; lo < len(cs); {
		hi := lo
		es := []Edge{}
		for hi < len(cs) && cs[hi].Round == cs[lo].Round {
			es = append(es, Edge{cs[hi].I, cs[hi].J})
			hi++
		}
		t.rounds = append(t.rounds, cs[lo].Round)
		t.graphs = append(t.graphs, build(n, false, es))
		lo = hi
	}
	return t, nil
}

// N is the number of nodes.
func (t *Trace) N() int { return t.n }

// Len is the trace's period: its last round + 1.
func (t *Trace) Len() int { return t.period }

// At returns the contact graph of round mod Len().
func (t *Trace) At(round int) *Graph {
	checkRound(round)
	if k, ok := slices.BinarySearch(t.rounds, round%t.period); ok {
		return t.graphs[k]
	}
	return t.empty
}

// ParseTrace reads a contact trace: CSV rows "round,i,j" (white space instead
// of commas is accepted too), "#" comments and blank lines ignored, and an
// optional header "round,i,j" as the first row. With n > 0 ids must be in
// [0, n); with n == 0 the trace has max id + 1 nodes. A malformed row is a
// *ParseError naming the line.
func ParseTrace(r io.Reader, n int) (*Trace, error) {
	if n < 0 || n > MaxNodes {
		return nil, fmt.Errorf("topology: ParseTrace: n = %d, want 0 (infer) or 1 <= n <= %d", n, MaxNodes)
	}
	var cs []Contact
	maxID := -1
	first := true
	err := scanRecords(r, func(line int, fs []string) error {
		isFirst := first
		first = false
		if len(fs) != 3 {
			return &ParseError{Line: line, Msg: fmt.Sprintf("%d fields, want 3 (round,i,j)", len(fs))}
		}
		if isFirst && strings.EqualFold(fs[0], "round") && strings.EqualFold(fs[1], "i") && strings.EqualFold(fs[2], "j") {
			return nil
		}
		round, err := parseRound(fs[0])
		if err != nil {
			return &ParseError{Line: line, Msg: err.Error()}
		}
		i, err := parseID(fs[1], n)
		if err != nil {
			return &ParseError{Line: line, Msg: err.Error()}
		}
		j, err := parseID(fs[2], n)
		if err != nil {
			return &ParseError{Line: line, Msg: err.Error()}
		}
		if i == j {
			return &ParseError{Line: line, Msg: fmt.Sprintf("contact of node %d with itself", i)}
		}
		maxID = max(maxID, i, j)
		cs = append(cs, Contact{round, i, j})
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(cs) == 0 {
		return nil, &ParseError{Msg: "no contacts"}
	}
	if n == 0 {
		n = maxID + 1
	}
	return NewTrace(n, cs)
}

// LoadTrace is ParseTrace on the file at path; errors name the path.
func LoadTrace(path string, n int) (*Trace, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("topology: contact trace: %w", err)
	}
	defer f.Close()
	t, err := ParseTrace(f, n)
	return t, named(err, path)
}

func parseRound(f string) (int, error) {
	v, err := parseID(f, MaxTraceRound)
	if err != nil {
		return 0, fmt.Errorf("round %q is not an integer in [0, %d)", f, MaxTraceRound)
	}
	return v, nil
}
