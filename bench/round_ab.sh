#!/usr/bin/env bash
# The 100-node simulator round (bench/round) of an earlier revision and of
# the working tree, side by side in one invocation: the two binaries run
# alternately, PAIRS times each, so drift in the machine's load falls on
# both. Prints each run's best round (bench/round's seconds_per_round) and
# its CPU seconds, then the medians and the ratio.
#
#   bench/round_ab.sh REV [PAIRS] [NODES] [ROUNDS] [CORES]   (defaults: 5, 100, 3, 2)
set -euo pipefail
cd "$(dirname "$0")/.."
rev=${1:?usage: bench/round_ab.sh REV [PAIRS] [NODES] [ROUNDS] [CORES]}
pairs=${2:-5}
nodes=${3:-100}
rounds=${4:-3}
cores=${5:-2}
tmp=$(mktemp -d)
trap 'git worktree remove --force "$tmp/old" >/dev/null 2>&1 || true; rm -rf "$tmp"' EXIT
git worktree add -q --detach "$tmp/old" "$rev"
(cd "$tmp/old" && go build -o "$tmp/round-old" ./bench/round)
go build -o "$tmp/round-new" ./bench/round
echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(nproc) cores," \
	"$(grep -o -m1 -w 'avx512f' /proc/cpuinfo || grep -o -m1 -w avx2 /proc/cpuinfo); GOMAXPROCS=$cores; old = $rev"
run() {
	local out
	out=$( { /usr/bin/time -f "cpu %U %S" env GOMAXPROCS="$cores" "$tmp/round-$1" -nodes "$nodes" -rounds "$rounds"; } 2>&1)
	local s cpu
	s=$(echo "$out" | awk '$1 == "seconds_per_round" { print $2 }')
	cpu=$(echo "$out" | awk '$1 == "cpu" { print $2 + $3 }')
	echo "$1 $s $cpu"
}
for _ in $(seq "$pairs"); do
	run old
	run new
done | tee "$tmp/runs"
awk '
	{ s[$1] = s[$1] " " $2; c[$1] = c[$1] " " $3 }
	function median(list,   a, n, i, j, t) {
		n = split(list, a, " ")
		for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
		return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
	}
	END {
		so = median(s["old"]); sn = median(s["new"]); co = median(c["old"]); cn = median(c["new"])
		printf "median best round: old %.3f s, new %.3f s (new/old %.3f)\n", so, sn, sn / so
		printf "median CPU seconds per invocation: old %.2f, new %.2f (new/old %.3f)\n", co, cn, cn / co
	}' "$tmp/runs"
