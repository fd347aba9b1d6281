#!/usr/bin/env bash
# Runs trellis's training-step and Sgemm benchmarks and the identical
# PyTorch CPU workloads side by side, in one invocation, on the same cores,
# and prints samples/s (GFLOP/s for Sgemm) for both and the ratio.
#
#   bench/torch_compare.sh [THREADS] [SECONDS]     (defaults: 2, 3)
#
# Needs Debian's python3-torch and a tuned BLAS for it
# (apt-get install python3-torch libopenblas0-pthread). Run it on an
# otherwise idle machine: both sides use THREADS cores.
set -euo pipefail
cd "$(dirname "$0")/.."
threads=${1:-2}
seconds=${2:-3}
py=/usr/bin/python3

if ! "$py" -c 'import torch' 2>/dev/null; then
	echo "PyTorch not found for $py: apt-get install python3-torch libopenblas0-pthread" >&2
	exit 1
fi
blas=$(readlink -f /usr/lib/x86_64-linux-gnu/libblas.so.3 2>/dev/null || echo unknown)
case "$blas" in
*openblas*|*blis*|*mkl*) ;;
*) echo "warning: PyTorch's BLAS is $blas (the reference BLAS is ~20x slower); install libopenblas0-pthread for a fair baseline" >&2 ;;
esac

echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(nproc) cores; threads: $threads"
echo "go: $(go version | cut -d' ' -f3); BLAS under torch: $blas"

gobench=$(GOMAXPROCS=$threads go test ./nn ./internal/gemm -run '^$' \
	-bench "TrainStep(MLP|FEMNISTCNN)/batch[0-9]+/threads$threads\$|Sgemm512/.*/threads=$threads\$" \
	-benchtime "${seconds}s" -count 1)
torch=$(OMP_NUM_THREADS=$threads OPENBLAS_NUM_THREADS=$threads "$py" bench/torch_train.py --threads "$threads" --seconds "$seconds")

metric() { # benchmark-name-regex unit
	echo "$gobench" | grep -E "$1" | grep -oE "[0-9.]+ $2" | head -1 | cut -d' ' -f1
}
go_mlp=$(metric "TrainStepMLP/batch32/threads$threads" samples/s)
go_cnn=$(metric "TrainStepFEMNISTCNN/batch64/threads$threads" samples/s)
go_gemm=$(echo "$gobench" | grep -E "Sgemm512/" | grep -oE "[0-9.]+ GFLOP/s" | cut -d' ' -f1 | sort -g | tail -1)
t_mlp=$(echo "$torch" | awk '$1=="mlp_b32"{print $2}')
t_cnn=$(echo "$torch" | awk '$1=="cnn_b64"{print $2}')
t_gemm=$(echo "$torch" | awk '$1=="sgemm512_gflops"{print $2}')

printf '\n| workload | trellis | PyTorch (%s) | ratio |\n|---|---:|---:|---:|\n' "$(echo "$torch" | head -1)"
row() { awk -v n="$1" -v g="$2" -v t="$3" 'BEGIN { printf "| %s | %.0f | %.0f | %.2f× |\n", n, g, t, g / t }'; }
row "MLP 784-256-128-10 training, batch 32 (samples/s)" "$go_mlp" "$t_mlp"
row "FEMNIST CNN training, batch 64 (samples/s)" "$go_cnn" "$t_cnn"
row "Sgemm 512×512×512 (GFLOP/s)" "$go_gemm" "$t_gemm"
