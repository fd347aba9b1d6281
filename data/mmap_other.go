//go:build !unix

package data

import (
	"io"
	"os"
)

// mapFile reads the file into memory where there is no mmap: each process
// then holds its own copy, and there are no pages to drop.
func mapFile(f *os.File, size int64) ([]byte, func() error, func(off, n int64), error) {
	mem := make([]byte, size)
	if _, err := f.ReadAt(mem, 0); err != nil && err != io.EOF {
		return nil, nil, nil, err
	}
	return mem, func() error { return nil }, nil, nil
}

// dropResident does nothing here (no madvise): the pages stay until the
// system needs them.
func dropResident(string) {}
