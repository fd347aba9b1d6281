// Package capture holds what the benchmark programs' tests share: running
// a program's printing code and reading what it wrote on standard output.
package capture

import (
	"io"
	"os"
	"testing"
)

// Stdout runs f with standard output going to a pipe and returns what f
// printed. Not for parallel tests: os.Stdout is the process's.
func Stdout(t testing.TB, f func()) string {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	saved := os.Stdout
	os.Stdout = w
	done := make(chan string)
	go func() {
		b, _ := io.ReadAll(r)
		r.Close()
		done <- string(b)
	}()
	defer func() {
		os.Stdout = saved
		w.Close()
	}()
	f()
	w.Close()
	return <-done
}
