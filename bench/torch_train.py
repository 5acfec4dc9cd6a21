#!/usr/bin/env python3
"""PyTorch (CPU) twin of asgd's sequential trainer, for bench/cpu_train.sh.

Same data (Fashion-MNIST from Debian's dataset-fashion-mnist, scaled to
[0, 1]), same model (softmax or MLP with ReLU hidden layers, He init), same
loss, plain SGD, minibatches drawn from a fresh permutation each pass, the
same batch and thread count. Only the training loop is timed (data loading
and evaluation are not), as asgd's samples_per_s does. Prints one line:
`samples_per_s=... test_acc=...`."""
import argparse
import gzip
import time

import numpy as np
import torch

DATA = "/usr/share/datasets/fashion-mnist"


def idx(path):
    with gzip.open(path, "rb") as f:
        raw = f.read()
    ndims = raw[3]
    dims = [int.from_bytes(raw[4 + 4 * i: 8 + 4 * i], "big") for i in range(ndims)]
    return np.frombuffer(raw, dtype=np.uint8, offset=4 + 4 * ndims).reshape(dims)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", choices=["softmax", "mlp"], required=True)
    ap.add_argument("--hidden", default="256,128")
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--epochs", type=float, default=1)
    ap.add_argument("--lr", type=float, default=0.05)
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(1)

    x = torch.from_numpy(idx(f"{DATA}/train-images-idx3-ubyte.gz").reshape(-1, 784).astype(np.float32) / 255)
    y = torch.from_numpy(idx(f"{DATA}/train-labels-idx1-ubyte.gz").astype(np.int64))
    tx = torch.from_numpy(idx(f"{DATA}/t10k-images-idx3-ubyte.gz").reshape(-1, 784).astype(np.float32) / 255)
    ty = torch.from_numpy(idx(f"{DATA}/t10k-labels-idx1-ubyte.gz").astype(np.int64))
    mean, std = x.mean(), x.std()
    x, tx = (x - mean) / std, (tx - mean) / std

    sizes = [784] + ([int(h) for h in args.hidden.split(",")] if args.model == "mlp" else []) + [10]
    layers = []
    for i in range(len(sizes) - 1):
        lin = torch.nn.Linear(sizes[i], sizes[i + 1])
        torch.nn.init.kaiming_normal_(lin.weight, nonlinearity="relu")
        torch.nn.init.zeros_(lin.bias)
        layers.append(lin)
        if i < len(sizes) - 2:
            layers.append(torch.nn.ReLU())
    net = torch.nn.Sequential(*layers)
    opt = torch.optim.SGD(net.parameters(), lr=args.lr)
    loss_fn = torch.nn.CrossEntropyLoss()

    n = x.shape[0]
    steps = int(np.ceil(args.epochs * n / args.batch))
    order, pos = torch.randperm(n), 0
    start = time.perf_counter()
    for _ in range(steps):
        if pos + args.batch > n:
            order, pos = torch.randperm(n), 0
        idx_b = order[pos:pos + args.batch]
        pos += args.batch
        xb, yb = x.index_select(0, idx_b), y.index_select(0, idx_b)
        opt.zero_grad(set_to_none=True)
        loss = loss_fn(net(xb), yb)
        loss.backward()
        opt.step()
    elapsed = time.perf_counter() - start

    with torch.no_grad():
        acc = (net(tx).argmax(1) == ty).float().mean().item()
    print(f"samples_per_s={steps * args.batch / elapsed:.1f} test_acc={acc:.4f}")


if __name__ == "__main__":
    main()
