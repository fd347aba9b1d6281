//go:build unix

package data

import (
	"os"
	"syscall"
)

// mapFile maps size bytes of f read-only and shared: the pages are the
// page cache's, one copy for every process that maps the file.
func mapFile(f *os.File, size int64) ([]byte, func() error, error) {
	if size == 0 {
		return nil, func() error { return nil }, nil
	}
	mem, err := syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil, nil, err
	}
	// A node reads its own rows, scattered over the file: no read-ahead
	// and no fault-around, which would map its neighbours' rows too.
	_ = syscall.Madvise(mem, syscall.MADV_RANDOM)
	return mem, func() error { return syscall.Munmap(mem) }, nil
}
