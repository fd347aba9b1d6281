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

// dropResident takes the pages wholly inside s, read-only data of the
// program (an embedded file), out of the process's resident set
// (MADV_DONTNEED): the kernel reads them from the executable again if
// they are ever read again.
func dropResident(s string) {
	if len(s) == 0 {
		return
	}
	page := uintptr(os.Getpagesize())
	p := unsafe.Pointer(unsafe.StringData(s))
	start := uintptr(p)
	first := (start + page - 1) &^ (page - 1)
	last := (start + uintptr(len(s))) &^ (page - 1)
	if last <= first {
		return
	}
	_ = unix.Madvise(unsafe.Slice((*byte)(unsafe.Add(p, first-start)), last-first), unix.MADV_DONTNEED)
}
