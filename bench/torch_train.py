#!/usr/bin/env python3
"""PyTorch CPU baseline for trellis's training-step benchmarks.

Runs the same architectures, batch sizes and optimizer as
nn/bench_test.go (BenchmarkTrainStepMLP, BenchmarkTrainStepFEMNISTCNN) and
prints one line per model: `<name> <samples/s>`. Needs Debian's python3-torch
(run with /usr/bin/python3). Called by bench/torch_compare.sh.
"""
import argparse
import time

import torch
import torch.nn as nn


def mlp():
    return nn.Sequential(
        nn.Flatten(), nn.Linear(784, 256), nn.ReLU(),
        nn.Linear(256, 128), nn.ReLU(), nn.Linear(128, 10))


def femnist_cnn():
    # the LIGHTYEAR paper: the FEMNIST CNN, 62 classes.
    return nn.Sequential(
        nn.Conv2d(1, 32, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(32, 64, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(3136, 512), nn.ReLU(), nn.Dropout(0.5),
        nn.Linear(512, 62))


def lenet5(channels):
    # nn/spec.go: LeNet-5 with ReLU and max pooling; 28×28 inputs padded by 2.
    return nn.Sequential(
        nn.Conv2d(channels, 6, 5, padding=2 if channels == 1 else 0), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(6, 16, 5), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(400, 120), nn.ReLU(), nn.Linear(120, 84), nn.ReLU(),
        nn.Linear(84, 10))


def bench_train(model, shape, classes, batch, seconds):
    torch.manual_seed(1)
    x = torch.rand(batch, *shape)
    y = torch.randint(0, classes, (batch,))
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    loss_fn = nn.CrossEntropyLoss()
    model.train()

    def step():
        opt.zero_grad(set_to_none=False)
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()

    for _ in range(5):
        step()
    n, start = 0, time.perf_counter()
    while True:
        step()
        n += 1
        elapsed = time.perf_counter() - start
        if elapsed >= seconds and n >= 5:
            return n * batch / elapsed


def bench_sgemm(seconds):
    a, b = torch.rand(512, 512), torch.rand(512, 512)
    torch.mm(a, b)
    n, start = 0, time.perf_counter()
    while True:
        torch.mm(a, b)
        n += 1
        elapsed = time.perf_counter() - start
        if elapsed >= seconds:
            return 2 * 512 ** 3 * n / elapsed / 1e9


WORKLOADS = {
    "mlp_b32": lambda s: bench_train(mlp(), (784,), 10, 32, s),
    "cnn_b64": lambda s: bench_train(femnist_cnn(), (1, 28, 28), 62, 64, s),
    "lenet5_28_b64": lambda s: bench_train(lenet5(1), (1, 28, 28), 10, 64, s),
    "lenet5_32_b64": lambda s: bench_train(lenet5(3), (3, 32, 32), 10, 64, s),
    "sgemm512_gflops": bench_sgemm,
}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--seconds", type=float, default=3.0)
    ap.add_argument("--only", choices=sorted(WORKLOADS), help="run one workload")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    print(f"torch {torch.__version__} threads {torch.get_num_threads()}")
    for name, run in WORKLOADS.items():
        if args.only in (None, name):
            print(f"{name} {run(args.seconds):.1f}")


if __name__ == "__main__":
    main()
