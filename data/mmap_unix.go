//go:build unix

package data

import (
	"os"
	"unsafe"

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
	drop = func(off, n int64) { dropWholePages(mem[off:min(off+n, int64(len(mem)))]) }
	return mem, func() error { return unix.Munmap(mem) }, drop, nil
}

// dropResident takes the pages wholly inside s, read-only data of the
// program (an embedded file), out of the process's resident set: the
// kernel reads them from the executable again if they are ever read again.
func dropResident(s string) { dropWholePages(unsafe.Slice(unsafe.StringData(s), len(s))) }

// dropWholePages removes the pages b covers entirely from the process's
// resident set (MADV_DONTNEED; madvise wants whole pages). b must be
// mapped read-only or from a file: its pages are read again, not zeroed,
// if b is read later.
func dropWholePages(b []byte) {
	if len(b) == 0 {
		return
	}
	page := uintptr(os.Getpagesize())
	p := unsafe.Pointer(unsafe.SliceData(b))
	start := uintptr(p)
	first := (start + page - 1) &^ (page - 1)
	last := (start + uintptr(len(b))) &^ (page - 1)
	if last > first {
		_ = unix.Madvise(unsafe.Slice((*byte)(unsafe.Add(p, first-start)), last-first), unix.MADV_DONTNEED)
	}
}
