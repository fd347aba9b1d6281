// Package vec holds the few vector kernels every other package shares: dot
// product, axpy, scaling, norms and squared distances over float32 slices,
// and the elementwise kernels of the training hot path (AddTo, ReLU and its
// gradient, the finiteness check), with AVX2 versions on amd64 that give
// the scalar code's bits. Sums are accumulated in float64 so results do not
// depend on vector length in the way a float32 accumulator would.
package vec
