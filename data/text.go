package data

import (
	"bufio"
	"io"
	"math"
	"strconv"
)

// Helpers for the whitespace-separated text formats (UCI HAR, PAMAP2).

// maxLine bounds one text line (a HAR feature line is about 9 KB).
const maxLine = 1 << 20

func newLineScanner(r io.Reader) *bufio.Scanner {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxLine)
	return sc
}

// scanErr turns a bufio.Scanner failure into a FormatError at line.
func scanErr(path string, line int, err error) error {
	if err == bufio.ErrTooLong {
		return atLine(path, line, "line longer than %d bytes", maxLine)
	}
	return &FormatError{Path: path, Offset: -1, Line: line, Msg: "read error", Err: err}
}

// nextField returns the first whitespace-separated field of s and the rest.
func nextField(s []byte) (field, rest []byte) {
	i := 0
	for i < len(s) && isSpace(s[i]) {
		i++
	}
	j := i
	for j < len(s) && !isSpace(s[j]) {
		j++
	}
	return s[i:j], s[j:]
}

func isSpace(b byte) bool {
	return b == ' ' || b == '\t' || b == '\r' || b == '\n' || b == '\v' || b == '\f'
}

// parseFinite parses a float32 and rejects NaN and infinities.
func parseFinite(f []byte) (float32, bool) {
	v, err := strconv.ParseFloat(string(f), 32)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, false
	}
	return float32(v), true
}

// readFloatRows reads a whitespace-separated matrix of finite numbers, one
// row per non-blank line, all rows of equal length.
func readFloatRows(r io.Reader, path string) (xs []float32, cols, rows int, err error) {
	sc := newLineScanner(r)
	line := 0
	for sc.Scan() {
		line++
		rest := sc.Bytes()
		n := 0
		for {
			var f []byte
			f, rest = nextField(rest)
			if len(f) == 0 {
				break
			}
			v, ok := parseFinite(f)
			if !ok {
				return nil, 0, 0, atLine(path, line, "field %d: %q is not a finite number", n+1, truncate(f))
			}
			xs = append(xs, v)
			n++
		}
		if n == 0 {
			continue
		}
		if rows == 0 {
			cols = n
		} else if n != cols {
			return nil, 0, 0, atLine(path, line, "%d fields; earlier lines have %d", n, cols)
		}
		rows++
	}
	if err := sc.Err(); err != nil {
		return nil, 0, 0, scanErr(path, line+1, err)
	}
	return xs, cols, rows, nil
}

// readIntColumn reads one integer per non-blank line.
func readIntColumn(r io.Reader, path string) ([]int, []int, error) {
	sc := newLineScanner(r)
	var vals, lines []int
	line := 0
	for sc.Scan() {
		line++
		f, rest := nextField(sc.Bytes())
		if len(f) == 0 {
			continue
		}
		if g, _ := nextField(rest); len(g) != 0 {
			return nil, nil, atLine(path, line, "more than one field")
		}
		v, err := strconv.Atoi(string(f))
		if err != nil {
			return nil, nil, atLine(path, line, "%q is not an integer", truncate(f))
		}
		vals = append(vals, v)
		lines = append(lines, line)
	}
	if err := sc.Err(); err != nil {
		return nil, nil, scanErr(path, line+1, err)
	}
	return vals, lines, nil
}

// truncate shortens a field quoted in an error message.
func truncate(f []byte) string {
	if len(f) > 40 {
		return string(f[:40]) + "..."
	}
	return string(f)
}
