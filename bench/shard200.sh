#!/usr/bin/env bash
# 200 node processes started by hand, as on 200 devices: each `trellis node`
# without --data-file loads only its own shard of MNIST (and the global test
# set), with its own keys, over Unix sockets, in wall-clock mode; a monitor
# records the run. Prints every node process's peak RSS (/usr/bin/time: the
# kernel's figure for that process alone) and the records written.
#
#   bench/shard200.sh                  # DELTA=60s START=120s NODES=200
set -euo pipefail
cd "$(dirname "$0")/.."
delta=${DELTA:-60s}
start=${START:-120s}
nodes=${NODES:-200}
tmp=$(mktemp -d)
trap 'kill $(jobs -p) 2> /dev/null || true; rm -rf "$tmp"' EXIT
bin="$tmp/trellis"
go build -o "$bin" ./cmd/trellis
sed "s/^nodes = .*/nodes = $nodes/" bench/procs200/mlp-200.toml > "$tmp/cfg.toml"
echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
mkdir "$tmp/sock"
"$bin" keys --nodes "$nodes" --ipc "$tmp/sock" -o "$tmp/keys" > /dev/null
epoch=$(date -u -d "+${start%s} seconds" +%Y-%m-%dT%H:%M:%SZ)
common=(--config "$tmp/cfg.toml" --peers "$tmp/keys/peers.toml" --mode wallclock)
"$bin" monitor -o "$tmp/run" -q --gap "$((2 * ${delta%s}))s" --key "$tmp/keys/monitor.key" "${common[@]}" 2> "$tmp/monitor.err" &
mon=$!
pids=()
for ((i = 0; i < nodes; i++)); do
	/usr/bin/time -f '%M' -o "$tmp/rss-$i" "$bin" node --id "$i" --key "$tmp/keys/node-$i.key" --epoch "$epoch" --delta "$delta" \
		"${common[@]}" --no-memory-check > "$tmp/node-$i.log" 2>&1 &
	pids+=($!)
done
rc=0
for p in "${pids[@]}"; do wait "$p" || rc=$?; done
wait "$mon" || rc=$?
echo "exit codes: worst $rc"
[ "$rc" -eq 0 ] || { tail -n 3 "$tmp/monitor.err"; tail -n 3 "$tmp/node-0.log"; }
cat "$tmp"/rss-* | grep -E '^[0-9]+$' | sort -n |
	awk '{ a[NR] = $1; s += $1 } END { printf "node processes: %d; peak RSS per process: min %.1f, median %.1f, max %.1f MiB; sum %.2f GiB\n", NR, a[1] / 1024, a[int((NR + 1) / 2)] / 1024, a[NR] / 1024, s / 1048576 }'
grep -c '"missing":true' "$tmp/run/metrics.jsonl" | awk '{ printf "node records marked missing: %d\n", $1 }' || true
wc -l < "$tmp/run/metrics.jsonl" | awk '{ printf "node records written: %d\n", $1 }'
