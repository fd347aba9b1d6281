#!/usr/bin/env python3
"""Which DMTT gate stops the Byzantine models, per round.

Reads a run directory's metrics.jsonl (one line per node and round; DMTT's per-sender scores "gate" — the
mask of gates failed: 1 model compatibility, 2 topology trust, 4 norm — and
"weight") and prints, per round, over every (honest receiver, Byzantine
sender) pair the receiver scored: how many failed each gate, how many
passed all three, how many got weight, and δ_max (the largest total weight an
honest node gave Byzantine senders).

    python3 docs/results/dmtt/gates.py RUN_DIR [RUN_DIR ...]
"""
import json
import sys


def tally(run):
    """One row per round; metrics.jsonl has one line per node and round."""
    acc = {}
    with open(run + "/metrics.jsonl") as f:
        for line in f:
            n = json.loads(line)
            if n["byzantine"]:
                continue
            a = acc.setdefault(n["round"], {"pairs": 0, "model": 0, "trust": 0, "norm": 0,
                                            1: 0, 2: 0, 4: 0, "pass": 0, "weighted": 0, "dmax": 0.0})
            w = 0.0
            for s in n.get("scores") or []:
                if not s["byzantine"]:
                    continue
                if s["kind"] == "gate":
                    m = int(s["value"])
                    a["pairs"] += 1
                    a["model"] += bool(m & 1)
                    a["trust"] += bool(m & 2)
                    a["norm"] += bool(m & 4)
                    a["pass"] += m == 0
                    if m in (1, 2, 4):
                        a[m] += 1
                elif s["kind"] == "weight":
                    a["weighted"] += 1
                    w += s["value"]
            a["dmax"] = max(a["dmax"], w)
    return [(r, a["pairs"], a["model"], a["trust"], a["norm"], a[1], a[2], a[4], a["pass"], a["weighted"], a["dmax"])
            for r, a in sorted(acc.items())]


def main():
    for run in sys.argv[1:]:
        print(run)
        print("| round | pairs | fail model | fail trust | fail norm | only model | only trust | only norm | pass all | weighted | δ_max |")
        print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        for row in tally(run):
            print("| %d | %d | %d | %d | %d | %d | %d | %d | %d | %d | %.4f |" % row)


if __name__ == "__main__":
    main()
