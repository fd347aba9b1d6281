#!/usr/bin/env bash
# Regenerates the tables of docs/results/privacy.md: runs the three quick
# privacy presets (resuming any that stopped), prints accuracy and ε by
# rule × attack with `trellis report --rows/--cols`, and each preset's ε by
# RDP and PLD side by side (`trellis privacy --config`). About 17 minutes on 2
# shared, busy cores (216 runs). The audit tables: trellis run
# privacy/audit-quick -o OUT/audit && trellis audit OUT/audit, trellis run
# privacy/lira-quick -o OUT/lira, then docs/results/privacy_audit.py on
# each directory.
#
#   docs/results/privacy.sh [OUT]      (default runs/privacy)
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:-runs/privacy}
mkdir -p "$out"
go build -o "$out/trellis" ./cmd/trellis
t="$out/trellis"
for p in baseline sample node; do
  nice -n 10 "$t" sweep "privacy/$p-quick" -o "$out/$p" --quiet >/dev/null
done
for m in honest_local_acc honest_global_acc; do
  echo "## no DP ($m)"
  "$t" report "$out/baseline" --rows label --cols adversary.attack --metric $m
  for e in 1 4; do
    echo "## DP-SGD, target ε = $e ($m)"
    "$t" report "$out/sample" --rows label --cols adversary.attack --where privacy.target_epsilon=$e --metric $m
  done
  for z in 0.3 1; do
    echo "## node-level DP, z = $z ($m)"
    "$t" report "$out/node" --rows label --cols adversary.attack --where privacy.noise_multiplier=$z --metric $m
  done
done
echo "## ε reached (largest over honest nodes; the same under every attack)"
"$t" report "$out/sample" --rows label --cols privacy.target_epsilon --where adversary.attack=none --metric honest_max_epsilon
"$t" report "$out/node" --rows label --cols privacy.noise_multiplier --where adversary.attack=none --metric honest_max_epsilon
echo "## ε by RDP and by PLD for the same noise (each node's, from the config: nothing is trained)"
for p in sample node audit lira; do
  "$t" privacy --config "privacy/$p-quick" | grep -v ': no DP$' | sort -u -t: -k2
done
echo "## delta_max (weight on Byzantine senders): no DP, DP-SGD ε = 4 and 1, node-level z = 1"
"$t" report "$out/baseline" --rows label --cols adversary.attack --metric delta_max
for e in 4 1; do
  "$t" report "$out/sample" --rows label --cols adversary.attack --where privacy.target_epsilon=$e --metric delta_max
done
"$t" report "$out/node" --rows label --cols adversary.attack --where privacy.noise_multiplier=1 --metric delta_max
