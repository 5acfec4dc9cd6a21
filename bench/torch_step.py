#!/usr/bin/env python3
"""PyTorch (eager) twin of bench/bench_step.c: samples per second of one
training step on a fixed random batch, for bench/step_speed.sh.

Same models (MLP 784-256-128-10; the TensorFlow tutorial CNN: conv 5x5x32
same, pool 2, conv 5x5x64 same, pool 2, dense 1024, dense 10), same step:
the batch copied from host memory to the device, forward, cross-entropy,
backward, plain SGD, and the loss read back to the host (asgd's step
returns it). With --graphs (CUDA only), forward, backward and the SGD step
are captured once in a CUDA graph and replayed each step, after the batch
is copied into the graph's input: PyTorch's launch overhead gone, the
stronger anchor. FP32 throughout: TF32 is switched off for matmul and cuDNN,
as asgd's cuBLAS calls use none. Prints one line:
`samples_per_s=... step_ms=...` (median of REPS timings of STEPS steps)."""
import argparse
import statistics
import time

import torch


def build(model):
    if model == "mlp":
        return torch.nn.Sequential(
            torch.nn.Linear(784, 256), torch.nn.ReLU(),
            torch.nn.Linear(256, 128), torch.nn.ReLU(),
            torch.nn.Linear(128, 10))
    return torch.nn.Sequential(
        torch.nn.Unflatten(1, (1, 28, 28)),
        torch.nn.Conv2d(1, 32, 5, padding=2), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
        torch.nn.Conv2d(32, 64, 5, padding=2), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
        torch.nn.Flatten(),
        torch.nn.Linear(7 * 7 * 64, 1024), torch.nn.ReLU(),
        torch.nn.Linear(1024, 10))


def capture(net, opt, loss_fn, x, y, dev):
    """The step as a CUDA graph (PyTorch's whole-network capture): warm-up
    on a side stream, then forward, backward and SGD captured with static
    input, target, loss and gradients."""
    sx, sy = x.to(dev), y.to(dev)
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            opt.zero_grad(set_to_none=True)
            loss_fn(net(sx), sy).backward()
            opt.step()
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    opt.zero_grad(set_to_none=True)
    with torch.cuda.graph(graph):
        static_loss = loss_fn(net(sx), sy)
        static_loss.backward()
        opt.step()

    def step():
        sx.copy_(x, non_blocking=True)
        sy.copy_(y, non_blocking=True)
        graph.replay()
        return static_loss.item()
    return step


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", choices=["mlp", "cnn"], required=True)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--threads", type=int, default=0)
    ap.add_argument("--graphs", action="store_true")
    args = ap.parse_args()
    if args.threads > 0:
        torch.set_num_threads(args.threads)
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cudnn.benchmark = True
    torch.manual_seed(1)
    dev = torch.device(args.device)
    net = build(args.model).to(dev)
    opt = torch.optim.SGD(net.parameters(), lr=0.01)
    loss_fn = torch.nn.CrossEntropyLoss()
    x = torch.randn(args.batch, 784)
    y = torch.randint(0, 10, (args.batch,))
    if dev.type == "cuda":
        x, y = x.pin_memory(), y.pin_memory()

    def step():
        xb, yb = x.to(dev), y.to(dev)
        opt.zero_grad(set_to_none=True)
        loss = loss_fn(net(xb), yb)
        loss.backward()
        opt.step()
        return loss.item()

    if args.graphs:
        step = capture(net, opt, loss_fn, x, y, dev)

    def sync():
        if dev.type == "cuda":
            torch.cuda.synchronize()

    for _ in range(10):
        step()
    sync()
    times = []
    for _ in range(args.reps):
        t0 = time.perf_counter()
        for _ in range(args.steps):
            step()
        sync()
        times.append((time.perf_counter() - t0) / args.steps)
    t = statistics.median(times)
    print(f"samples_per_s={args.batch / t:.1f} step_ms={t * 1e3:.4f}")


if __name__ == "__main__":
    main()
