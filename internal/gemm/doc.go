// Package gemm multiplies float32 matrices: C = alpha*op(A)*op(B) + beta*C in
// row-major storage. It is the one hot kernel of local training (dense layers
// and convolutions through im2col). Reference is the plain triple loop used as
// the oracle in tests; Engine is the fast path.
package gemm
