#!/usr/bin/env python3
"""test_launchers.py ASGD mpirun|mpich|slurm: a job started by a real launcher
across three hosts (network namespaces, hosts.py), one `asgd role` per
rank, placed by nothing but the launcher's environment.

mpirun: Open MPI starts 4 ranks here (--allow-run-as-root --oversubscribe,
MASTER_ADDR passed with -x); each rank runs on its host, ranks 0 and 1
(the shard and the evaluator) on host 0, rank 2 on host 1, rank 3 on host 2.

mpich: the same with MPICH's mpiexec (Hydra: PMI_RANK and PMI_SIZE,
MASTER_ADDR passed with -genv).

slurm: a Slurm cluster of three nodes, one per host: munged with a key of
its own, slurmctld on host 0 and a slurmd on each host, from a generated
slurm.conf; experiments/slurm/job.sbatch goes in through sbatch --wait
and runs srun across the nodes (node list asgdh[0-2]); the nodes share
this file system, so the run folder is one.

Each job must complete with the accuracy of the same job on one host
within 1 point. Exit 77 (skipped, with the reason) where the launcher is
not installed or its daemons cannot start; whatever starts is stopped."""
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from hosts import Hosts, Unavailable  # noqa: E402
from jobs import check, expect_job, one_host, write_config  # noqa: E402

ASGD = os.path.abspath(sys.argv[1])
SOURCE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RANK_HOSTS = (0, 0, 1, 2)   # the shard and the evaluator, then a worker per host


def skip(why):
    print(f"skipped: {why}")
    sys.exit(77)


def _ranks_script(h, work, config, rank_var):
    """A shell line that enters each rank's host, picked by the rank its
    launcher set in rank_var."""
    cases = "".join(f"{r}) exec {shlex.join(h.command(k, [ASGD, 'role', config]))} "
                    f"--run_dir={work}/mpi/host-{k};; " for r, k in enumerate(RANK_HOSTS))
    return f'case "${rank_var}" in {cases}esac; exit 3'


def mpirun(h, work, config):
    exe = shutil.which("mpirun.openmpi") or shutil.which("mpirun")
    if not exe:
        skip("no mpirun (Debian: openmpi-bin)")
    script = _ranks_script(h, work, config, "OMPI_COMM_WORLD_RANK")
    run = subprocess.run([exe, "--allow-run-as-root", "--oversubscribe", "-np", "4",
                          "-x", f"MASTER_ADDR={h.hostnames[0]}", "-x", "MASTER_PORT=2222",
                          "sh", "-c", script], capture_output=True, text=True, timeout=300)
    check(run.returncode == 0, f"mpirun exited {run.returncode}: {run.stderr[-3000:]}")
    check("Open MPI rank 3 of 4 is worker 1" in run.stderr,
          "each rank says where it stands:\n" + run.stderr[-2000:])
    return f"{work}/mpi/host-0"


def mpich(h, work, config):
    """MPICH's mpiexec (Hydra, which sets PMI_RANK and PMI_SIZE), its ranks
    forked here and each entering its host."""
    exe = shutil.which("mpiexec.mpich")
    if not exe:
        skip("no mpiexec.mpich (Debian: mpich)")
    script = _ranks_script(h, work, config, "PMI_RANK")
    run = subprocess.run([exe, "-launcher", "fork", "-n", "4",
                          "-genv", "MASTER_ADDR", h.hostnames[0], "-genv", "MASTER_PORT", "2222",
                          "sh", "-c", script], capture_output=True, text=True, timeout=300)
    check(run.returncode == 0, f"mpiexec exited {run.returncode}: {run.stderr[-3000:]}")
    check("MPICH or Intel MPI rank 3 of 4 is worker 1" in run.stderr,
          "each rank says where it stands:\n" + run.stderr[-2000:])
    return f"{work}/mpi/host-0"


SLURM_CONF = """ClusterName=asgdtest
SlurmctldHost={head}({head_addr})
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket={d}/munge.socket
CredType=cred/munge
StateSaveLocation={d}/state
SlurmdSpoolDir={d}/spool-%n
SlurmctldPidFile={d}/slurmctld.pid
SlurmdPidFile={d}/slurmd-%n.pid
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
NodeName={nodes} NodeAddr={addrs} CPUs={cpus} State=UNKNOWN
PartitionName=test Nodes=ALL Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES
"""


def _tail(path, lines=15):
    try:
        with open(path) as f:
            return "".join(f.readlines()[-lines:])
    except OSError:
        return "(no log)"


def slurm(h, work, config):
    for daemon in ("munged", "slurmctld", "slurmd", "sbatch"):
        if not shutil.which(daemon):
            skip(f"no {daemon} (Debian: slurm-wlm, munge)")
    d = os.path.join(work, "slurm")
    os.makedirs(os.path.join(d, "state"))
    for k in range(3):
        os.makedirs(os.path.join(d, f"spool-{h.hostnames[k]}"))
    with open(os.path.join(d, "munge.key"), "wb") as f:
        f.write(os.urandom(1024))
    os.chmod(os.path.join(d, "munge.key"), 0o400)
    with open(os.path.join(d, "slurm.conf"), "w") as f:
        f.write(SLURM_CONF.format(head=h.hostnames[0], head_addr=h.addresses[0], d=d,
                                  nodes=f"asgdh[0-{len(h.names) - 1}]",
                                  addrs=",".join(h.addresses), cpus=os.cpu_count() or 1))
    env = dict(os.environ, SLURM_CONF=os.path.join(d, "slurm.conf"))
    logs = []

    def log(name):
        logs.append(open(os.path.join(d, name + ".log"), "w"))
        return logs[-1]
    # the hosts stop munged with the daemons (it serves every node by its socket)
    h.procs.append(subprocess.Popen(
        ["munged", "-F", "-f", f"--key-file={d}/munge.key", f"--socket={d}/munge.socket",
         f"--pid-file={d}/munged.pid", f"--seed-file={d}/munged.seed",
         f"--log-file={d}/munged.log"], stdout=log("munged-out"), stderr=subprocess.STDOUT))
    try:
        h.popen(0, ["slurmctld", "-D", "-i"], env=env, stdout=log("slurmctld"),
                stderr=subprocess.STDOUT)
        for k in range(3):
            h.popen(k, ["slurmd", "-D"], env=env, stdout=log(f"slurmd-{k}"),
                    stderr=subprocess.STDOUT)
        ready = False
        for _ in range(150):   # until the three nodes are idle, at most 30 s
            time.sleep(0.2)
            info = subprocess.run(h.command(0, ["sinfo", "-h", "-o", "%D %t"]), env=env,
                                  capture_output=True, text=True)
            if info.stdout.split() == ["3", "idle"]:
                ready = True
                break
        if not ready:
            skip("the Slurm daemons did not start: sinfo says "
                 f"{info.stdout.strip() or info.stderr.strip()}\nslurmctld:\n"
                 f"{_tail(os.path.join(d, 'slurmctld.log'))}\nslurmd:\n"
                 f"{_tail(os.path.join(d, 'slurmd-1.log'))}")
        job_env = dict(env, ASGD=ASGD, MASTER_PORT="2222")
        run = subprocess.run(h.command(0, [
            "sbatch", "--wait", "--nodes=3", "--ntasks=4", f"--chdir={d}",
            f"--output={d}/job.out", os.path.join(SOURCE, "experiments/slurm/job.sbatch"),
            config, f"experiment.out={d}/runs"]),
            env=job_env, capture_output=True, text=True, timeout=300)
        check(run.returncode == 0, f"sbatch exited {run.returncode}: {run.stderr}\n"
              f"{_tail(os.path.join(d, 'job.out'), 40)}")
        said = _tail(os.path.join(d, "job.out"), 40)
        check("rank 3 of 4 is worker 1" in said, "each task says where it stands:\n" + said)
        for k in (1, 2):   # each of the other nodes ran a task
            check("launch task" in _tail(os.path.join(d, f"slurmd-{k}.log"), 100),
                  f"node asgdh{k} ran no task")
        return f"{d}/runs/hosts/cluster"
    finally:   # a job still there (a failed check) is cancelled
        subprocess.run(h.command(0, ["scancel", "--user=root"]), env=env, capture_output=True)
        for f in logs:
            f.close()


def main():
    engine = sys.argv[2]
    with tempfile.TemporaryDirectory(prefix="asgd-launchers-") as work:
        config = write_config(work)
        reference = one_host(ASGD, work, config)
        try:
            with Hosts(3) as h:
                folder = {"mpirun": mpirun, "mpich": mpich, "slurm": slurm}[engine](
                    h, work, config)
                expect_job(folder, reference, engine)
        except Unavailable as why:
            skip(why)
    print(f"ok: a job across 3 hosts started by {engine}")


if __name__ == "__main__":
    main()
