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
from jobs import check, expect_job, finish, one_host, write_config  # noqa: E402

ASGD = os.path.abspath(sys.argv[1])
PORT = 2222   # every host has its own ports


def job_with_flags(h, config, work):
    ps_hosts = f"--ps_hosts={h.hostnames[0]}:{PORT}"
    worker_hosts = f"--worker_hosts={h.hostnames[1]}:0,{h.hostnames[2]}:0"
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
        env = dict(os.environ, RANK=str(rank), WORLD_SIZE="4", MASTER_ADDR=h.hostnames[0],
                   MASTER_PORT=str(PORT))
        started.append((f"rank {rank}", h.popen(host, [ASGD, "role", config,
                                                       f"--run_dir={work}/torchrun/host-{host}"],
                                                env=env, stderr=subprocess.PIPE, text=True)))
    finish(started, "torchrun")
    return f"{work}/torchrun/host-0"


def main():
    with tempfile.TemporaryDirectory(prefix="asgd-hosts-") as work:
        config = write_config(work)
        reference = one_host(ASGD, work, config)
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
