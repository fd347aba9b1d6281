package data

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
)

// FashionMNISTDir is where the Debian package dataset-fashion-mnist installs
// the four IDX gzip files.
const FashionMNISTDir = "/usr/share/datasets/fashion-mnist"

// idxFamily describes one MNIST-family dataset: names, classes, and the
// normalization its community uses — x/255, then (x-mean)/std with the
// training set's pixel mean and standard deviation.
type idxFamily struct {
	name      string
	classes   []string
	mean, std float32
	hint      string
}

// mnistFamily: mean 0.1307, std 0.3081 are the MNIST training set's pixel
// statistics (checked by TestMNISTNormalization), the constants PyTorch's
// examples and most FL code use.
func mnistFamily() idxFamily {
	return idxFamily{
		name:    "MNIST",
		classes: []string{"0", "1", "2", "3", "4", "5", "6", "7", "8", "9"},
		mean:    0.1307, std: 0.3081,
		hint: "MNIST is embedded: call data.MNIST(); or download the four IDX files " +
			"(train-images-idx3-ubyte.gz, train-labels-idx1-ubyte.gz, t10k-images-idx3-ubyte.gz, " +
			"t10k-labels-idx1-ubyte.gz) from http://yann.lecun.com/exdb/mnist/ into the directory",
	}
}

// fashionFamily: mean 0.2860, std 0.3530 are Fashion-MNIST's training set
// pixel statistics (checked by TestFashionMNISTDebian), the values commonly
// used for it; class names from Xiao et al. (2017).
func fashionFamily() idxFamily {
	return idxFamily{
		name: "Fashion-MNIST",
		classes: []string{"T-shirt/top", "Trouser", "Pullover", "Dress", "Coat",
			"Sandal", "Shirt", "Sneaker", "Bag", "Ankle boot"},
		mean: 0.2860, std: 0.3530,
		hint: "install the Debian package (apt-get install dataset-fashion-mnist, files in " + FashionMNISTDir +
			") or download the four IDX gzip files from https://github.com/zalandoresearch/fashion-mnist",
	}
}

func (f idxFamily) norm() Normalization {
	return Normalization{
		Desc:  fmt.Sprintf("x/255, then (x-%.4f)/%.4f", f.mean, f.std),
		Scale: 1.0 / 255, Mean: []float32{f.mean}, Std: []float32{f.std},
	}
}

// LoadMNIST loads MNIST from the four IDX files in dir (gzip or not, with
// either the "-idx3-ubyte" or ".idx3-ubyte" naming). Use MNIST() for the
// embedded copy.
func LoadMNIST(dir string) (TrainTest, error) { return loadIDXDir(dir, mnistFamily(), nil) }

// LoadMNISTShard loads MNIST from dir as LoadMNIST does, but the values of
// only the training samples sel picks (Only): it decodes the training
// labels, asks sel, then streams the training images keeping those
// samples' pixels and skipping the others', so that its memory is the
// shard and the test set, never the whole training set. Both sets keep
// their pixels as bytes (Dataset.Codes): a quarter of float32's memory,
// the same values.
func LoadMNISTShard(dir string, sel Selector) (TrainTest, error) {
	return loadIDXDir(dir, mnistFamily(), sel)
}

// LoadFashionMNIST loads Fashion-MNIST from the four IDX files in dir, or
// from FashionMNISTDir (the Debian package) when dir is "".
func LoadFashionMNIST(dir string) (TrainTest, error) { return LoadFashionMNISTShard(dir, nil) }

// LoadFashionMNISTShard is LoadFashionMNIST keeping the values of only
// the training samples sel picks, as LoadMNISTShard (sel nil: all).
func LoadFashionMNISTShard(dir string, sel Selector) (TrainTest, error) {
	if dir == "" {
		dir = FashionMNISTDir
	}
	return loadIDXDir(dir, fashionFamily(), sel)
}

// IDXShape is what the headers of an MNIST-family directory declare: the
// training and test sample counts and a sample's shape, read without
// decoding any sample (a node process sizes its memory from it before it
// loads its shard). Loading checks the rest.
type IDXShape struct {
	Name        string // the training set's, as loading names it
	Train, Test int
	Shape       []int
	Classes     int
}

// MNISTShape reads the headers of the MNIST files in dir.
func MNISTShape(dir string) (IDXShape, error) { return idxDirShape(dir, mnistFamily()) }

// FashionMNISTShape reads the headers of the Fashion-MNIST files in dir
// (FashionMNISTDir when dir is "").
func FashionMNISTShape(dir string) (IDXShape, error) {
	if dir == "" {
		dir = FashionMNISTDir
	}
	return idxDirShape(dir, fashionFamily())
}

func idxDirShape(dir string, fam idxFamily) (IDXShape, error) {
	out := IDXShape{Name: fam.name + "/train", Classes: len(fam.classes)}
	for _, set := range []struct {
		stem string
		n    *int
	}{{"train", &out.Train}, {"t10k", &out.Test}} {
		p, err := idxFile(dir, fam, set.stem+"-images", "idx3")
		if err != nil {
			return IDXShape{}, err
		}
		f, err := os.Open(p)
		if err != nil {
			return IDXShape{}, err
		}
		r, gz, err := maybeGunzip(f, p)
		var dims []int
		if err == nil {
			dims, _, err = readIDXHeader(r, p, gz)
		}
		f.Close()
		if err != nil {
			return IDXShape{}, err
		}
		if len(dims) < 2 {
			return IDXShape{}, &FormatError{Path: p, Offset: 3, Gzip: gz, Msg: fmt.Sprintf("images file has %d dimensions %v; expected at least 2 (count, pixels...)", len(dims), dims)}
		}
		*set.n, out.Shape = dims[0], append([]int(nil), dims[1:]...)
		if len(out.Shape) == 2 {
			out.Shape = []int{1, out.Shape[0], out.Shape[1]}
		}
	}
	return out, nil
}

// idxFile is the first of the family's names for file stem (e.g.
// "train-images") of kind ("idx3") that exists in dir.
func idxFile(dir string, fam idxFamily, stem, kind string) (string, error) {
	dash := stem + "-" + kind + "-ubyte"
	dot := stem + "." + kind + "-ubyte"
	return firstExisting(fam.name, fam.hint,
		filepath.Join(dir, dash+".gz"), filepath.Join(dir, dash),
		filepath.Join(dir, dot+".gz"), filepath.Join(dir, dot))
}

// loadIDXDir loads the family's four files from dir; with sel, the
// training set keeps the values of the samples sel picks only, and both
// sets are coded (Dataset.Codes).
func loadIDXDir(dir string, fam idxFamily, sel Selector) (TrainTest, error) {
	find := func(stem, kind string) (string, error) { return idxFile(dir, fam, stem, kind) }
	var out TrainTest
	for _, set := range []struct {
		stem string
		dst  **Dataset
		tag  string
		sel  Selector
	}{{"train", &out.Train, "train", sel}, {"t10k", &out.Test, "test", nil}} {
		ip, err := find(set.stem+"-images", "idx3")
		if err != nil {
			return TrainTest{}, err
		}
		lp, err := find(set.stem+"-labels", "idx1")
		if err != nil {
			return TrainTest{}, err
		}
		d, err := readIDXPairFiles(ip, lp, fam, fam.name+"/"+set.tag, set.sel, sel != nil)
		if err != nil {
			return TrainTest{}, err
		}
		*set.dst = d
	}
	return out, nil
}

func readIDXPairFiles(imagesPath, labelsPath string, fam idxFamily, name string, sel Selector, coded bool) (*Dataset, error) {
	fi, err := os.Open(imagesPath)
	if err != nil {
		return nil, err
	}
	defer fi.Close()
	fl, err := os.Open(labelsPath)
	if err != nil {
		return nil, err
	}
	defer fl.Close()
	return decodeIDXPair(fi, fl, imagesPath, labelsPath, fam, name, sel, coded)
}

// decodeIDXPair builds the dataset name from an images file (N × H × W
// bytes) and a labels file (N bytes), normalizing pixels as fam says.
// With sel, it decodes the labels and the images' header, asks sel which
// samples to keep, and keeps the pixels of those only (Only's layout);
// the whole file is read and checked either way. Coded (always with sel),
// it keeps the pixels as bytes with their normalized values as Levels.
func decodeIDXPair(images, labels io.Reader, imagesName, labelsName string, fam idxFamily, name string, sel Selector, coded bool) (*Dataset, error) {
	lbl, err := ReadIDX(labels, labelsName)
	if err != nil {
		return nil, err
	}
	if len(lbl.Dims) != 1 {
		return nil, atOffset(labelsName, 3, "labels file has %d dimensions %v; expected 1", len(lbl.Dims), lbl.Dims)
	}
	// Images stream through a small buffer straight into float32, with no
	// intermediate byte copy of the whole file (the embedded MNIST must load
	// in well under a second).
	bound := inputBound(images)
	imgR, gz, err := maybeGunzip(images, imagesName)
	if err != nil {
		return nil, err
	}
	dims, total, err := readIDXHeader(imgR, imagesName, gz)
	if err != nil {
		return nil, err
	}
	if len(dims) < 2 {
		return nil, &FormatError{Path: imagesName, Offset: 3, Gzip: gz, Msg: fmt.Sprintf("images file has %d dimensions %v; expected at least 2 (count, pixels...)", len(dims), dims)}
	}
	n := dims[0]
	for i, d := range dims[1:] {
		if d == 0 {
			return nil, &FormatError{Path: imagesName, Offset: 8 + 4*int64(i), Gzip: gz, Msg: fmt.Sprintf("images file has dimensions %v: a sample dimension is zero", dims)}
		}
	}
	if n != lbl.Dims[0] {
		return nil, atOffset(labelsName, 4, "%d labels for %d images in %s", lbl.Dims[0], n, imagesName)
	}
	if n == 0 {
		return nil, atOffset(imagesName, 4, "no samples")
	}
	shape := append([]int(nil), dims[1:]...)
	if len(shape) == 2 {
		shape = []int{1, shape[0], shape[1]} // grayscale [C, H, W]
	}
	ys := make([]int, n)
	for i, b := range lbl.Data {
		if int(b) >= len(fam.classes) {
			return nil, atOffset(labelsName, 8+int64(i), "label %d of sample %d outside [0, %d)", b, i, len(fam.classes))
		}
		ys[i] = int(b)
	}
	var lut [256]float32
	for v := range lut {
		lut[v] = (float32(v)/255 - fam.mean) / fam.std
	}
	d := &Dataset{
		Name: name, Shape: shape, Y: ys,
		Classes: append([]string(nil), fam.classes...),
		Norm:    fam.norm(),
	}
	if !coded {
		if d.X, err = readPixels(imgR, total, bound, &lut, imagesName, idxHeaderLen(dims), gz); err != nil {
			return nil, err
		}
		return d, nil
	}
	kept := n
	if sel != nil {
		d = d.labelsOnly()
		keep, err := sel(d)
		if err != nil {
			return nil, err
		}
		if keep, err = d.keep(keep); err != nil {
			return nil, err
		}
		for k, i := range keep {
			d.Rows[i] = int32(k)
		}
		kept = len(keep)
	}
	if d.Codes, err = readPixelRows(imgR, total, bound, n, d.Rows, kept, imagesName, idxHeaderLen(dims), gz); err != nil {
		return nil, err
	}
	d.Levels = &lut
	return d, nil
}

// readPixels reads n bytes from r and maps each through lut into a float32
// slice, growing the output only as data arrives (see readDeclared).
func readPixels(r io.Reader, n, bound int64, lut *[256]float32, path string, off int64, gz bool) ([]float32, error) {
	xs := make([]float32, 0, initialCap(n, bound))
	var chunk [1 << 16]byte
	for int64(len(xs)) < n {
		want := min(n-int64(len(xs)), int64(len(chunk)))
		k, err := io.ReadFull(r, chunk[:want])
		if len(xs)+k > cap(xs) {
			xs = slices.Grow(xs, int(min(n, 2*int64(cap(xs))))-len(xs))
		}
		src := chunk[:k]
		dst := xs[len(xs) : len(xs)+k]
		for i, b := range src {
			dst[i] = lut[b]
		}
		xs = xs[:len(xs)+k]
		if err != nil {
			return nil, pixelsCut(err, int64(len(xs)), n, path, off, gz)
		}
	}
	if err := expectEOF(r, path, off+n, gz); err != nil {
		return nil, err
	}
	return xs, nil
}

// pixelsCut is the error of a pixel stream that ended (or failed) after
// read of its n declared bytes.
func pixelsCut(err error, read, n int64, path string, off int64, gz bool) error {
	msg := "truncated"
	if err = ignoreEOF(err); err != nil {
		msg = "read error"
	}
	return &FormatError{Path: path, Offset: off + read, Gzip: gz,
		Msg: fmt.Sprintf("%s: %d of %d declared pixel bytes", msg, read, n), Err: err}
}

// readPixelRows is readPixels keeping the pixel bytes, of only some
// samples: it reads all n bytes of count samples, and keeps sample i's
// bytes as row rows[i] of the output when rows is nil or rows[i] ≥ 0
// (kept rows numbered in sample order, kept of them), skipping the
// others'. The output grows as kept bytes arrive, as readPixels's does,
// so it never exceeds the kept rows; the errors are readPixels's.
func readPixelRows(r io.Reader, n, bound int64, count int, rows []int32, kept int, path string, off int64, gz bool) ([]uint8, error) {
	row := n / int64(count)
	want := int64(kept) * row
	xs := make([]uint8, 0, initialCap(want, bound))
	var chunk [1 << 16]byte
	for read := int64(0); read < n; {
		k, err := io.ReadFull(r, chunk[:min(n-read, int64(len(chunk)))])
		for j := 0; j < k; {
			at := read + int64(j)
			i, within := at/row, at%row
			span := int(min(row-within, int64(k-j)))
			if rows == nil || rows[i] >= 0 {
				if len(xs)+span > cap(xs) {
					xs = slices.Grow(xs, int(min(want, max(2*int64(cap(xs)), int64(len(xs)+span))))-len(xs))
				}
				xs = append(xs, chunk[j:j+span]...)
			}
			j += span
		}
		read += int64(k)
		if err != nil {
			return nil, pixelsCut(err, read, n, path, off, gz)
		}
	}
	if err := expectEOF(r, path, off+n, gz); err != nil {
		return nil, err
	}
	return xs, nil
}
