#!/usr/bin/env bash
# 200 node processes on one machine: runs bench/procs200/mlp-200.toml with
# `trellis run` (the simulator, one process) and with `trellis launch
# --mode wallclock` (a monitor and one process per node on this machine,
# over Unix sockets), and prints for each: the time per round, the peak RSS
# (the simulator's; for the launch, the sum of every node process's peak
# RSS and the largest), the node processes' proportional set size (PSS:
# shared pages divided among the processes that map them), and the
# machine's peak used memory (MemTotal − MemAvailable, sampled every
# 0.5 s, minus what was used before).
#
#   bench/procs200.sh                  # DELTA=60s START=90s by default
#   DELTA=40s NODES=50 SIM=0 bench/procs200.sh
#
# It also prints, for one node process, what its resident set is made of:
# private (anonymous) memory, the program's pages and the shared dataset
# file's pages (smaps), and the launch's own memory estimate beside.
set -euo pipefail
cd "$(dirname "$0")/.."
delta=${DELTA:-60s}
start=${START:-90s}
nodes=${NODES:-200}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
bin="$tmp/trellis"
go build -o "$bin" ./cmd/trellis
sed "s/^nodes = .*/nodes = $nodes/" bench/procs200/mlp-200.toml > "$tmp/cfg.toml"

used() { awk '/MemTotal/ { t = $2 } /MemAvailable/ { a = $2 } END { print t - a }' /proc/meminfo; }

echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cores, $(awk '/MemTotal/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo)"
echo "instruction sets: $(grep -o 'avx[^ ]*' /proc/cpuinfo | sort -u | tr '\n' ' ')"
echo "open files: ulimit -n $(ulimit -n)"

# The simulator (SIM=0 skips it).
if [ "${SIM:-1}" != 0 ]; then
/usr/bin/time -f '%M' -o "$tmp/sim.rss" "$bin" run "$tmp/cfg.toml" -o "$tmp/sim" -q > /dev/null
simdir=$(dirname "$(ls "$tmp"/sim/*/timings.jsonl 2> /dev/null | head -1 || ls "$tmp"/sim/timings.jsonl)")
awk -v rss="$(cat "$tmp/sim.rss")" 'match($0, /"round_seconds":[0-9.eE+-]+/) { v = substr($0, RSTART + 16, RLENGTH - 16); printf "simulator round %d: %.2f s\n", n++, v }
	END { printf "simulator peak RSS: %.0f MiB\n", rss / 1024 }' "$simdir/timings.jsonl"
fi

# The launch: sample every node process's peak RSS and PSS, and the machine.
"$bin" launch "$tmp/cfg.toml" -o "$tmp/est" --dry-run 2>&1 | grep -A30 '^memory estimate: launched node' | grep -E '^ *(live|expected peak)' | head -2 | sed 's/^ */launch estimate of a node process: /'
"$bin" launch "$tmp/cfg.toml" -o "$tmp/est" --dry-run 2>&1 | grep -A12 '^memory estimate: launch ' | grep -E '^ *expected peak' | sed 's/^ */launch estimate of the machine: /'
base=$(used)
"$bin" launch "$tmp/cfg.toml" -o "$tmp/clu" -q --mode wallclock --delta "$delta" --start-delay "$start" 2> "$tmp/launch.err" &
pid=$!
declare -A pss anon
peak=0
pass=0
one=""
declare -A part
while kill -0 "$pid" 2> /dev/null; do
	# One node process's resident set by mapping (smaps is too slow to
	# read for all of them every half second).
	[ -n "$one" ] && [ -e "/proc/$one/smaps" ] || one=$(pgrep -P "$pid" -f -- "--data-file" | head -1 || true)
	if [ -n "$one" ]; then
		while read -r k v; do
			[ "$v" -gt "${part[$k]:-0}" ] && part[$k]=$v
		done < <(awk -v bin="$bin" '/^[0-9a-f]+-/ { name = $6 } /^Rss:/ { if (name == bin) p += $2; else if (name ~ /dataset.bin$/) d += $2; else if (name == "" || name ~ /^\[/) a += $2; else o += $2 }
			END { print "program", p + 0; print "dataset", d + 0; print "anonymous", a + 0; print "other", o + 0 }' "/proc/$one/smaps" 2> /dev/null || true)
	fi
	# PSS and private memory of every node process, every 4th pass (200
	# processes take a while to read on a loaded machine); the peak RSS
	# comes exact from the launch (peak_rss.json, getrusage).
	if [ $((pass++ % 4)) -eq 0 ]; then
		for c in $(pgrep -P "$pid"); do
			if grep -q -a -- "--data-file" "/proc/$c/cmdline" 2> /dev/null; then
				p=$(awk '/^Pss:/ { print $2 }' "/proc/$c/smaps_rollup" 2> /dev/null || true)
				[ -n "$p" ] && [ "$p" -gt "${pss[$c]:-0}" ] && pss[$c]=$p
				a=$(awk '/RssAnon/ { print $2 }' "/proc/$c/status" 2> /dev/null || true)
				[ -n "$a" ] && [ "$a" -gt "${anon[$c]:-0}" ] && anon[$c]=$a
			fi
		done
	fi
	u=$(($(used) - base))
	[ "$u" -gt "$peak" ] && peak=$u
	sleep 0.5
done
rc=0
wait "$pid" || rc=$?
echo "launch exit code: $rc"
[ "$rc" -eq 0 ] || tail -20 "$tmp/launch.err"
printf '%s\n' "${anon[@]}" | sort -n | awk '{ a[NR] = $1 } END { printf "peak private (anonymous) memory per process: median %.1f, max %.1f MiB\n", a[int((NR + 1) / 2)] / 1024, a[NR] / 1024 }'
tr -c '0-9\n' '\n' < "$tmp/clu/cluster/peak_rss.json" | grep -v '^$' | tail -n +2 | sort -n |
	awk '{ a[NR] = $1; s += $1 } END { printf "node processes: %d; peak RSS per process (getrusage): min %.1f, median %.1f, max %.1f MiB; sum %.2f GiB\n", NR, a[1] / 1048576, a[int((NR + 1) / 2)] / 1048576, a[NR] / 1048576, s / 1073741824 }'
printf '%s\n' "${pss[@]}" | wc -l | awk '{ printf "processes the sampler read: %d\n", $1 }'
printf '%s\n' "${pss[@]}" | sort -n | awk '{ a[NR] = $1; s += $1 } END { printf "peak PSS per process: median %.1f, max %.1f MiB; sum %.2f GiB\n", a[int((NR + 1) / 2)] / 1024, a[NR] / 1024, s / 1048576 }'
echo "one node process's resident set at its largest, by part: program text and data ${part[program]:-?} KiB, dataset file ${part[dataset]:-?} KiB, anonymous (heap, runtime) ${part[anonymous]:-?} KiB, other files ${part[other]:-?} KiB"
awk -v p="$peak" 'BEGIN { printf "machine peak used memory (over the idle baseline): %.2f GiB\n", p / 1048576 }'
awk 'match($0, /"round_seconds":[0-9.eE+-]+/) { v = substr($0, RSTART + 16, RLENGTH - 16); printf "launch round %d: %.2f s\n", n++, v }' "$tmp/clu/timings.jsonl" 2> /dev/null || true
# What the nodes' rounds took of Δ (driver.jsonl: each node's own round
# and training seconds, evaluation included).
awk 'match($0, /"round":[0-9]+/) { r = substr($0, RSTART + 8, RLENGTH - 8) }
     match($0, /"round_seconds":[0-9.eE+-]+/) { v = substr($0, RSTART + 16, RLENGTH - 16); if (v > mx[r]) mx[r] = v; s[r] += v; n[r]++ }
     match($0, /"train_seconds":[0-9.eE+-]+/) { tv = substr($0, RSTART + 16, RLENGTH - 16); ts[r] += tv }
     END { for (r in n) printf "launch round %d, the nodes own round: mean %.2f s, max %.2f s (training: mean %.2f s)\n", r, s[r] / n[r], mx[r], ts[r] / n[r] }' "$tmp/clu/driver.jsonl" | sort -n -k3 || true
grep -c '"missing":true' "$tmp/clu/metrics.jsonl" | awk '{ printf "node records marked missing: %d\n", $1 }' || true
