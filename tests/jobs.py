"""jobs.py: the job the across-hosts tests run, and what they check of it.

A hogwild softmax on the synthetic data set, 2 workers, 4 epochs: about a
second, and a final accuracy that repeats to within a tenth of a point, so
"within 1 point of the same job on one host" can be checked."""
import json
import os
import subprocess
import sys

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


def check(cond, what):
    if not cond:
        sys.exit("FAILED: " + what)


def summary(folder):
    with open(os.path.join(folder, "summary.json")) as f:
        return json.load(f)


def write_config(work):
    config = os.path.join(work, "job.ini")
    with open(config, "w") as f:
        f.write(CONFIG)
    return config


def one_host(asgd, work, config):
    """The same job as one asgd train on this host: its final accuracy."""
    run = subprocess.run([asgd, "train", config, f"experiment.out={work}/one"],
                         capture_output=True, text=True, timeout=300)
    check(run.returncode == 0, "asgd train: " + run.stderr)
    return summary(run.stdout.strip().splitlines()[-1])["final_test_acc"]


def finish(started, what):
    """Waits for every (name, Popen) of a job; each must exit 0."""
    for name, p in started:
        try:
            err = p.communicate(timeout=180)[1]
        except subprocess.TimeoutExpired:
            sys.exit(f"FAILED: {what}: {name} did not end")
        check(p.returncode == 0, f"{what}: {name} exited {p.returncode}: {err}")


def expect_job(folder, reference, what):
    """The evaluator's folder is a whole run: all pushes in, the accuracy of
    the job on one host within 1 point."""
    s = summary(folder)
    check(s["complete"], f"{what}: summary not complete: {s.get('error')}")
    check(s["pushes"] == PUSHES, f"{what}: {s['pushes']} pushes, expected {PUSHES}")
    check(abs(s["final_test_acc"] - reference) <= 0.01,
          f"{what}: accuracy {s['final_test_acc']} against {reference} on one host")
    for name in ("config.ini", "log.txt", "eval.csv", "ps-0.json", "model.npy"):
        check(os.path.exists(os.path.join(folder, name)), f"{what}: no {name}")
    print(f"{what}: test accuracy {s['final_test_acc']:.4f} (one host {reference:.4f}), "
          f"{s['samples_per_s']:.0f} samples/s, staleness {s['staleness_mean']:.2f}")
    return s
