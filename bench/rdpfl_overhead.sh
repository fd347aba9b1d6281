#!/usr/bin/env bash
# What R-DPFL's prediction and clipping cost per round (target: well under
# 5 % of a round). Runs the same experiment — 10 nodes, complete graph,
# Dirichlet 0.3 on 6,000 MNIST images, the paper's local step (1 epoch, SGD
# batch 64, lr 0.01), LeNet-5, 3 sign-flipping Byzantine nodes — three
# times, one after the other: FedAvg, R-DPFL on the median with prediction
# and clipping off, and the full R-DPFL on the median. It prints, per round
# (mean over ROUNDS rounds after the first), the wall-clock round, the
# node-seconds of local training and of Combine, and the share of the
# round that prediction and clipping take: the difference of the two
# R-DPFL Combines over the round's node-seconds (training + combine + the
# rest, estimated as wall-clock × cores).
#
#   bench/rdpfl_overhead.sh [ROUNDS]     (default 6)
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-6}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
go build -o "$out/trellis" ./cmd/trellis
base="nodes = 10
rounds = $rounds
eval_every = $rounds
[data]
samples = 6000
[partition]
method = \"dirichlet\"
alpha = 0.3
[model]
kind = \"lenet5\"
[training]
lr = 0.01
batch = 64
[adversary]
fraction = 0.3
attack = \"sign_flip\"
[evaluation]
global_test = 0"
printf '%s\n[strategy]\nname = "fedavg"\n' "$base" >"$out/fedavg.toml"
printf '%s\n[strategy]\nname = "rdpfl"\nrule = "median"\nprediction = false\nclipping = false\n' "$base" >"$out/plain.toml"
printf '%s\n[strategy]\nname = "rdpfl"\nrule = "median"\n' "$base" >"$out/full.toml"
for v in fedavg plain full; do
  "$out/trellis" run "$out/$v.toml" -o "$out/run-$v" --quiet >/dev/null
done
python3 - "$out" "$(nproc)" <<'PY'
import glob, json, sys, os
out, cores = sys.argv[1], int(sys.argv[2])
def load(v):
    path = glob.glob(os.path.join(out, f"run-{v}", "**", "timings.jsonl"), recursive=True)[0]
    rows = [json.loads(l) for l in open(path)][1:]
    k = len(rows)
    return {m: sum(r[m] for r in rows) / k for m in ("round_seconds", "train_node_seconds", "combine_node_seconds")}
t = {v: load(v) for v in ("fedavg", "plain", "full")}
print(f"{'strategy':<28}{'round s':>10}{'train node-s':>14}{'combine node-s':>16}")
for v, name in (("fedavg", "fedavg"), ("plain", "rdpfl median, no pred/clip"), ("full", "rdpfl median, full")):
    r = t[v]
    print(f"{name:<28}{r['round_seconds']:>10.3f}{r['train_node_seconds']:>14.3f}{r['combine_node_seconds']:>16.4f}")
extra = t["full"]["combine_node_seconds"] - t["plain"]["combine_node_seconds"]
round_ns = t["full"]["round_seconds"] * cores
print(f"prediction + clipping: {extra*1000:.2f} ms node-time per round = {100*extra/round_ns:.2f} % of the round ({cores} cores)")
PY
