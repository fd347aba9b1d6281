#!/usr/bin/env python3
"""PyTorch baseline for one simulator round (bench/round_compare.sh).

A straightforward PyTorch loop doing the work of `go run ./bench/round`:
N clients, each with its own MLP 784-256-128-10, one local epoch over its
training indices (batch 32, SGD lr 0.01), clients one after another, then
FedAvg: every client averages its model with its neighbors' (the 5-regular
graph exported by bench/round). Prints seconds per round.
"""
import argparse
import gzip
import json
import time

import numpy as np
import torch
import torch.nn as nn


def idx(path, offset):
    with gzip.open(path) as f:
        return np.frombuffer(f.read(), np.uint8, offset=offset)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("partition")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--mnist", default="data/mnist")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(1)

    x = idx(f"{args.mnist}/train-images-idx3-ubyte.gz", 16).reshape(-1, 784).astype(np.float32) / 255
    x = torch.from_numpy((x - 0.1307) / 0.3081)
    y = torch.from_numpy(idx(f"{args.mnist}/train-labels-idx1-ubyte.gz", 8).astype(np.int64))
    part = json.load(open(args.partition))
    train = [torch.tensor(t, dtype=torch.long) for t in part["train"]]
    neighbors = part["neighbors"]
    n = len(train)

    def mlp():
        return nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 128), nn.ReLU(), nn.Linear(128, 10))

    models = [mlp() for _ in range(n)]
    init = models[0].state_dict()
    for m in models[1:]:
        m.load_state_dict(init)
    opts = [torch.optim.SGD(m.parameters(), lr=0.01) for m in models]
    loss_fn = nn.CrossEntropyLoss()
    print(f"torch {torch.__version__}, {n} clients, threads {torch.get_num_threads()}")
    best = None
    for r in range(args.rounds):
        start = time.perf_counter()
        for m, opt, ids in zip(models, opts, train):
            perm = ids[torch.randperm(len(ids))]
            for b in range(0, len(perm), 32):
                bi = perm[b:b + 32]
                opt.zero_grad()
                loss_fn(m(x[bi]), y[bi]).backward()
                opt.step()
        with torch.no_grad():
            flat = [torch.nn.utils.parameters_to_vector(m.parameters()) for m in models]
            for i, m in enumerate(models):
                avg = torch.stack([flat[i]] + [flat[j] for j in neighbors[i]]).mean(0)
                torch.nn.utils.vector_to_parameters(avg, m.parameters())
        secs = time.perf_counter() - start
        best = secs if best is None else min(best, secs)
        print(f"round {r}: {secs:.3f} s")
    print(f"seconds_per_round {best:.3f}")


if __name__ == "__main__":
    main()
