package data

import (
	"fmt"
	"io/fs"
	"strings"
)

// NotFoundError reports a dataset whose files are absent: it lists every
// path that was tried and says how to obtain the dataset (DESIGN.md, "Errors
// and bad input"). errors.Is(err, fs.ErrNotExist) holds for it.
type NotFoundError struct {
	Dataset string   // e.g. "Fashion-MNIST"
	Tried   []string // paths looked at, in order
	Hint    string   // how to get the files
}

func (e *NotFoundError) Error() string {
	return fmt.Sprintf("data: %s not found (looked for %s); %s",
		e.Dataset, strings.Join(e.Tried, ", "), e.Hint)
}

// Is makes errors.Is(err, fs.ErrNotExist) true for a missing dataset.
func (e *NotFoundError) Is(target error) bool { return target == fs.ErrNotExist }

// FormatError reports a corrupt or malformed data file: the file, where in it
// (a byte offset or a 1-based line), and what was wrong.
type FormatError struct {
	Path   string
	Offset int64 // byte offset of the problem, or -1 when Line is used instead
	Line   int   // 1-based line for text formats, or 0 when Offset is used
	Gzip   bool  // Offset counts bytes of the decompressed stream
	Msg    string
	Err    error // underlying error, if any
}

func (e *FormatError) Error() string {
	var where string
	switch {
	case e.Line > 0:
		where = fmt.Sprintf("line %d: ", e.Line)
	case e.Offset >= 0 && e.Gzip:
		where = fmt.Sprintf("offset %d of the decompressed data: ", e.Offset)
	case e.Offset >= 0:
		where = fmt.Sprintf("offset %d: ", e.Offset)
	}
	msg := e.Msg
	if e.Err != nil {
		if msg == "" {
			msg = e.Err.Error()
		} else {
			msg += ": " + e.Err.Error()
		}
	}
	return fmt.Sprintf("data: %s: %s%s", e.Path, where, msg)
}

func (e *FormatError) Unwrap() error { return e.Err }

// atOffset and atLine build FormatErrors tersely.
func atOffset(path string, off int64, format string, args ...any) *FormatError {
	return &FormatError{Path: path, Offset: off, Msg: fmt.Sprintf(format, args...)}
}

func atLine(path string, line int, format string, args ...any) *FormatError {
	return &FormatError{Path: path, Offset: -1, Line: line, Msg: fmt.Sprintf(format, args...)}
}

func whole(path string, format string, args ...any) *FormatError {
	return &FormatError{Path: path, Offset: -1, Msg: fmt.Sprintf(format, args...)}
}
