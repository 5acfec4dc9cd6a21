#!/usr/bin/env python3
"""test_hosts.py ASGD: jobs across three hosts, each a network namespace
(hosts.py): the shard and the evaluator on host 0, a worker on each of
hosts 1 and 2, reaching one another only over the bridge. The roles are
placed by TensorFlow's flags, by TF_CONFIG, and by torchrun's variables
(asgd role), once more with each worker's link limited to 100 Mbit/s.
Each job must complete, leave a whole run folder on host 0, and reach the
test accuracy of the same job on one host (asgd train) within 1 point.
Exit 77 (skipped) where namespaces cannot be made."""
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from hosts import Hosts, Unavailable  # noqa: E402

ASGD = os.path.abspath(sys.argv[1])
CONFIG = """[experiment]
name = hosts
[data]
dataset = synthetic
[model]
type = softmax
[train]
algorithm = hogwild
epochs = 4
lr = 0.1
[eval]
every = 0.5
[cluster]
workers = 2
transport = tcp
"""
PUSHES = -(-4 * 10000 // 64)   # both workers' budgets: 4 epochs of 10,000, batch 64
PORT = 2222                     # every host has its own ports


def check(cond, what):
    if not cond:
        sys.exit("FAILED: " + what)


def summary(folder):
    with open(os.path.join(folder, "summary.json")) as f:
        return json.load(f)


def one_host(work, config):
    """The same job as one asgd train on this host: its final accuracy."""
    run = subprocess.run([ASGD, "train", config, f"experiment.out={work}/one"],
                         capture_output=True, text=True, timeout=300)
    check(run.returncode == 0, "asgd train: " + run.stderr)
    return summary(run.stdout.strip().splitlines()[-1])["final_test_acc"]


def finish(started, what):
    for name, p in started:
        try:
            err = p.communicate(timeout=180)[1]
        except subprocess.TimeoutExpired:
            sys.exit(f"FAILED: {what}: {name} did not end")
        check(p.returncode == 0, f"{what}: {name} exited {p.returncode}: {err}")


def expect_job(folder, reference, what):
    """Host 0's folder is a whole run: all pushes in, accuracy as on one host."""
    s = summary(folder)
    check(s["complete"], f"{what}: summary not complete: {s.get('error')}")
    check(s["pushes"] == PUSHES, f"{what}: {s['pushes']} pushes, expected {PUSHES}")
    check(abs(s["final_test_acc"] - reference) <= 0.01,
          f"{what}: accuracy {s['final_test_acc']} against {reference} on one host")
    for name in ("config.ini", "log.txt", "eval.csv", "ps-0.json", "model.npy"):
        check(os.path.exists(os.path.join(folder, name)), f"{what}: no {name}")
    print(f"{what}: test accuracy {s['final_test_acc']:.4f} (one host {reference:.4f}), "
          f"{s['samples_per_s']:.0f} samples/s, staleness {s['staleness_mean']:.2f}")


def job_with_flags(h, config, work):
    ps_hosts = f"--ps_hosts={h.addresses[0]}:{PORT}"
    worker_hosts = f"--worker_hosts={h.addresses[1]}:0,{h.addresses[2]}:0"
    folder = lambda k: f"--run_dir={work}/flags/host-{k}"  # noqa: E731
    started = [
        ("ps", h.popen(0, [ASGD, "ps", config, ps_hosts, worker_hosts, "--task_index=0",
                           folder(0)], stderr=subprocess.PIPE, text=True)),
        ("evaluator", h.popen(0, [ASGD, "evaluator", config, ps_hosts, worker_hosts,
                                  folder(0)], stderr=subprocess.PIPE, text=True))]
    for w in range(2):
        started.append((f"worker {w}", h.popen(w + 1, [ASGD, "worker", config, ps_hosts,
                                                       worker_hosts, f"--task_index={w}",
                                                       folder(w + 1)],
                                               stderr=subprocess.PIPE, text=True)))
    finish(started, "flags")
    for w in range(2):   # each worker's steps stay on its own host
        check(os.path.exists(f"{work}/flags/host-{w + 1}/steps-{w}.csv"), "worker's steps")
    return f"{work}/flags/host-0"


def job_with_tf_config(h, config, work, name):
    cluster = {"ps": [f"{h.addresses[0]}:{PORT}"], "chief": [f"{h.addresses[0]}:{PORT + 1}"],
               "worker": [f"{h.addresses[k]}:{PORT}" for k in (1, 2)]}
    tasks = [(0, "ps", 0), (0, "chief", 0), (1, "worker", 0), (2, "worker", 1)]
    started = []
    for host, kind, index in tasks:
        env = dict(os.environ, TF_CONFIG=json.dumps({"cluster": cluster, "task": {
            "type": kind, "index": index}, "environment": "cloud"}))
        started.append((f"{kind} {index}", h.popen(host, [ASGD, "role", config,
                                                          f"--run_dir={work}/{name}/host-{host}"],
                                                   env=env, stderr=subprocess.PIPE, text=True)))
    finish(started, name)
    return f"{work}/{name}/host-0"


def job_with_torchrun(h, config, work):
    started = []
    for rank, host in enumerate((0, 0, 1, 2)):   # shard, evaluator, two workers
        env = dict(os.environ, RANK=str(rank), WORLD_SIZE="4", MASTER_ADDR=h.addresses[0],
                   MASTER_PORT=str(PORT))
        started.append((f"rank {rank}", h.popen(host, [ASGD, "role", config,
                                                       f"--run_dir={work}/torchrun/host-{host}"],
                                                env=env, stderr=subprocess.PIPE, text=True)))
    finish(started, "torchrun")
    return f"{work}/torchrun/host-0"


def main():
    with tempfile.TemporaryDirectory(prefix="asgd-hosts-") as work:
        config = os.path.join(work, "job.ini")
        with open(config, "w") as f:
            f.write(CONFIG)
        reference = one_host(work, config)
        try:
            with Hosts(3) as h:
                expect_job(job_with_flags(h, config, work), reference, "flags")
                expect_job(job_with_tf_config(h, config, work, "tf"), reference, "TF_CONFIG")
                expect_job(job_with_torchrun(h, config, work), reference, "torchrun")
                h.limit(1, "100mbit")
                h.limit(2, "100mbit")
                expect_job(job_with_tf_config(h, config, work, "limited"), reference,
                           "TF_CONFIG at 100 Mbit/s")
        except Unavailable as why:
            print(f"skipped: {why}")
            sys.exit(77)
    print("ok: flags, TF_CONFIG, torchrun, and 100 Mbit/s links across 3 hosts")


if __name__ == "__main__":
    main()
