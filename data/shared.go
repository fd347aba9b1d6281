package data

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"os"
	"path/filepath"
	"sync/atomic"
	"unsafe"
)

// A shared dataset file holds a TrainTest already decoded, so that the node
// processes of a launch on one machine map one copy of the samples
// read-only (OpenShared) instead of each decoding its own: a node's pages
// of X are the rows it touches, shared with every other process in the
// page cache, and its own memory is its index lists.
//
// Layout (little-endian):
//
//	0   magic "trellis dataset\n" (16 bytes)
//	16  uint32 format version (1)
//	20  uint32 header length H (≤ 16 MiB)
//	24  uint32 CRC-32C of the header
//	28  uint32 zero
//	32  the header: JSON (sharedHeader), H bytes
//	    then the sections, each at an offset the header gives (a multiple
//	    of 64), each with its byte length and CRC-32C: per set, X as
//	    float32, Y and Groups as int32.
//
// OpenShared checks the magic, version, header checksum, that the file is
// as long as the header says (a truncated file is named as such), that
// every section lies inside it with the length its set's shape and count
// give, every section's checksum (read through the file, not the mapping,
// so a node's resident memory stays its own rows), and labels and groups
// in range.
const (
	sharedMagic     = "trellis dataset\n"
	sharedVersion   = 1
	sharedPrefix    = 32
	sharedAlign     = 64
	sharedMaxHeader = 16 << 20
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// littleEndian says whether the machine's byte order is the file's.
var littleEndian = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

// sharedHeader is the file's JSON header.
type sharedHeader struct {
	Size  int64      `json:"size"`
	Train *sharedSet `json:"train"`
	Test  *sharedSet `json:"test,omitempty"`
}

// sharedSet is one Dataset of the file: its metadata and its sections.
type sharedSet struct {
	Name       string        `json:"name"`
	Shape      []int         `json:"shape"`
	Classes    []string      `json:"classes"`
	GroupNames []string      `json:"group_names,omitempty"`
	Norm       Normalization `json:"norm"`
	Len        int           `json:"len"`
	X          section       `json:"x"`
	Y          section       `json:"y"`
	Groups     *section      `json:"groups,omitempty"`
	// Order is the sample each stored row is (absent: row i is sample i).
	Order *section `json:"order,omitempty"`
}

type section struct {
	Offset int64  `json:"offset"`
	Bytes  int64  `json:"bytes"`
	CRC    uint32 `json:"crc32c"`
}

// WriteShared writes tt to path as a shared dataset file (through a
// temporary file renamed into place, so a reader never sees half of it).
// order, when not nil, is the training samples in the order their rows
// are stored, a permutation of 0 … Len−1: each node's samples together
// (mapping a page maps its neighbours too, so scattered rows would map
// most of the file into every node); OpenShared gives the samples their
// indices back (Dataset.Rows).
func WriteShared(path string, tt TrainTest, order []int32) error {
	if tt.Train == nil {
		return errors.New("data: WriteShared: no training set")
	}
	if order != nil {
		if err := checkPermutation(order, tt.Train.Len()); err != nil {
			return fmt.Errorf("data: WriteShared: the row order: %w", err)
		}
	}
	// Each section is written in chunks (emit), never as one more copy of
	// the samples: once for its checksum, once into the file.
	var sections []func(emit func([]byte))
	h := sharedHeader{}
	add := func(d *Dataset, order []int32) *sharedSet {
		s := &sharedSet{Name: d.Name, Shape: d.Shape, Classes: d.Classes, GroupNames: d.GroupNames, Norm: d.Norm, Len: d.Len()}
		if order == nil && (d.Rows != nil || d.Levels != nil) {
			order = d.All() // a mapped or coded dataset: its samples in index order
		}
		l := d.RowLen()
		x := chunks(len(d.X), func(k int) uint32 { return math.Float32bits(d.X[k]) })
		if order != nil {
			x = chunks(d.Len()*l, func(k int) uint32 { return math.Float32bits(d.value(int(order[k/l]), k%l)) })
		}
		sections = append(sections, x, chunks(d.Len(), func(k int) uint32 { return uint32(int32(d.Y[k])) }))
		if d.Groups != nil {
			sections = append(sections, chunks(d.Len(), func(k int) uint32 { return uint32(d.Groups[k]) }))
			s.Groups = &section{}
		}
		if order != nil {
			sections = append(sections, chunks(d.Len(), func(k int) uint32 { return uint32(order[k]) }))
			s.Order = &section{}
		}
		return s
	}
	h.Train = add(tt.Train, order)
	if tt.Test != nil {
		h.Test = add(tt.Test, nil)
	}
	secs := h.sections()
	sums := make([]section, len(secs))
	for k, sec := range sections {
		sec(func(b []byte) {
			sums[k].Bytes += int64(len(b))
			sums[k].CRC = crc32.Update(sums[k].CRC, castagnoli, b)
		})
	}
	// The header's length depends on the offsets, which depend on it:
	// lay out with a header size that is a fixed point.
	hlen := 0
	var hb []byte
	for range 8 {
		off := align(int64(sharedPrefix + hlen))
		for k, s := range secs {
			*s = section{Offset: off, Bytes: sums[k].Bytes, CRC: sums[k].CRC}
			off = align(off + s.Bytes)
		}
		h.Size = off
		var err error
		if hb, err = json.Marshal(h); err != nil {
			return err
		}
		if len(hb) == hlen {
			break
		}
		hlen = len(hb)
	}
	if len(hb) != hlen {
		return errors.New("data: WriteShared: the header's layout does not settle")
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".dataset-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	prefix := make([]byte, sharedPrefix)
	copy(prefix, sharedMagic)
	binary.LittleEndian.PutUint32(prefix[16:], sharedVersion)
	binary.LittleEndian.PutUint32(prefix[20:], uint32(len(hb)))
	binary.LittleEndian.PutUint32(prefix[24:], crc32.Checksum(hb, castagnoli))
	w := &offsetWriter{f: tmp}
	w.write(prefix)
	w.write(hb)
	for k, s := range secs {
		w.pad(s.Offset)
		sections[k](w.write)
	}
	w.pad(h.Size)
	if err := errors.Join(w.err, tmp.Close()); err != nil {
		return fmt.Errorf("data: writing %s: %w", path, err)
	}
	return os.Rename(tmp.Name(), path)
}

type offsetWriter struct {
	f   *os.File
	off int64
	err error
}

func (w *offsetWriter) write(b []byte) {
	if w.err == nil {
		_, w.err = w.f.Write(b)
		w.off += int64(len(b))
	}
}

func (w *offsetWriter) pad(to int64) {
	if to > w.off {
		w.write(make([]byte, to-w.off))
	}
}

func align(off int64) int64 { return (off + sharedAlign - 1) / sharedAlign * sharedAlign }

// sections lists the header's sections in file order.
func (h *sharedHeader) sections() []*section {
	var out []*section
	for _, s := range []*sharedSet{h.Train, h.Test} {
		if s == nil {
			continue
		}
		out = append(out, &s.X, &s.Y)
		if s.Groups != nil {
			out = append(out, s.Groups)
		}
		if s.Order != nil {
			out = append(out, s.Order)
		}
	}
	return out
}

// Shared is an open shared dataset file: its TrainTest, whose X slices are
// the file mapped read-only, valid until Close.
type Shared struct {
	TrainTest
	unmap func() error
}

// Close unmaps the file; the datasets must not be used after.
func (s *Shared) Close() error {
	if s.unmap == nil {
		return nil
	}
	err := s.unmap()
	s.unmap = nil
	return err
}

// OpenShared maps the shared dataset file at path read-only and checks it
// (see the layout above); every error names the file and what is wrong.
func OpenShared(path string) (*Shared, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fail := func(format string, args ...any) error {
		return fmt.Errorf("data: %s: %s (the file is written by `trellis launch`; launch again, or give --data-file a file it wrote)", path, fmt.Sprintf(format, args...))
	}
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	prefix := make([]byte, sharedPrefix)
	if _, err := io.ReadFull(f, prefix); err != nil {
		return nil, fail("%d bytes, too short for a shared dataset file", st.Size())
	}
	if string(prefix[:16]) != sharedMagic {
		return nil, fail("not a shared dataset file (its first bytes are %q)", prefix[:16])
	}
	if z := binary.LittleEndian.Uint32(prefix[28:]); z != 0 {
		return nil, fail("reserved bytes 28–31 hold %#x, not zero: damaged", z)
	}
	if v := binary.LittleEndian.Uint32(prefix[16:]); v != sharedVersion {
		return nil, fail("format version %d; this trellis reads version %d", v, sharedVersion)
	}
	hlen := int64(binary.LittleEndian.Uint32(prefix[20:]))
	if hlen > sharedMaxHeader || sharedPrefix+hlen > st.Size() {
		return nil, fail("a header of %d bytes in a file of %d: truncated or damaged", hlen, st.Size())
	}
	hb := make([]byte, hlen)
	if _, err := io.ReadFull(f, hb); err != nil {
		return nil, fail("reading the header: %v", err)
	}
	if crc32.Checksum(hb, castagnoli) != binary.LittleEndian.Uint32(prefix[24:]) {
		return nil, fail("the header's checksum does not match: damaged")
	}
	var h sharedHeader
	dec := json.NewDecoder(bytes.NewReader(hb))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&h); err != nil || h.Train == nil {
		return nil, fail("a bad header: %v", err)
	}
	if h.Size != st.Size() {
		return nil, fail("%d bytes, its header says %d: truncated or damaged", st.Size(), h.Size)
	}
	end := align(sharedPrefix + hlen)
	for _, s := range []*sharedSet{h.Train, h.Test} {
		if s == nil {
			continue
		}
		if err := s.check(&end, h.Size); err != nil {
			return nil, fail("%v", err)
		}
	}
	buf := make([]byte, 1<<20)
	for _, s := range h.sections() {
		sum, err := crcOf(f, s.Offset, s.Bytes, buf)
		if err != nil {
			return nil, fail("reading a section: %v", err)
		}
		if sum != s.CRC {
			return nil, fail("the section at byte %d does not match its checksum: damaged", s.Offset)
		}
	}
	mem, unmap, drop, err := mapFile(f, h.Size)
	if err != nil {
		return nil, fmt.Errorf("data: %s: mapping the file: %w", path, err)
	}
	out := &Shared{unmap: unmap}
	if out.Train, err = h.Train.dataset(mem); err == nil && h.Test != nil {
		out.Test, err = h.Test.dataset(mem)
		if err == nil && drop != nil && littleEndian {
			// The test set is read whole, front to back, at every
			// evaluation: keeping it mapped would make it part of every
			// node's resident memory (31 MB for MNIST), though it is one
			// copy in the page cache. Its pages are dropped as they are
			// read, so a process holds about SharedStreamWindow bytes of it.
			out.Test.stream = &pageDropper{drop: drop, off: h.Test.X.Offset, n: h.Test.X.Bytes, every: SharedStreamWindow}
		}
	}
	if err != nil {
		_ = unmap()
		return nil, fail("%v", err)
	}
	return out, nil
}

// SharedStreamWindow is how many bytes of a streamed set (the test set of
// a shared file) a process reads before dropping its pages again: about
// what of it stays in the process's resident set.
const SharedStreamWindow = 1 << 20

// pageDropper drops a mapped X's pages from the process's resident set
// each time readers (Batcher.Next) have copied every bytes of it. It is
// safe for concurrent use: dropping a page another reader is copying only
// makes that reader map it again, with the same contents.
type pageDropper struct {
	drop   func(off, n int64)
	off, n int64
	every  int64
	read   atomic.Int64
}

// copied records that a reader copied n bytes of X.
func (p *pageDropper) copied(n int) {
	if p.read.Add(int64(n)) >= p.every {
		p.read.Store(0)
		p.drop(p.off, p.n)
	}
}

// check checks a set's metadata and that its sections follow each other
// from *end, inside the file, with the lengths its shape and count give.
func (s *sharedSet) check(end *int64, size int64) error {
	row := int64(1)
	for _, d := range s.Shape {
		if d <= 0 || d > 1<<24 {
			return fmt.Errorf("set %q: shape %v", s.Name, s.Shape)
		}
		row *= int64(d)
		if row > 1<<30 {
			return fmt.Errorf("set %q: shape %v", s.Name, s.Shape)
		}
	}
	if len(s.Shape) == 0 || len(s.Classes) == 0 || s.Len < 0 || s.Len > math.MaxInt32 {
		return fmt.Errorf("set %q: shape %v, %d classes, %d samples", s.Name, s.Shape, len(s.Classes), s.Len)
	}
	want := []int64{row * int64(s.Len) * 4, int64(s.Len) * 4}
	secs := []*section{&s.X, &s.Y}
	if s.Groups != nil {
		want, secs = append(want, int64(s.Len)*4), append(secs, s.Groups)
	}
	if s.Order != nil {
		want, secs = append(want, int64(s.Len)*4), append(secs, s.Order)
	}
	for k, sec := range secs {
		if sec.Offset != *end || sec.Bytes != want[k] || sec.Offset+sec.Bytes > size {
			return fmt.Errorf("set %q: a section of %d bytes at %d, want %d bytes at %d in a file of %d: truncated or damaged", s.Name, sec.Bytes, sec.Offset, want[k], *end, size)
		}
		*end = align(sec.Offset + sec.Bytes)
	}
	return nil
}

// dataset is the set over the mapped file: X in place, labels and groups
// copied out (and checked in range).
func (s *sharedSet) dataset(mem []byte) (*Dataset, error) {
	d := &Dataset{Name: s.Name, Shape: s.Shape, Classes: s.Classes, GroupNames: s.GroupNames, Norm: s.Norm}
	switch {
	case s.X.Bytes == 0:
	case littleEndian:
		// The file's float32s are the machine's: X is the mapping itself
		// (the offset is a multiple of 64, so the values are aligned).
		d.X = unsafe.Slice((*float32)(unsafe.Pointer(&mem[s.X.Offset])), s.X.Bytes/4)
	default:
		d.X = make([]float32, s.X.Bytes/4)
		for i := range d.X {
			d.X[i] = math.Float32frombits(binary.LittleEndian.Uint32(mem[s.X.Offset+4*int64(i):]))
		}
	}
	d.Y = make([]int, s.Len)
	for i := range d.Y {
		y := int32(binary.LittleEndian.Uint32(mem[s.Y.Offset+4*int64(i):]))
		if y < 0 || int(y) >= len(s.Classes) {
			return nil, fmt.Errorf("set %q: sample %d has label %d outside [0, %d)", s.Name, i, y, len(s.Classes))
		}
		d.Y[i] = int(y)
	}
	if s.Groups != nil {
		d.Groups = make([]int32, s.Len)
		for i := range d.Groups {
			g := int32(binary.LittleEndian.Uint32(mem[s.Groups.Offset+4*int64(i):]))
			if g < 0 || int(g) >= len(s.GroupNames) {
				return nil, fmt.Errorf("set %q: sample %d has group %d outside [0, %d)", s.Name, i, g, len(s.GroupNames))
			}
			d.Groups[i] = g
		}
	}
	if s.Order != nil {
		order := make([]int32, s.Len)
		for k := range order {
			order[k] = int32(binary.LittleEndian.Uint32(mem[s.Order.Offset+4*int64(k):]))
		}
		if err := checkPermutation(order, s.Len); err != nil {
			return nil, fmt.Errorf("set %q: the row order: %w", s.Name, err)
		}
		d.Rows = make([]int32, s.Len)
		for k, i := range order {
			d.Rows[i] = int32(k)
		}
	}
	return d, nil
}

// checkPermutation checks that order holds each of 0 … n−1 once.
func checkPermutation(order []int32, n int) error {
	if len(order) != n {
		return fmt.Errorf("%d rows for %d samples", len(order), n)
	}
	seen := make([]bool, n)
	for k, i := range order {
		if i < 0 || int(i) >= n || seen[i] {
			return fmt.Errorf("row %d is sample %d: not a permutation of the %d samples", k, i, n)
		}
		seen[i] = true
	}
	return nil
}

// crcOf is the CRC-32C of n bytes of f from off, read through the file.
func crcOf(f *os.File, off, n int64, buf []byte) (uint32, error) {
	var sum uint32
	for n > 0 {
		k := min(n, int64(len(buf)))
		if _, err := f.ReadAt(buf[:k], off); err != nil {
			return 0, err
		}
		sum = crc32.Update(sum, castagnoli, buf[:k])
		off, n = off+k, n-k
	}
	return sum, nil
}

// chunks is a section of n 4-byte little-endian values, value k being
// at(k), emitted in chunks of at most 1 MiB (the buffer is reused: emit
// must not keep it).
func chunks(n int, at func(k int) uint32) func(emit func([]byte)) {
	return func(emit func([]byte)) {
		buf := make([]byte, 0, 1<<20)
		for k := range n {
			buf = binary.LittleEndian.AppendUint32(buf, at(k))
			if len(buf) == cap(buf) {
				emit(buf)
				buf = buf[:0]
			}
		}
		if len(buf) > 0 {
			emit(buf)
		}
	}
}
