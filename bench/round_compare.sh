#!/usr/bin/env bash
# One simulator round of 100 nodes against a straightforward PyTorch loop
# doing the same work on the same machine, in one invocation
# (the round protocol's performance target: ≥ 2× faster per round).
#
#   bench/round_compare.sh [NODES] [CORES]     (defaults: 100, 2)
#
# Needs apt-get install python3-torch python3-numpy libopenblas0-pthread.
set -euo pipefail
cd "$(dirname "$0")/.."
nodes=${1:-100}
cores=${2:-2}
part=$(mktemp --suffix=.json)
trap 'rm -f "$part"' EXIT

echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(nproc) cores; budget: $cores cores"
echo "CPU flags: $(grep -m1 '^flags' /proc/cpuinfo | tr ' ' '\n' | grep -E '^(avx2|fma|avx512f|avx512bw|avx512vl)$' | sort | xargs); trellis kernels capped by TRELLIS_CPU=${TRELLIS_CPU:-auto} (avx2: no AVX-512; portable: no assembly)"
. bench/peer_env.sh
echo "peer: $peer_env_note"
go build -o /tmp/trellis-bench-round ./bench/round
gout=$(GOMAXPROCS=$cores /tmp/trellis-bench-round -nodes "$nodes" -rounds 3 -export "$part")
echo "$gout"
# PyTorch: best non-oversubscribed setting (see bench/torch_compare.sh).
tbest=""
for t in $(seq 1 "$cores"); do
	for b in $(seq 1 "$cores"); do
		[ $((t * b)) -le "$cores" ] || continue
		out=$(OMP_NUM_THREADS=$t OPENBLAS_NUM_THREADS=$b "$py" bench/torch_round.py "$part" --threads "$t" --rounds 2)
		s=$(echo "$out" | awk '$1 == "seconds_per_round" { print $2 }')
		echo "PyTorch torch=$t openblas=$b: $s s/round"
		if [ -z "$tbest" ] || awk -v a="$s" -v b="$tbest" 'BEGIN { exit !(a < b) }'; then tbest=$s; fi
	done
done
gs=$(echo "$gout" | awk '$1 == "seconds_per_round" { print $2 }')
awk -v g="$gs" -v t="$tbest" -v n="$nodes" 'BEGIN { printf "\n| %d nodes, one round | trellis %.2f s | PyTorch %.2f s | %.2f× faster |\n", n, g, t, t / g }'
