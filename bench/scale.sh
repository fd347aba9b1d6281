#!/usr/bin/env bash
# Thousands of nodes in one process: runs the quickstart (MNIST MLP,
# 101,770 parameters; 30 % Gaussian liars; k-regular, k = 10; the whole
# training set) with 1,000 and then 10,000 nodes for 3 rounds, one after
# the other in this one invocation, and prints for each the peak resident
# set (/usr/bin/time -v), the estimate `--dry-run` gave for it and their
# ratio, and the seconds per round (timings.jsonl; building the nodes
# comes before round 0), then the ratio of the two runs' seconds per round.
#
#   bench/scale.sh                          # 1,000 and 10,000 nodes
#   NODES="1000 3000" ROUNDS=2 bench/scale.sh
#   EXTRA="--set model.kind=logreg --set data.samples=60000 --set partition.method=sampled --set partition.per_node=10" \
#     NODES=100000 ROUNDS=2 bench/scale.sh
set -euo pipefail
cd "$(dirname "$0")/.."
nodes=${NODES:-1000 10000}
rounds=${ROUNDS:-3}
extra=${EXTRA:---set data.samples=60000}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
bin="$tmp/trellis"
go build -o "$bin" ./cmd/trellis

echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cores, $(awk '/MemTotal/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo)"
echo "instruction sets: $(grep -o 'avx[^ ]*\|asimd\|neon\|sve' /proc/cpuinfo | sort -u | tr '\n' ' ')"
echo "go: $(go version)"
first=""
for n in $nodes; do
	# shellcheck disable=SC2086 # EXTRA is a list of flags
	set -- quickstart --set nodes="$n" --set topology.k=10 --set rounds="$rounds" $extra
	est=$("$bin" run "$@" --dry-run --json | awk -F'[:,]' '/"peak_bytes"/ { gsub(/ /, "", $2); print $2; exit }')
	/usr/bin/time -v -o "$tmp/time.$n" "$bin" run "$@" -o "$tmp/run.$n" -q > /dev/null
	rss=$(awk -F: '/Maximum resident set size/ { gsub(/ /, "", $2); print $2 * 1024 }' "$tmp/time.$n")
	timings=$(ls "$tmp/run.$n"/*/timings.jsonl 2> /dev/null | head -1 || true)
	[ -n "$timings" ] || timings="$tmp/run.$n/timings.jsonl"
	per=$(awk 'match($0, /"round_seconds":[0-9.eE+-]+/) { s += substr($0, RSTART + 16, RLENGTH - 16); n++ } END { printf "%.2f", s / n }' "$timings")
	awk -v n="$n" -v rss="$rss" -v est="$est" -v per="$per" 'match($0, /"round_seconds":[0-9.eE+-]+/) { r = r sep sprintf("%.1f", substr($0, RSTART + 16, RLENGTH - 16)); sep = ", " }
		END { printf "%6d nodes: peak RSS %.2f GiB, estimate %.2f GiB (%+.1f %%), %.2f s a round (%s)\n", n, rss / 2^30, est / 2^30, 100 * (est / rss - 1), per, r }' "$timings"
	if [ -z "$first" ]; then
		first=$per
		firstn=$n
	else
		awk -v a="$first" -v b="$per" -v m="$firstn" -v n="$n" 'BEGIN { printf "seconds a round, %d over %d nodes: %.2fx for %.0fx the nodes\n", n, m, b / a, n / m }'
	fi
done
