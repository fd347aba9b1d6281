#!/usr/bin/env bash
# The per-round cost of CURVE: `trellis launch --tcp` (lock-step, a monitor
# and one process per node, fresh key files) of bench/cluster/
# fedavg-dynamic-10.toml with --encryption curve and with --encryption
# none, alternately, REPS times (default 3). Prints the mean round time of
# rounds 1.. (round 0 includes the processes' start-up) and checks that
# metrics.jsonl is the same either way.
set -euo pipefail
cd "$(dirname "$0")/.."
reps=${REPS:-3}
cfg=${CFG:-bench/cluster/fedavg-dynamic-10.toml}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
bin="$tmp/trellis"
go build -o "$bin" ./cmd/trellis

# mean_round DIR: mean round_seconds of rounds ≥ 1 in DIR/timings.jsonl.
mean_round() { awk -f bench/mean_round.awk "$1/timings.jsonl"; }

printf '%4s %12s %12s %9s %s\n' rep none_round curve_round overhead metrics
for rep in $(seq "$reps"); do
	for enc in none curve; do
		"$bin" launch "$cfg" --tcp --encryption "$enc" -o "$tmp/$enc" -q 2> /dev/null
	done
	same=differ
	cmp -s "$tmp/none/metrics.jsonl" "$tmp/curve/metrics.jsonl" && same=identical
	n=$(mean_round "$tmp/none")
	c=$(mean_round "$tmp/curve")
	awk -v rep="$rep" -v n="$n" -v c="$c" -v same="$same" 'BEGIN { printf "%4d %12.3f %12.3f %8.1f%% %s\n", rep, n, c, 100 * (c - n) / n, same }'
	rm -rf "$tmp/none" "$tmp/curve"
	[ "$same" = identical ] || exit 1
done
