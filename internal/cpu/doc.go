// Package cpu reports which vector instruction sets this machine and its OS
// support, so kernels with assembly fast paths (gemm, the optimizers) can
// choose them at run time. The flags are read once and never change; the
// environment variable TRELLIS_CPU (EnvVar) caps them, so one machine can
// run and measure every path. ModelName names the CPU for the record
// next to a measurement.
package cpu
