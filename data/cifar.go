package data

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// CIFAR-10 binary version (Krizhevsky 2009, https://www.cs.toronto.edu/~kriz/cifar.html):
// each file is a sequence of 3073-byte records, one label byte (0..9) then
// 32×32 red, 32×32 green and 32×32 blue bytes, rows top to bottom. Samples
// keep that [3 32 32] (channel, height, width) layout.

const (
	cifarSide   = 32
	cifarPixels = 3 * cifarSide * cifarSide
	cifarRecord = 1 + cifarPixels
)

// The community's CIFAR-10 per-channel normalization: x/255, then
// (x-mean[c])/std[c] with the training set's per-channel mean and standard
// deviation (0.4914, 0.4822, 0.4465) and (0.2470, 0.2435, 0.2616).
var (
	cifarMean = [3]float32{0.4914, 0.4822, 0.4465}
	cifarStd  = [3]float32{0.2470, 0.2435, 0.2616}
)

func cifarClasses() []string {
	return []string{"airplane", "automobile", "bird", "cat", "deer", "dog", "frog", "horse", "ship", "truck"}
}

func cifarNorm() Normalization {
	return Normalization{
		Desc:  "x/255, then per channel (x-mean)/std, mean (0.4914, 0.4822, 0.4465), std (0.2470, 0.2435, 0.2616)",
		Scale: 1.0 / 255, Mean: cifarMean[:], Std: cifarStd[:],
	}
}

const cifarHint = "download https://www.cs.toronto.edu/~kriz/cifar-10-binary.tar.gz and extract it " +
	"(tar xzf); pass the cifar-10-batches-bin directory or its parent"

// ReadCIFAR10 decodes one CIFAR-10 binary batch file (gzip-compressed or
// not) into a dataset of shape [3 32 32], normalized per channel.
func ReadCIFAR10(r io.Reader, name string) (*Dataset, error) {
	d := newCIFARDataset(name, 0)
	if err := appendCIFAR(d, r, name); err != nil {
		return nil, err
	}
	return d, nil
}

func newCIFARDataset(name string, capHint int) *Dataset {
	return &Dataset{
		Name:    name,
		X:       make([]float32, 0, capHint*cifarPixels),
		Y:       make([]int, 0, capHint),
		Shape:   []int{3, cifarSide, cifarSide},
		Classes: cifarClasses(),
		Norm:    cifarNorm(),
	}
}

// appendCIFAR appends every record of one batch file to d.
func appendCIFAR(d *Dataset, r io.Reader, name string) error {
	r, gz, err := maybeGunzip(r, name)
	if err != nil {
		return err
	}
	var lut [3][256]float32
	for c := range lut {
		for v := range lut[c] {
			lut[c][v] = (float32(v)/255 - cifarMean[c]) / cifarStd[c]
		}
	}
	var rec [cifarRecord]byte
	for i := int64(0); ; i++ {
		off := i * cifarRecord
		k, err := io.ReadFull(r, rec[:])
		if k == 0 && err == io.EOF {
			if i == 0 {
				return &FormatError{Path: name, Offset: 0, Gzip: gz, Msg: "empty file: no records"}
			}
			return nil
		}
		if err != nil {
			msg := fmt.Sprintf("truncated record %d: %d of %d bytes (a CIFAR-10 record is a label byte and 3072 pixels)", i, k, cifarRecord)
			return &FormatError{Path: name, Offset: off + int64(k), Gzip: gz, Msg: msg, Err: ignoreEOF(err)}
		}
		if rec[0] >= 10 {
			return &FormatError{Path: name, Offset: off, Gzip: gz, Msg: fmt.Sprintf("record %d: label %d outside [0, 10)", i, rec[0])}
		}
		d.Y = append(d.Y, int(rec[0]))
		n := len(d.X)
		d.X = append(d.X, make([]float32, cifarPixels)...)
		dst := d.X[n:]
		for c := range 3 {
			src := rec[1+c*cifarSide*cifarSide : 1+(c+1)*cifarSide*cifarSide]
			out := dst[c*cifarSide*cifarSide : (c+1)*cifarSide*cifarSide]
			for j, b := range src {
				out[j] = lut[c][b]
			}
		}
	}
}

// LoadCIFAR10 loads data_batch_1..5.bin (training, 50,000 images) and
// test_batch.bin (10,000) from dir or dir/cifar-10-batches-bin; files may be
// gzip-compressed (name.bin.gz). Class names come from batches.meta.txt when
// present. As float32 the training set takes about 614 MB.
func LoadCIFAR10(dir string) (TrainTest, error) {
	if _, err := os.Stat(filepath.Join(dir, "cifar-10-batches-bin")); err == nil {
		dir = filepath.Join(dir, "cifar-10-batches-bin")
	}
	find := func(stem string) (string, error) {
		return firstExisting("CIFAR-10", cifarHint,
			filepath.Join(dir, stem+".bin"), filepath.Join(dir, stem+".bin.gz"))
	}
	var trainFiles []string
	for i := 1; i <= 5; i++ {
		p, err := find(fmt.Sprintf("data_batch_%d", i))
		if err != nil {
			return TrainTest{}, err
		}
		trainFiles = append(trainFiles, p)
	}
	testFile, err := find("test_batch")
	if err != nil {
		return TrainTest{}, err
	}
	classes := cifarClasses()
	if meta := filepath.Join(dir, "batches.meta.txt"); fileExists(meta) {
		if classes, err = readClassNames(meta, 10); err != nil {
			return TrainTest{}, err
		}
	}
	load := func(name string, files []string) (*Dataset, error) {
		d := newCIFARDataset(name, recordsHint(files))
		for _, p := range files {
			f, err := os.Open(p)
			if err != nil {
				return nil, err
			}
			err = appendCIFAR(d, f, p)
			f.Close()
			if err != nil {
				return nil, err
			}
		}
		d.Classes = classes
		return d, nil
	}
	var out TrainTest
	if out.Train, err = load("CIFAR-10/train", trainFiles); err != nil {
		return TrainTest{}, err
	}
	if out.Test, err = load("CIFAR-10/test", []string{testFile}); err != nil {
		return TrainTest{}, err
	}
	return out, nil
}

// recordsHint is the number of records uncompressed batch files hold, from
// their sizes (0 when unknown), to allocate the dataset once.
func recordsHint(files []string) int {
	n := 0
	for _, p := range files {
		st, err := os.Stat(p)
		if err != nil || strings.HasSuffix(p, ".gz") {
			return 0
		}
		n += int(st.Size() / cifarRecord)
	}
	return n
}

// readClassNames reads one class name per non-empty line; there must be
// exactly want of them.
func readClassNames(path string, want int) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var names []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if s := strings.TrimSpace(sc.Text()); s != "" {
			names = append(names, s)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, &FormatError{Path: path, Offset: -1, Msg: "read error", Err: err}
	}
	if len(names) != want {
		return nil, whole(path, "%d class names; expected %d", len(names), want)
	}
	return names, nil
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir()
}
