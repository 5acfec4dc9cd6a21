#!/usr/bin/env python3
"""test_hosts.py ASGD: jobs across three hosts, each a network namespace
(hosts.py): the shard and the evaluator on host 0, a worker on each of
hosts 1 and 2, reaching one another only over the bridge. The roles are
placed by TensorFlow's flags, by TF_CONFIG, and by torchrun's variables
(asgd role), once more with each worker's link limited to 100 Mbit/s.
A shard's rank on a host that is not the shards' is refused, and the
namespaces a killed test left are removed.
Each job must complete, leave a whole run folder on host 0, and reach the
test accuracy of the same job on one host (asgd train) within 1 point.
Exit 77 (skipped) where namespaces cannot be made."""
import json
import os
import select
import subprocess
import sys
import tempfile
import time

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


def shard_off_its_host_is_refused(h, config, work):
    """Rank 1 of a PyTorchJob with two shards, on a host that is not
    MASTER_ADDR's (a Worker pod): refused at once, exit 2. It listened on
    every interface of its own host while its peers looked for it on host 0,
    and the job waited for the timeout. A shard given another host's name
    by its flags says so (a Service's name may forward to it), and runs."""
    env = dict(os.environ, RANK="1", WORLD_SIZE="5", MASTER_ADDR=h.hostnames[0],
               MASTER_PORT=str(PORT))
    p = h.popen(1, [ASGD, "role", config, "cluster.servers=2", f"--run_dir={work}/off"],
                env=env, stderr=subprocess.PIPE, text=True)
    _, err = p.communicate(timeout=60)
    check(p.returncode == 2, f"a shard off its host exits 2, not {p.returncode}: {err}")
    check(f"RANK 1 is shard 1, but its address {h.hostnames[0]}:{PORT + 2} is not this pod's "
          f"({h.hostnames[0]} is {h.addresses[0]}, no address of this host)" in err,
          f"it says why: {err}")
    p = h.popen(1, [ASGD, "ps", config, f"--ps_hosts={h.hostnames[0]}:{PORT}",
                    f"--worker_hosts={h.hostnames[1]}:0", "--task_index=0",
                    f"--run_dir={work}/elsewhere"], stderr=subprocess.PIPE, text=True)
    said, deadline = "", time.monotonic() + 60
    while "resolves elsewhere" not in said and time.monotonic() < deadline:
        if select.select([p.stderr], [], [], 1)[0]:
            said += p.stderr.readline()
    p.kill()
    p.wait()
    check(f"asgd ps 0: its address {h.hostnames[0]}:{PORT} resolves elsewhere" in said,
          f"a shard given another host's name says so: {said}")


def stale_hosts_are_removed():
    """A namespace of this process's id but another start time (a test
    killed, its id given to this one since) is removed, and what ran in it
    killed: it was kept, and the test skipped on "File exists"."""
    import hosts
    stale = f"{hosts.PREFIX}{os.getpid()}.1-sw"
    if subprocess.run(["ip", "netns", "add", stale], capture_output=True).returncode != 0:
        raise Unavailable(f"cannot make a network namespace {stale}")
    inside = subprocess.Popen(["ip", "netns", "exec", stale, "sleep", "300"])
    try:
        for _ in range(100):   # in it before the next test looks (or it is not seen there)
            pids = subprocess.run(["ip", "netns", "pids", stale], capture_output=True,
                                  text=True).stdout.split()
            if str(inside.pid) in pids:
                break
            time.sleep(0.05)
        with Hosts(1):
            pass
        check(inside.wait(timeout=10) == -9, "the process in a stale namespace killed")
        listing = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True)
        check(stale not in listing.stdout, f"stale namespace {stale} removed")
    finally:
        inside.kill()
        subprocess.run(["ip", "netns", "del", stale], capture_output=True)


def main():
    with tempfile.TemporaryDirectory(prefix="asgd-hosts-") as work:
        config = write_config(work)
        reference = one_host(ASGD, work, config)
        try:
            stale_hosts_are_removed()
            with Hosts(3) as h:
                shard_off_its_host_is_refused(h, config, work)
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
