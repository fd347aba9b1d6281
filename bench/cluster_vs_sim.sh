#!/usr/bin/env bash
# Cluster vs simulator, side by side: for
# each 10-node config in bench/cluster/, runs `trellis run` (the simulator,
# one process) and `trellis launch` (lock-step, IPC, a monitor and one
# process per node, fresh key files) alternately, REPS times (default 3);
# checks that metrics.jsonl is bit-identical, and prints the mean round
# time of rounds 1.. of each (round 0 of the cluster includes the
# processes' start-up), the cluster's overhead, the whole command's wall
# time, and the peak RSS of one node process.
#
#   bench/cluster_vs_sim.sh            # REPS=1 for a quick check
set -euo pipefail
cd "$(dirname "$0")/.."
reps=${REPS:-3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
bin="$tmp/trellis"
go build -o "$bin" ./cmd/trellis

# mean_round DIR: mean round_seconds of rounds ≥ 1 in DIR/timings.jsonl.
mean_round() { awk -f bench/mean_round.awk "$1/timings.jsonl"; }

printf '%-28s %4s %10s %10s %9s %9s %9s %12s %s\n' config rep sim_round clu_round overhead sim_wall clu_wall node_rss_MiB metrics
for cfg in bench/cluster/*.toml; do
	name=$(basename "$cfg" .toml)
	for rep in $(seq "$reps"); do
		s0=$(date +%s.%N)
		"$bin" run "$cfg" -o "$tmp/sim" -q > /dev/null
		s1=$(date +%s.%N)
		"$bin" launch "$cfg" -o "$tmp/clu" -q 2> /dev/null &
		pid=$!
		peak=0
		while kill -0 "$pid" 2> /dev/null; do
			for c in $(ps -o pid= --ppid "$pid" 2> /dev/null); do
				if grep -q -a -- "node" "/proc/$c/cmdline" 2> /dev/null; then
					r=$(awk '/VmRSS/ { print $2 }' "/proc/$c/status" 2> /dev/null || echo 0)
					[ "${r:-0}" -gt "$peak" ] && peak=$r
				fi
			done
			sleep 0.1
		done
		wait "$pid"
		s2=$(date +%s.%N)
		simdir=$(dirname "$(ls "$tmp"/sim/*/metrics.jsonl | head -1)")
		same=differ
		cmp -s "$simdir/metrics.jsonl" "$tmp/clu/metrics.jsonl" && same=identical
		sr=$(mean_round "$simdir")
		cr=$(mean_round "$tmp/clu")
		awk -v n="$name" -v rep="$rep" -v sr="$sr" -v cr="$cr" -v s0="$s0" -v s1="$s1" -v s2="$s2" -v rss="$peak" -v same="$same" \
			'BEGIN { printf "%-28s %4d %10.3f %10.3f %8.1f%% %9.1f %9.1f %12.0f %s\n", n, rep, sr, cr, 100 * (cr - sr) / sr, s1 - s0, s2 - s1, rss / 1024, same }'
		rm -rf "$tmp/sim" "$tmp/clu"
		[ "$same" = identical ] || exit 1
	done
done
