#!/usr/bin/env bash
# Regenerates the tables of docs/results/secure-aggregation.md: runs every
# run of the secagg/modes-quick preset as its own process (--shard k/N), so
# that each run's CPU time (user + system) is measured alone, then prints
# accuracy by variant × attack and, per run, the bytes each node sent per
# round (metrics.jsonl) and the CPU seconds per node per round (the
# process's CPU over nodes × rounds: training, evaluation and the
# protocol together).
#
#   docs/results/secure-aggregation.sh [OUT] [CONFIG]
#       (defaults runs/secagg and configs/secagg/modes-quick.toml; the
#       Paillier relay's table: runs/paillier configs/secagg/paillier-quick.toml)
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:-runs/secagg}
mkdir -p "$out"
go build -o "$out/trellis" ./cmd/trellis
t="$out/trellis"
cfg=${2:-configs/secagg/modes-quick.toml}
n=$("$t" validate "$cfg" | sed -n 's/.*valid, \([0-9]*\) run(s).*/\1/p')
for k in $(seq 0 $((n - 1))); do
  /usr/bin/time -f "%U %S" -o "$out/cpu-$k.txt" nice -n 10 "$t" run "$cfg" -o "$out" --shard "$k/$n" --quiet >/dev/null
  d=$(ls -td "$out"/variant=*/adversary.attack=*/seed-1 | head -1)
  echo "$d $(cat "$out/cpu-$k.txt")" >> "$out/cpu.txt"
done
"$t" run "$cfg" -o "$out" --merge >/dev/null
for m in honest_global_acc honest_local_acc; do
  echo "## $m"
  "$t" report "$out" --rows label --cols adversary.attack --metric $m
done
echo "## per run: bytes sent per node per round, CPU seconds per node per round, fallbacks"
python3 - "$out" <<'PY'
import json, sys, os
out = sys.argv[1]
for line in open(os.path.join(out, "cpu.txt")):
    d, u, s = line.split()
    per = sent = fb = groups = 0
    for nr in map(json.loads, open(os.path.join(d, "metrics.jsonl"))):  # one line per node and round
        per += 1
        sent += nr["bytes_sent"]
        sa = nr.get("secagg")
        if sa:
            groups += 1
            fb += bool(sa.get("fallback"))
    name = os.path.relpath(d, out)
    print(f"| {name} | {sent / per / 1e3:,.1f} kB | {(float(u) + float(s)) / per:.3f} s | {fb}/{groups} |")
PY
