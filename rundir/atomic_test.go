package rundir

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
)

func TestWriteAtomicFunc(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out.txt")
	content := func() string { b, _ := os.ReadFile(path); return string(b) }
	write := func(s string) func(io.Writer) error {
		return func(w io.Writer) error { _, err := io.WriteString(w, s); return err }
	}

	if err := WriteAtomicFunc(path, write("first")); err != nil {
		t.Fatal(err)
	}
	if err := WriteAtomicFunc(path, write("second")); err != nil {
		t.Fatal(err)
	}
	if got := content(); got != "second" {
		t.Errorf("content = %q, want %q", got, "second")
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o644 {
		t.Errorf("mode = %v, %v; want 0644", fi.Mode(), err)
	}

	// A failing writer: the old file stays whole, nothing else appears.
	boom := errors.New("boom")
	err := WriteAtomicFunc(path, func(w io.Writer) error {
		io.WriteString(w, "half")
		return boom
	})
	if !errors.Is(err, boom) {
		t.Errorf("err = %v, want %v", err, boom)
	}
	if got := content(); got != "second" {
		t.Errorf("after failed write: content = %q, want %q", got, "second")
	}

	// A panicking writer (the nearest thing to an interrupted run a test
	// can cause in-process): same.
	func() {
		defer func() { recover() }()
		WriteAtomicFunc(path, func(w io.Writer) error {
			io.WriteString(w, "half")
			panic("interrupted")
		})
	}()
	if got := content(); got != "second" {
		t.Errorf("after panic: content = %q, want %q", got, "second")
	}

	// A failure before the first write leaves no file at all.
	if err := WriteAtomicFunc(filepath.Join(dir, "new.txt"), func(io.Writer) error { return boom }); !errors.Is(err, boom) {
		t.Errorf("err = %v, want %v", err, boom)
	}
	if es, _ := os.ReadDir(dir); len(es) != 1 || es[0].Name() != "out.txt" {
		var got []string
		for _, e := range es {
			got = append(got, e.Name())
		}
		t.Errorf("directory holds %q, want only out.txt", got)
	}

	// A directory that does not exist is an error, not a panic.
	if err := WriteAtomicFunc(filepath.Join(dir, "no", "such.txt"), write("x")); err == nil {
		t.Error("WriteAtomicFunc into a missing directory succeeded")
	}
}

// A checkpoint holds a node's secret keys: only its owner may read it.
func TestWritePrivateIsOwnerOnly(t *testing.T) {
	p := filepath.Join(t.TempDir(), "checkpoint.bin")
	if err := WritePrivate(p, []byte("secret")); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600", st.Mode().Perm())
	}
	if b, _ := os.ReadFile(p); string(b) != "secret" {
		t.Errorf("content %q", b)
	}
}
