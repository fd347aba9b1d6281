package data

import (
	"encoding/binary"
	"fmt"
	"io"
)

// IDX is a decoded IDX file, the format of MNIST, Fashion-MNIST and EMNIST
// (LeCun et al., http://yann.lecun.com/exdb/mnist/): a 4-byte magic
// 00 00 <type> <ndims>, ndims big-endian uint32 sizes, then the elements.
type IDX struct {
	Dims []int  // e.g. [60000 28 28] for MNIST training images
	Data []byte // product(Dims) unsigned bytes
}

// idxUbyte is the only element type the MNIST family uses.
const idxUbyte = 0x08

// ReadIDX decodes an IDX file of unsigned bytes from r, gzip-compressed or
// not (detected from the content). name is used in errors; every error is a
// *FormatError naming the offset and what was wrong.
func ReadIDX(r io.Reader, name string) (*IDX, error) {
	bound := inputBound(r)
	r, gz, err := maybeGunzip(r, name)
	if err != nil {
		return nil, err
	}
	dims, total, err := readIDXHeader(r, name, gz)
	if err != nil {
		return nil, err
	}
	buf, err := readDeclared(r, total, bound, name, idxHeaderLen(dims), gz)
	if err != nil {
		return nil, err
	}
	return &IDX{Dims: dims, Data: buf}, nil
}

func idxHeaderLen(dims []int) int64 { return 4 + 4*int64(len(dims)) }

// readIDXHeader reads the magic and dimensions and returns the dimensions
// and the number of data bytes they declare.
func readIDXHeader(r io.Reader, name string, gz bool) ([]int, int64, error) {
	var head [4]byte
	if k, err := io.ReadFull(r, head[:]); err != nil {
		return nil, 0, &FormatError{Path: name, Offset: int64(k), Gzip: gz, Msg: fmt.Sprintf("truncated header: %d of 4 magic bytes", k), Err: ignoreEOF(err)}
	}
	if head[0] != 0 || head[1] != 0 {
		return nil, 0, &FormatError{Path: name, Offset: 0, Gzip: gz, Msg: fmt.Sprintf("bad magic %02x %02x %02x %02x: not an IDX file (the first two bytes must be zero)", head[0], head[1], head[2], head[3])}
	}
	if head[2] != idxUbyte {
		return nil, 0, &FormatError{Path: name, Offset: 2, Gzip: gz, Msg: fmt.Sprintf("element type 0x%02x unsupported; MNIST-family files hold unsigned bytes (0x08)", head[2])}
	}
	nd := int(head[3])
	if nd == 0 || nd > 8 {
		return nil, 0, &FormatError{Path: name, Offset: 3, Gzip: gz, Msg: fmt.Sprintf("%d dimensions; expected 1 to 8", nd)}
	}
	dimBytes := make([]byte, 4*nd)
	if k, err := io.ReadFull(r, dimBytes); err != nil {
		return nil, 0, &FormatError{Path: name, Offset: 4 + int64(k), Gzip: gz, Msg: fmt.Sprintf("truncated header: %d of %d dimension bytes", k, 4*nd), Err: ignoreEOF(err)}
	}
	dims := make([]int, nd)
	total := int64(1)
	for i := range dims {
		d := binary.BigEndian.Uint32(dimBytes[4*i:])
		if d > 1<<31-1 {
			return nil, 0, &FormatError{Path: name, Offset: 4 + 4*int64(i), Gzip: gz, Msg: fmt.Sprintf("dimension %d has size %d", i, d)}
		}
		dims[i] = int(d)
		if total != 0 && int64(d) > maxDeclaredBytes/total {
			return nil, 0, &FormatError{Path: name, Offset: 4 + 4*int64(i), Gzip: gz, Msg: fmt.Sprintf("dimensions %v declare more than %d bytes", dimsSoFar(dimBytes, i), int64(maxDeclaredBytes))}
		}
		total *= int64(d)
	}
	return dims, total, nil
}

func dimsSoFar(b []byte, last int) []uint32 {
	out := make([]uint32, last+1)
	for i := range out {
		out[i] = binary.BigEndian.Uint32(b[4*i:])
	}
	return out
}

// ignoreEOF drops io.EOF/ErrUnexpectedEOF, which "truncated" already says.
func ignoreEOF(err error) error {
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		return nil
	}
	return err
}
