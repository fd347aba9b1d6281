package data

import (
	"bufio"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// Shared plumbing for the binary decoders: transparent gzip, and reading a
// declared number of bytes without trusting the declaration for allocation.

// maxDeclaredBytes bounds what a file header may declare (16 GiB); anything
// larger is rejected as corrupt before reading.
const maxDeclaredBytes = 1 << 34

// maxDeflateRatio bounds how much deflate can expand its input (a
// 258-byte match costs at least about 2 bits, so about 1032:1).
const maxDeflateRatio = 1032

// inputBound returns an upper bound on the bytes r can deliver after
// optional gzip decompression, or -1 when r's size is unknown. Buffers are
// preallocated up to this bound, never beyond what a header declares.
func inputBound(r io.Reader) int64 {
	var n int64 = -1
	switch v := r.(type) {
	case interface{ Len() int }: // bytes.Reader, strings.Reader, bytes.Buffer
		n = int64(v.Len())
	case interface{ Stat() (fs.FileInfo, error) }: // *os.File, an embedded file
		if st, err := v.Stat(); err == nil && st.Mode().IsRegular() {
			n = st.Size()
		}
	}
	if n < 0 {
		return -1
	}
	return n * maxDeflateRatio
}

// initialCap is how much of a declared size n to allocate before any data
// arrives: all of it when the input is known to be able to hold it,
// otherwise one chunk, growing as data arrives.
func initialCap(n, bound int64) int64 {
	const chunk = 1 << 20
	if bound >= 0 {
		return min(n, max(bound, chunk))
	}
	return min(n, chunk)
}

// maybeGunzip returns a reader of r's content, decompressed when it starts
// with the gzip magic bytes 1f 8b, and whether it was.
func maybeGunzip(r io.Reader, path string) (io.Reader, bool, error) {
	br := bufio.NewReaderSize(r, 1<<16)
	head, _ := br.Peek(2)
	if len(head) == 2 && head[0] == 0x1f && head[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, true, &FormatError{Path: path, Offset: 0, Msg: "bad gzip header", Err: err}
		}
		return zr, true, nil
	}
	return br, false, nil
}

// readDeclared reads exactly n bytes (n as declared by a header that ends at
// offset off), then checks the stream ends there. The buffer grows as data
// arrives, so a header claiming gigabytes over a short input costs nothing.
func readDeclared(r io.Reader, n, bound int64, path string, off int64, gz bool) ([]byte, error) {
	buf := make([]byte, 0, initialCap(n, bound))
	for int64(len(buf)) < n {
		if len(buf) == cap(buf) {
			grown := make([]byte, len(buf), min(n, 2*int64(cap(buf))))
			copy(grown, buf)
			buf = grown
		}
		k, err := io.ReadFull(r, buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+k]
		if err != nil {
			msg := "truncated"
			if !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
				msg = "read error"
			} else {
				err = nil
			}
			return nil, &FormatError{Path: path, Offset: off + int64(len(buf)), Gzip: gz,
				Msg: fmt.Sprintf("%s: %d of %d declared data bytes", msg, len(buf), n), Err: err}
		}
	}
	if err := expectEOF(r, path, off+n, gz); err != nil {
		return nil, err
	}
	return buf, nil
}

// expectEOF checks that r has nothing left. For gzip streams reading to the
// end also verifies the CRC-32 and length trailer.
func expectEOF(r io.Reader, path string, off int64, gz bool) error {
	var one [1]byte
	k, err := io.ReadFull(r, one[:])
	switch {
	case k == 1:
		return &FormatError{Path: path, Offset: off, Gzip: gz, Msg: "trailing data after the declared end"}
	case errors.Is(err, io.EOF):
		return nil
	default:
		return &FormatError{Path: path, Offset: off, Gzip: gz, Msg: "bad end of stream", Err: err}
	}
}

// firstExisting returns the first path that exists, or a NotFoundError
// listing all of them.
func firstExisting(dataset, hint string, paths ...string) (string, error) {
	for _, p := range paths {
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	return "", &NotFoundError{Dataset: dataset, Tried: paths, Hint: hint}
}
