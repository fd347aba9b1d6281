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
func LoadMNIST(dir string) (TrainTest, error) { return loadIDXDir(dir, mnistFamily()) }

// LoadFashionMNIST loads Fashion-MNIST from the four IDX files in dir, or
// from FashionMNISTDir (the Debian package) when dir is "".
func LoadFashionMNIST(dir string) (TrainTest, error) {
	if dir == "" {
		dir = FashionMNISTDir
	}
	return loadIDXDir(dir, fashionFamily())
}

func loadIDXDir(dir string, fam idxFamily) (TrainTest, error) {
	find := func(stem, kind string) (string, error) {
		dash := stem + "-" + kind + "-ubyte"
		dot := stem + "." + kind + "-ubyte"
		return firstExisting(fam.name, fam.hint,
			filepath.Join(dir, dash+".gz"), filepath.Join(dir, dash),
			filepath.Join(dir, dot+".gz"), filepath.Join(dir, dot))
	}
	var out TrainTest
	for _, set := range []struct {
		stem string
		dst  **Dataset
		tag  string
	}{{"train", &out.Train, "train"}, {"t10k", &out.Test, "test"}} {
		ip, err := find(set.stem+"-images", "idx3")
		if err != nil {
			return TrainTest{}, err
		}
		lp, err := find(set.stem+"-labels", "idx1")
		if err != nil {
			return TrainTest{}, err
		}
		d, err := readIDXPairFiles(ip, lp, fam)
		if err != nil {
			return TrainTest{}, err
		}
		d.Name = fam.name + "/" + set.tag
		*set.dst = d
	}
	return out, nil
}

func readIDXPairFiles(imagesPath, labelsPath string, fam idxFamily) (*Dataset, error) {
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
	return decodeIDXPair(fi, fl, imagesPath, labelsPath, fam)
}

// decodeIDXPair builds a dataset from an images file (N × H × W bytes) and
// a labels file (N bytes), normalizing pixels as fam says.
func decodeIDXPair(images, labels io.Reader, imagesName, labelsName string, fam idxFamily) (*Dataset, error) {
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
	xs, err := readPixels(imgR, total, bound, &lut, imagesName, idxHeaderLen(dims), gz)
	if err != nil {
		return nil, err
	}
	return &Dataset{
		X: xs, Shape: shape, Y: ys,
		Classes: append([]string(nil), fam.classes...),
		Norm:    fam.norm(),
	}, nil
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
			msg := "truncated"
			if err = ignoreEOF(err); err != nil {
				msg = "read error"
			}
			return nil, &FormatError{Path: path, Offset: off + int64(len(xs)), Gzip: gz,
				Msg: fmt.Sprintf("%s: %d of %d declared pixel bytes", msg, len(xs), n), Err: err}
		}
	}
	if err := expectEOF(r, path, off+n, gz); err != nil {
		return nil, err
	}
	return xs, nil
}
