#!/usr/bin/env bash
# Sgemm 512³ on 2 threads, trellis against OpenBLAS (under PyTorch), in
# ROUNDS alternations of SECONDS each: on a shared VM whose speed drifts by
# ±20 % over minutes, only a pair measured back to back compares fairly, so
# this prints every pair's ratio and the median.
#
#   bench/sgemm_compare.sh [ROUNDS] [SECONDS]       (defaults: 7, 1)
#   TRELLIS_CPU=avx2 bench/sgemm_compare.sh         (both sides capped to AVX2)
#
# The peer's kernels are chosen by bench/peer_env.sh, as in torch_compare.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-7}
seconds=${2:-1}
. bench/peer_env.sh
echo "CPU flags: $(grep -m1 '^flags' /proc/cpuinfo | tr ' ' '\n' | grep -E '^(avx2|fma|avx512f)$' | sort | xargs); TRELLIS_CPU=${TRELLIS_CPU:-auto}"
echo "peer: $peer_env_note"

bin=$(mktemp)
trap 'rm -f "$bin"' EXIT
go test -c -o "$bin" ./internal/gemm
level=$(GOMAXPROCS=2 "$bin" -test.run '^$' -test.bench 'Sgemm512/' -test.benchtime 1x 2>/dev/null |
	awk '/Sgemm512\// { split($1, p, "/"); level = p[2] } END { print level }')  # the best level is listed last

ratios=()
for r in $(seq 1 "$rounds"); do
	go=$(GOMAXPROCS=2 "$bin" -test.run '^$' -test.bench "Sgemm512/$level/threads=2\$" -test.benchtime "${seconds}s" |
		awk '{ for (i = 2; i < NF; i++) if ($(i+1) == "GFLOP/s") print $i }')
	peer=$(OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=2 "$py" bench/torch_train.py --threads 1 --seconds "$seconds" --only sgemm512_gflops |
		awk '$1 == "sgemm512_gflops" { print $2 }')
	ratio=$(awk -v g="$go" -v p="$peer" 'BEGIN { printf "%.2f", g / p }')
	ratios+=("$ratio")
	echo "pair $r: trellis ($level) $go GFLOP/s, OpenBLAS $peer GFLOP/s, ratio $ratio"
done
printf '%s\n' "${ratios[@]}" | sort -n | awk '{ a[NR] = $1 } END { print "median ratio: " a[int((NR + 1) / 2)] "× (" NR " pairs)" }'
