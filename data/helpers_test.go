package data

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func gzipBytes(t testing.TB, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func writeFile(t testing.TB, path string, b []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// wantFormatError checks err is a *FormatError for path whose message
// contains every fragment.
func wantFormatError(t *testing.T, err error, path string, fragments ...string) *FormatError {
	t.Helper()
	var fe *FormatError
	if !errors.As(err, &fe) {
		t.Fatalf("error %v (%T), want a *FormatError", err, err)
	}
	if fe.Path != path {
		t.Errorf("error names %q, want %q", fe.Path, path)
	}
	msg := err.Error()
	if !strings.Contains(msg, path) {
		t.Errorf("message %q does not name the file %q", msg, path)
	}
	for _, f := range fragments {
		if !strings.Contains(msg, f) {
			t.Errorf("message %q lacks %q", msg, f)
		}
	}
	return fe
}

// wantNotFound checks err is a *NotFoundError naming path among the paths
// tried and carrying a hint containing hint.
func wantNotFound(t *testing.T, err error, path, hint string) {
	t.Helper()
	var nf *NotFoundError
	if !errors.As(err, &nf) {
		t.Fatalf("error %v (%T), want a *NotFoundError", err, err)
	}
	if !errors.Is(err, fs.ErrNotExist) {
		t.Error("errors.Is(err, fs.ErrNotExist) is false")
	}
	msg := err.Error()
	if !strings.Contains(msg, path) || !strings.Contains(msg, hint) {
		t.Errorf("message %q should name %q and say %q", msg, path, hint)
	}
}

// checkPartition asserts the exactly-once invariant.
func checkPartition(t *testing.T, p *Partition, pool []int32, n int) {
	t.Helper()
	if err := p.Check(pool, n); err != nil {
		t.Fatal(err)
	}
}
