package rundir

import (
	"bufio"
	"encoding/json"
	"io"
	"os"
)

// lines writes JSON lines; each flush hands whole lines to the OS in one
// write, so an interrupted run leaves complete lines only.
type lines struct {
	f   *os.File
	buf *bufio.Writer
	enc *json.Encoder
}

// newLines creates (or truncates) path.
func newLines(path string) (*lines, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	return newLinesOf(f), nil
}

// appendLines opens a record file for appending after its first keep
// bytes (what a torn last line of an interrupted run is cut at).
func appendLines(path string, keep int64) (*lines, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	if err := cutAt(f, keep); err != nil {
		f.Close()
		return nil, err
	}
	return newLinesOf(f), nil
}

// cutAt truncates f to its first off bytes and puts the write position
// there.
func cutAt(f *os.File, off int64) error {
	if err := f.Truncate(off); err != nil {
		return err
	}
	_, err := f.Seek(off, io.SeekStart)
	return err
}

func newLinesOf(f *os.File) *lines {
	l := &lines{f: f, buf: bufio.NewWriterSize(f, 1<<20)}
	l.enc = json.NewEncoder(l.buf)
	return l
}

func (l *lines) write(v any) error { return l.enc.Encode(v) }
func (l *lines) flush() error      { return l.buf.Flush() }
func (l *lines) close() {
	_ = l.buf.Flush()
	_ = l.f.Close()
}
