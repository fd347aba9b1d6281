#!/usr/bin/env bash
# Runs trellis's training-step and Sgemm benchmarks and the identical
# PyTorch CPU workloads side by side, in one invocation, on the same cores,
# and prints samples/s (GFLOP/s for Sgemm) for both and the ratio.
#
#   bench/torch_compare.sh [CORES] [SECONDS]     (defaults: 2, 3)
#
# Each side gets its best configuration within CORES cores: trellis runs
# with 1..CORES matrix threads; PyTorch runs with torch.set_num_threads(t)
# and OPENBLAS_NUM_THREADS=b for the combinations that do not oversubscribe
# the cores (t·b ≤ CORES; OpenBLAS's own threads under torch's OpenMP
# threads thrash, which would make PyTorch look far slower than it is).
# The table shows the best of each and which setting gave it.
#
# Needs Debian's python3-torch and a tuned BLAS for it
# (apt-get install python3-torch libopenblas0-pthread). Run it on an
# otherwise idle machine.
set -euo pipefail
cd "$(dirname "$0")/.."
cores=${1:-2}
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

echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(nproc) cores; budget: $cores cores"
echo "CPU flags: $(grep -m1 '^flags' /proc/cpuinfo | tr ' ' '\n' | grep -E '^(avx2|fma|avx512f|avx512bw|avx512vl)$' | sort | xargs); trellis kernels capped by TRELLIS_CPU=${TRELLIS_CPU:-auto} (avx2: no AVX-512; portable: no assembly)"
echo "go: $(go version | cut -d' ' -f3); torch: $("$py" -c 'import torch; print(torch.__version__)'); BLAS under torch: $blas"
. bench/peer_env.sh
echo "peer: $peer_env_note"

results=$(mktemp)
trap 'rm -f "$results"' EXIT

# trellis: one go test run; sub-benchmarks name their thread count.
GOMAXPROCS=$cores go test ./nn ./internal/gemm -run '^$' \
	-bench 'TrainStep(MLP|FEMNISTCNN|LeNet5)|Sgemm512' -benchtime "${seconds}s" -count 1 |
	awk -v cores="$cores" '
		/samples\/s|GFLOP\/s/ {
			name = $1; sub(/^Benchmark/, "", name); sub(/-[0-9]+$/, "", name)
			if (!match(name, /threads=?[0-9]+/)) next
			t = substr(name, RSTART, RLENGTH); gsub(/[^0-9]/, "", t)
			if (t + 0 > cores) next
			for (i = 2; i < NF; i++) if ($(i+1) == "samples/s" || $(i+1) == "GFLOP/s") v = $i
			w = (name ~ /MLP/) ? "mlp_b32" : (name ~ /CNN/) ? "cnn_b64" : (name ~ /LeNet5\/28x28/) ? "lenet5_28_b64" : (name ~ /LeNet5\/32x32/) ? "lenet5_32_b64" : "sgemm512_gflops"
			print "go", w, v, name
		}' >>"$results"

# PyTorch: every non-oversubscribing (torch threads, OpenBLAS threads) pair.
for t in $(seq 1 "$cores"); do
	for b in $(seq 1 "$cores"); do
		[ $((t * b)) -le "$cores" ] || continue
		OMP_NUM_THREADS=$t OPENBLAS_NUM_THREADS=$b "$py" bench/torch_train.py --threads "$t" --seconds "$seconds" |
			awk -v cfg="torch=$t,openblas=$b" 'NF == 2 && $2 ~ /^[0-9.]+$/ { print "torch", $1, $2, cfg }' >>"$results"
	done
done

best() { # side workload -> "value setting"
	awk -v s="$1" -v w="$2" '$1 == s && $2 == w && $3 + 0 > best { best = $3 + 0; cfg = $4 } END { print best, cfg }' "$results"
}
printf '\n| workload | trellis | PyTorch | ratio | trellis setting | PyTorch setting |\n|---|---:|---:|---:|---|---|\n'
for w in mlp_b32 cnn_b64 lenet5_28_b64 lenet5_32_b64 sgemm512_gflops; do
	read -r g gcfg <<<"$(best go "$w")"
	read -r t tcfg <<<"$(best torch "$w")"
	case $w in
	mlp_b32) label="MLP 784-256-128-10 training, batch 32 (samples/s)" ;;
	cnn_b64) label="FEMNIST CNN training, batch 64 (samples/s)" ;;
	lenet5_28_b64) label="LeNet-5 1×28×28 training, batch 64 (samples/s)" ;;
	lenet5_32_b64) label="LeNet-5 3×32×32 training, batch 64 (samples/s)" ;;
	*) label="Sgemm 512×512×512 (GFLOP/s)" ;;
	esac
	awk -v n="$label" -v g="$g" -v t="$t" -v gc="$gcfg" -v tc="$tcfg" \
		'BEGIN { printf "| %s | %.0f | %.0f | %.2f× | %s | %s |\n", n, g, t, g / t, gc, tc }'
done
