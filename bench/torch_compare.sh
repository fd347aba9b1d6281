#!/usr/bin/env bash
# Runs trellis's training-step and Sgemm benchmarks and the identical
# PyTorch CPU workloads side by side, in one invocation, on the same cores,
# and prints samples/s (GFLOP/s for Sgemm) for both and the ratio.
#
#   bench/torch_compare.sh [CORES] [SECONDS] [ROUNDS]     (defaults: 2, 3, 3)
#
# WORKLOADS (environment) picks some of mlp_b32 cnn_b64 lenet5_28_b64
# lenet5_32_b64 sgemm512_gflops, e.g. to measure one workload again.
#
# Each round measures every workload on both sides back to back (trellis,
# then PyTorch, a few seconds apart), and the table gives each round's
# ratio and their median: on a shared VM whose speed drifts by ±20 % over
# minutes, a trellis figure and a PyTorch figure taken minutes apart say
# more about the drift than about either side.
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
rounds=${3:-3}
. bench/peer_env.sh
blas=$(readlink -f /usr/lib/x86_64-linux-gnu/libblas.so.3 2>/dev/null || echo unknown)
case "$blas" in
*openblas*|*blis*|*mkl*) ;;
*) echo "warning: PyTorch's BLAS is $blas (the reference BLAS is ~20x slower); install libopenblas0-pthread for a fair baseline" >&2 ;;
esac

echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(nproc) cores; budget: $cores cores"
echo "CPU flags: $(grep -m1 '^flags' /proc/cpuinfo | tr ' ' '\n' | grep -E '^(avx2|fma|avx512f|avx512bw|avx512vl)$' | sort | xargs); trellis kernels capped by TRELLIS_CPU=${TRELLIS_CPU:-auto} (avx2: no AVX-512; portable: no assembly)"
echo "go: $(go version | cut -d' ' -f3); torch: $("$py" -c 'import torch; print(torch.__version__)'); BLAS under torch: $blas"
echo "peer: $peer_env_note"

results=$(mktemp)
bins=$(mktemp -d)
trap 'rm -rf "$results" "$bins"' EXIT
go test -c -o "$bins/nn.test" ./nn
go test -c -o "$bins/gemm.test" ./internal/gemm

workloads="${WORKLOADS:-mlp_b32 cnn_b64 lenet5_28_b64 lenet5_32_b64 sgemm512_gflops}"

# trellis ROUND WORKLOAD: its benchmarks at 1..cores matrix threads (the
# Sgemm at the best kernel level the CPU and TRELLIS_CPU allow).
trellis() {
	local bin=$bins/nn.test pattern
	case $2 in
	mlp_b32) pattern='TrainStepMLP/' ;;
	cnn_b64) pattern='TrainStepFEMNISTCNN/' ;;
	lenet5_28_b64) pattern='TrainStepLeNet5/28x28x1/' ;;
	lenet5_32_b64) pattern='TrainStepLeNet5/32x32x3/' ;;
	sgemm512_gflops) bin=$bins/gemm.test pattern='Sgemm512/(avx2|avx512)/' ;;
	esac
	GOMAXPROCS=$cores "$bin" -test.run '^$' -test.bench "$pattern" -test.benchtime "${seconds}s" |
		awk -v cores="$cores" -v r="$1" -v w="$2" '
			/samples\/s|GFLOP\/s/ {
				name = $1; sub(/^Benchmark/, "", name); sub(/-[0-9]+$/, "", name)
				if (!match(name, /threads=?[0-9]+/)) next
				t = substr(name, RSTART, RLENGTH); gsub(/[^0-9]/, "", t)
				if (t + 0 > cores) next
				for (i = 2; i < NF; i++) if ($(i+1) == "samples/s" || $(i+1) == "GFLOP/s") v = $i
				print r, "go", w, v, name
			}' >>"$results"
}

# torch ROUND WORKLOAD: every non-oversubscribing (torch threads, OpenBLAS
# threads) pair.
torch() {
	local t b
	for t in $(seq 1 "$cores"); do
		for b in $(seq 1 "$cores"); do
			[ $((t * b)) -le "$cores" ] || continue
			OMP_NUM_THREADS=$t OPENBLAS_NUM_THREADS=$b "$py" bench/torch_train.py --threads "$t" --seconds "$seconds" --only "$2" |
				awk -v cfg="torch=$t,openblas=$b" -v r="$1" 'NF == 2 && $2 ~ /^[0-9.]+$/ { print r, "torch", $1, $2, cfg }' >>"$results"
		done
	done
}

for r in $(seq 1 "$rounds"); do
	for w in $workloads; do
		trellis "$r" "$w"
		torch "$r" "$w"
	done
	echo "round $r of $rounds done" >&2
done

best() { # round side workload -> "value setting"
	awk -v r="$1" -v s="$2" -v w="$3" '$1 == r && $2 == s && $3 == w && $4 + 0 > best { best = $4 + 0; cfg = $5 } END { print best, cfg }' "$results"
}
printf '\n| workload | trellis (round 1) | PyTorch (round 1) | ratio per round | **median** | trellis setting | PyTorch setting |\n|---|---:|---:|---|---:|---|---|\n'
for w in $workloads; do
	ratios=""
	for r in $(seq 1 "$rounds"); do
		read -r g gcfg <<<"$(best "$r" go "$w")"
		read -r t tcfg <<<"$(best "$r" torch "$w")"
		[ "$r" = 1 ] && { g1=$g t1=$t gc1=$gcfg tc1=$tcfg; }
		ratios="$ratios $(awk -v g="$g" -v t="$t" 'BEGIN { printf "%.2f", g / t }')"
	done
	case $w in
	mlp_b32) label="MLP 784-256-128-10 training, batch 32 (samples/s)" ;;
	cnn_b64) label="FEMNIST CNN training, batch 64 (samples/s)" ;;
	lenet5_28_b64) label="LeNet-5 1×28×28 training, batch 64 (samples/s)" ;;
	lenet5_32_b64) label="LeNet-5 3×32×32 training, batch 64 (samples/s)" ;;
	*) label="Sgemm 512×512×512 (GFLOP/s)" ;;
	esac
	median=$(tr ' ' '\n' <<<"$ratios" | grep . | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }')
	awk -v n="$label" -v g="$g1" -v t="$t1" -v gc="$gc1" -v tc="$tc1" -v rs="$(xargs <<<"$ratios" | sed 's/ /, /g')" -v m="$median" \
		'BEGIN { printf "| %s | %.0f | %.0f | %s | **%s×** | %s | %s |\n", n, g, t, rs, m, gc, tc }'
done
