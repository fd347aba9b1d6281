//go:build unix

package data

import (
	"os"

	"golang.org/x/sys/unix"
)

// mapFile maps size bytes of f read-only and shared: the pages are the
// page cache's, one copy for every process that maps the file. drop, given
// a part of the mapping, removes its pages from the process's resident set
// (the page cache keeps them; a later read maps them again).
func mapFile(f *os.File, size int64) (mem []byte, unmap func() error, drop func(off, n int64), err error) {
	if size == 0 {
		return nil, func() error { return nil }, nil, nil
	}
	mem, err = unix.Mmap(int(f.Fd()), 0, int(size), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return nil, nil, nil, err
	}
	// A node reads its own rows, scattered over the file: no read-ahead
	// and no fault-around, which would map its neighbours' rows too.
	_ = unix.Madvise(mem, unix.MADV_RANDOM)
	page := int64(os.Getpagesize())
	drop = func(off, n int64) {
		// madvise wants whole pages: the ones [off, off+n) covers entirely.
		start := (off + page - 1) / page * page
		end := (off + n) / page * page
		if end > start {
			_ = unix.Madvise(mem[start:end], unix.MADV_DONTNEED)
		}
	}
	return mem, func() error { return unix.Munmap(mem) }, drop, nil
}
