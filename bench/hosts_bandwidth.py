#!/usr/bin/env python3
"""hosts_bandwidth.py: what a 100 Mbit/s link per worker does to a job.

Hogwild, the MLP 256-128 on Fashion-MNIST (0.94 MB of parameters, so a
pull or a push is 7.5 ms at 1 Gbit/s and 75 ms at 100 Mbit/s), 2 workers,
EPOCHS epochs, run four ways side by side, ROUNDS times each:
  loopback    asgd train over tcp on this host
  hosts       shard and evaluator on host 0, a worker on each of hosts 1
              and 2 (network namespaces, tests/hosts.py), links unlimited
  100mbit     the same with tbf at 100 Mbit/s on each worker's link
  sim         the simulator with [sim] bandwidth = 12.5e6 bytes/s, its
              compute time per step taken from the loopback runs and
              its workers' start spread from the 100mbit runs' (without
              one, the simulated workers start together and run in lock
              step: their pushes land at once, and half find the
              other's, a mean staleness of 0.5 where the real job's is 1)
Prints a Markdown table of samples/s and mean staleness (medians over the
rounds, with their ranges). Needs root (namespaces).
  sudo bench/hosts_bandwidth.py [EPOCHS] [ROUNDS]"""
import csv
import json
import os
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests"))
from hosts import Hosts  # noqa: E402

ASGD = os.path.join(ROOT, "build", "asgd")
EPOCHS = sys.argv[1] if len(sys.argv) > 1 else "1"
ROUNDS = int(sys.argv[2]) if len(sys.argv) > 2 else 3
OVERRIDES = [f"train.epochs={EPOCHS}", "cluster.workers=2", "cluster.transport=tcp",
             "eval.every=0"]
CONFIG = os.path.join(ROOT, "experiments", "hogwild", "config.ini")


def summary(folder):
    with open(os.path.join(folder, "summary.json")) as f:
        return json.load(f)


def train(work, *extra):
    out = subprocess.run([ASGD, "train", CONFIG, f"experiment.out={work}", *OVERRIDES, *extra],
                         capture_output=True, text=True, check=True).stdout
    return summary(out.strip().splitlines()[-1])


def first_steps(job):
    """Each worker's first step, in seconds after the first of them: the
    first row of its steps-K.csv (Unix time) in its host's folder."""
    first = []
    for k in (0, 1):
        with open(os.path.join(job, str(k + 1), f"steps-{k}.csv")) as f:
            first.append(float(next(csv.DictReader(f))["time_s"]))
    return [t - min(first) for t in first]


def across(h, work, name):
    tf = {"ps": [f"{h.addresses[0]}:2222"], "chief": [f"{h.addresses[0]}:2223"],
          "worker": [f"{h.addresses[k]}:2222" for k in (1, 2)]}
    procs = []
    for host, kind, index in [(0, "ps", 0), (0, "chief", 0), (1, "worker", 0), (2, "worker", 1)]:
        env = dict(os.environ, TF_CONFIG=json.dumps({"cluster": tf, "task": {
            "type": kind, "index": index}}))
        procs.append(h.popen(host, [ASGD, "role", CONFIG, f"--run_dir={work}/{name}/{host}",
                                    *OVERRIDES], env=env, stderr=subprocess.DEVNULL))
    for p in procs:
        if p.wait(timeout=600) != 0:
            sys.exit(f"{name}: a role failed")
    return summary(f"{work}/{name}/0")


def main():
    runs = {k: [] for k in ("loopback", "hosts", "100mbit", "sim")}
    with tempfile.TemporaryDirectory() as work, Hosts(3) as h:
        for r in range(ROUNDS):
            loop = train(work)
            runs["loopback"].append(loop)
            runs["hosts"].append(across(h, work, f"hosts-{r}"))
        h.limit(1, "100mbit")
        h.limit(2, "100mbit")
        for r in range(ROUNDS):
            runs["100mbit"].append(across(h, work, f"limited-{r}"))
        # a step's compute on this host: the loopback runs' time per minibatch per worker
        batch = 64
        step = statistics.median(2 * batch / s["samples_per_s"] for s in runs["loopback"])
        # the workers' start spread: their first steps in the 100mbit runs
        starts = [first_steps(f"{work}/limited-{r}") for r in range(ROUNDS)]
        start_mean = statistics.median(statistics.mean(s) for s in starts)
        start_sd = statistics.median(statistics.pstdev(s) for s in starts)
        for r in range(ROUNDS):
            runs["sim"].append(train(work, "experiment.mode=sim", f"sim.compute_mean={step}",
                                     "sim.bandwidth=12.5e6", f"sim.startup_mean={start_mean}",
                                     f"sim.startup_sd={start_sd}", f"experiment.seed={r + 1}"))
    print(f"| setting | samples/s (median of {ROUNDS}) | range | staleness mean | range |")
    print("|---|---|---|---|---|")
    for name, rs in runs.items():
        rate = [s["samples_per_s"] for s in rs]
        stale = [s["staleness_mean"] for s in rs]
        print(f"| {name} | {statistics.median(rate):,.0f} | {min(rate):,.0f}-{max(rate):,.0f} "
              f"| {statistics.median(stale):.2f} | {min(stale):.2f}-{max(stale):.2f} |")
    print(f"\nsim.compute_mean = {step * 1e3:.3f} ms (from the loopback runs), "
          f"sim.startup_mean = {start_mean * 1e3:.1f} ms and startup_sd = {start_sd * 1e3:.1f} ms "
          "(the 100mbit runs' first steps)")


if __name__ == "__main__":
    main()
