#!/usr/bin/env python3
"""test_k8s.py ASGD: `asgd k8s` manifests, parsed with python3-yaml, then
played as the training operator would: each replica's pods get the
TF_CONFIG (TFJob) or RANK/WORLD_SIZE/MASTER_* (PyTorchJob) the operator
injects, each pod on a host of its own (a network namespace, hosts.py) with
the pods' host names mapped to the hosts' addresses, and run their
container's command on the ConfigMap's config; the job must complete.
Where namespaces cannot be made, the pods run on this host's loopback.
Exit 77 (skipped) without python3-yaml."""
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from hosts import Hosts, Unavailable  # noqa: E402

try:
    import yaml
except ImportError:
    print("skipped: no python3-yaml")
    sys.exit(77)

ASGD = sys.argv[1]
CONFIG = """[experiment]
name = K8s Job_1
[data]
dataset = synthetic
[model]
type = softmax
[train]
algorithm = hogwild
epochs = 1
[eval]
every = 0.5
"""


def manifest(config, *args, status=0):
    run = subprocess.run([ASGD, "k8s", config, *args], capture_output=True, text=True)
    if run.returncode != status:
        sys.exit(f"asgd k8s {' '.join(args)}: exit {run.returncode}: {run.stderr}")
    if status:
        return run.stderr
    return {d["kind"]: d for d in yaml.safe_load_all(run.stdout)}


def check(cond, what):
    if not cond:
        sys.exit("FAILED: " + what)


def container(spec):
    return spec["template"]["spec"]["containers"][0]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def mount_keys(docs, spec, folder):
    """The Secret's items that spec's pods mount, written into folder with
    the volume's defaultMode, as the kubelet writes them."""
    volumes = {v["name"]: v for v in spec["template"]["spec"]["volumes"]}
    if "keys" not in volumes:
        return []
    os.makedirs(folder, exist_ok=True)
    secret = volumes["keys"]["secret"]
    items = [i["path"] for i in secret["items"]]
    for name in items:
        path = os.path.join(folder, name)
        with open(path, "w") as f:
            f.write(docs["Secret"]["stringData"][name])
        os.chmod(path, secret.get("defaultMode", 0o644))
    return items


def play(docs, work, env_for, hosts):
    """Runs every pod of the job's replicas, each with the Secret's items
    its replica mounts, pod n on host n (or all on loopback when hosts is
    None); env_for(type, index, address, port) gives what the operator
    would inject, address(type, index) being a pod's address and port the
    one its services listen on."""
    os.makedirs(work, exist_ok=True)
    with open(os.path.join(work, "config.ini"), "w") as f:
        f.write(docs["ConfigMap"]["data"]["config.ini"])
    job = docs.get("TFJob") or docs.get("PyTorchJob")
    specs = job["spec"].get("tfReplicaSpecs") or job["spec"]["pytorchReplicaSpecs"]
    pods = [(kind, i) for kind, spec in specs.items() for i in range(spec["replicas"])]

    def address(kind, index):
        return hosts.addresses[pods.index((kind, index))] if hosts else "127.0.0.1"
    port = 2222 if hosts else free_port()   # each host has its own ports
    procs = []
    try:
        for n, (kind, index) in enumerate(pods):
            spec = specs[kind]
            keys = os.path.join(work, "keys-" + kind)
            mount_keys(docs, spec, keys)
            command = [a.replace("/etc/asgd/config", work).replace("/runs", work + "/runs")
                       .replace("/etc/asgd/keys", keys) for a in container(spec)["command"]]
            command[0] = ASGD
            env = dict(os.environ, **env_for(kind, index, address, port))
            options = dict(env=env, stderr=subprocess.PIPE, text=True)
            procs.append((kind, index, hosts.popen(n, command, **options) if hosts
                          else subprocess.Popen(command, **options)))
        for kind, index, p in procs:
            err = p.communicate(timeout=120)[1]
            check(p.returncode == 0, f"{kind} {index} exited {p.returncode}: {err}")
    finally:
        for _, _, p in procs:   # none left behind when a check fails
            if p.poll() is None:
                p.kill()
                p.wait()
    check(os.path.exists(os.path.join(work, "runs", "eval.csv")), "no eval.csv")
    with open(os.path.join(work, "runs", "summary.json")) as f:
        check(json.load(f)["complete"], "the evaluator's run folder is complete")


def test_tfjob(work, hosts):
    config = os.path.join(work, "job.ini")
    with open(config, "w") as f:
        f.write(CONFIG)
    docs = manifest(config, "--image", "asgd:test", "cluster.workers=2",
                    "cluster.restart=on-failure", "cluster.backoff_limit=5")
    check(set(docs) == {"ConfigMap", "TFJob"}, f"documents {set(docs)}")
    tf = docs["TFJob"]
    name = tf["metadata"]["name"]
    check(re.fullmatch(r"k8s-job-1-[0-9a-f]{8}", name), "name " + name)
    check(docs["ConfigMap"]["metadata"]["name"] == name + "-config", "the config's name")
    # other settings, another name (they shared one: a second kubectl apply
    # rewrote the running job's config); the same config, the same name
    again = manifest(config, "--image", "asgd:test", "cluster.workers=2",
                     "cluster.restart=on-failure", "cluster.backoff_limit=5")
    other = manifest(config, "--image", "asgd:test", "cluster.workers=2",
                     "cluster.restart=on-failure", "cluster.backoff_limit=5", "train.lr=0.01")
    check(again["TFJob"]["metadata"]["name"] == name, "the same config, the same name")
    by_path = manifest(os.path.join(work, ".", "job.ini"), "--image", "asgd:test",
                       "cluster.workers=2", "cluster.restart=on-failure", "cluster.backoff_limit=5")
    check(by_path["TFJob"]["metadata"]["name"] == name,
          "the same config by another path, the same name (its path is a comment)")
    check(other["TFJob"]["metadata"]["name"] != name, "another config, another name")
    check(tf["spec"]["runPolicy"]["backoffLimit"] == 5, "backoffLimit")
    # a job that ends (done or failed) leaves no pod running (None left the
    # shards and the evaluator waiting for ever after a worker failed)
    check(tf["spec"]["runPolicy"]["cleanPodPolicy"] == "Running", "cleanPodPolicy")
    specs = tf["spec"]["tfReplicaSpecs"]
    check({k: v["replicas"] for k, v in specs.items()} == {"PS": 1, "Chief": 1, "Worker": 2},
          "replicas")
    for spec in specs.values():
        check(spec["restartPolicy"] == "OnFailure", "restartPolicy")
        c = container(spec)
        check(c["name"] == "tensorflow" and c["image"] == "asgd:test", "container")
        check(c["command"][:2] == ["asgd", "role"], "command")
        check("resources" not in c, "no GPU asked on the CPU")
    text = docs["ConfigMap"]["data"]["config.ini"]
    check("workers = 2" in text and "transport = tcp" in text, "config:\n" + text)

    names = {"PS": "ps", "Chief": "chief", "Worker": "worker"}

    def tf_config(kind, index, address, port):
        cluster = {names[k]: [f"{address(k, i)}:{port}" for i in range(v["replicas"])]
                   for k, v in specs.items()}
        return {"TF_CONFIG": json.dumps({"cluster": cluster, "task": {"type": names[kind],
                                                                       "index": index}})}
    play(docs, os.path.join(work, "tf"), tf_config, hosts)


def test_pytorchjob_keys_and_gpus(work, hosts):
    config = os.path.join(work, "job.ini")
    docs = manifest(config, "--image=asgd:test", "--kind", "pytorchjob", "cluster.workers=2",
                    "cluster.auth=curve", "cluster.restart=exit-code")
    py = docs["PyTorchJob"]
    specs = py["spec"]["pytorchReplicaSpecs"]
    check({k: v["replicas"] for k, v in specs.items()} == {"Master": 1, "Worker": 3},
          "replicas: the shard, then the evaluator and 2 workers")
    check(all(v["restartPolicy"] == "ExitCode" for v in specs.values()), "restartPolicy")
    keys = docs["Secret"]["stringData"]
    want = {f"{w}.key{s}" for w in ["server", "evaluator", "worker-0", "worker-1"]
            for s in ["", "_secret"]}
    check(set(keys) == want, f"keys {sorted(keys)}")
    check("secret-key" in keys["server.key_secret"], "a secret key")
    # the manifest made again has fresh keys, so another job's name: applied
    # over the running job under its name, it gave restarted pods new keys,
    # which the running shard never admitted (their workers exited 138 for
    # good); the same manifest applied twice stays one job
    again = manifest(config, "--image=asgd:test", "--kind", "pytorchjob", "cluster.workers=2",
                     "cluster.auth=curve", "cluster.restart=exit-code")
    check(again["Secret"]["stringData"] != keys, "fresh keys each time")
    check(again["PyTorchJob"]["metadata"]["name"] != py["metadata"]["name"],
          "other keys, another job's name")
    check(docs["Secret"]["metadata"]["name"] == py["metadata"]["name"] + "-keys",
          "the Secret is the job's")
    for spec in specs.values():
        check("--keys=/etc/asgd/keys" in container(spec)["command"], "--keys")
        check("--restore" in container(spec)["command"], "--restore")
    # each replica mounts its own secrets and the public keys it needs: the
    # shard every public key, the clients the shard's; no client the shard's
    # or the evaluator's secret... except the evaluator itself
    master = mount_keys(docs, specs["Master"], os.path.join(work, "m"))
    check(set(master) == {n for n in want if not n.endswith("_secret")} |
          {"server.key_secret"}, f"the shard mounts {master}")
    workers = mount_keys(docs, specs["Worker"], os.path.join(work, "w"))
    check("server.key_secret" not in workers and "server.key" in workers and
          "worker-1.key_secret" in workers, f"the workers mount {workers}")
    tf = manifest(config, "--image=i", "cluster.workers=2", "cluster.auth=curve")
    chief = mount_keys(tf, tf["TFJob"]["spec"]["tfReplicaSpecs"]["Chief"], os.path.join(work, "c"))
    check(set(chief) == {"server.key", "evaluator.key", "evaluator.key_secret"},
          f"the evaluator mounts {chief}")
    gpu = manifest(config, "--image=i", "backend.device=cuda")["TFJob"]["spec"]["tfReplicaSpecs"]
    check(container(gpu["Worker"])["resources"]["limits"]["nvidia.com/gpu"] == 1, "GPU limit")
    check(container(gpu["Chief"])["resources"]["limits"]["nvidia.com/gpu"] == 1,
          "a GPU for the evaluator, whose model runs on the device too")
    check("resources" not in container(gpu["PS"]), "no GPU for a shard")
    err = manifest(config, "--image=i", "--kind=pytorchjob", "cluster.servers=2", status=2)
    check("servers must be 1" in err and "one master" in err, err)
    check("--image" in manifest(config, status=2), "--image is needed")
    # pods start in any order: restart = never is said to fail a job whose
    # shard's pod starts late (its workers exit 138, which Never does not retry)
    run = subprocess.run([ASGD, "k8s", config, "--image=i", "cluster.restart=never"],
                         capture_output=True, text=True)
    check(run.returncode == 0 and "warning: cluster.restart = never" in run.stderr, run.stderr)
    run = subprocess.run([ASGD, "k8s", config, "--image=i", "cluster.restart=exit-code",
                          "checkpoint.every=10"], capture_output=True, text=True)
    check(run.returncode == 0 and "warning" not in run.stderr, run.stderr)
    check("not an image reference" in manifest(config, "--image", "a: b", status=2), "image")
    dns = r"[a-z]([-a-z0-9]*[a-z0-9])?"
    for given, stem in [("4 Workers", "asgd-4-workers-"), ("9" + "a" * 40 + " " + "b" * 20,
                                                           "asgd-9" + "a" * 32 + "-"),
                        ("--", "asgd-"), ("K8s Job_1", "k8s-job-1-")]:
        got = manifest(config, "--image=i", "experiment.name=" + given)["TFJob"]["metadata"]["name"]
        check(re.fullmatch(dns, got) and len(got) <= 47 and got.startswith(stem) and
              re.fullmatch(r"[0-9a-f]{8}", got[len(stem):]), f"{given!r} named {got!r}")

    world = 1 + specs["Worker"]["replicas"]

    def ranks(kind, index, address, port):   # the shard listens at MASTER_PORT + 1
        # as the operator does: the Master is told localhost, the others its name
        return {"MASTER_ADDR": "localhost" if kind == "Master" else address("Master", 0),
                "MASTER_PORT": str(port - 1),
                "WORLD_SIZE": str(world), "RANK": str(0 if kind == "Master" else index + 1)}
    play(docs, os.path.join(work, "py"), ranks, hosts)


def main():
    work = tempfile.mkdtemp(prefix="asgd-test-k8s-")
    try:
        try:
            with Hosts(4) as hosts:   # a host per pod
                test_tfjob(work, hosts)
                test_pytorchjob_keys_and_gpus(work, hosts)
                where = "a network namespace per pod"
        except Unavailable as why:
            shutil.rmtree(work)
            os.makedirs(work)
            test_tfjob(work, None)
            test_pytorchjob_keys_and_gpus(work, None)
            where = f"loopback ({why})"
    finally:
        shutil.rmtree(work)
    print("ok: pods on " + where)


if __name__ == "__main__":
    main()
