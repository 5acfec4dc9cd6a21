#!/usr/bin/env python3
"""Writes the seed corpora of the libFuzzer harnesses into fuzz/corpus/.

Each seed is a well-formed input in its harness's layout (see the header
comment of fuzz/fuzz_NAME.c), so that fuzzing starts from messages, configs,
cluster environments and IDX files that are accepted, and mutates from
there. Run it again after changing a harness's input layout, or a config;
`--check` writes the seeds of the layouts asgd's code defines (wire,
compress, cluster, idx: not the configs, which stay seeds when edited)
elsewhere and fails, naming each, where the committed corpus differs (its
wire seeds once carried protocol 2 after the wire had moved to 4: every
one refused at the version, no message accepted to mutate from)."""
import filecmp
import glob
import gzip
import json
import os
import re
import struct
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "fuzz", "corpus")


def wire_protocol():
    with open(os.path.join(ROOT, "transport", "wire.h")) as f:
        return int(re.search(r"#define WIRE_PROTOCOL (\d+)", f.read()).group(1))


MAGIC, PROTOCOL = 0x44475341, wire_protocol()
PULL, PUSH, REPLY, CONTROL = 1, 2, 3, 4
F32, NO_PAYLOAD, JSON_ENC, SHM = 0, 1, 2, 8
DONE, STATS, ATTACH = 1, 2, 4  # 3 was SHUTDOWN, refused now
ATTACH_SIZE = 80  # a shared segment's path and token
EVALUATOR, ANY = 0xFFFFFFFE, 0xFFFFFFFF
LO, HI = 100, 1100  # the element range fuzz_wire's receiver owns


def header(type_, worker, shard=0, tag=0, base=0, offset=0, count=0, encoding=NO_PAYLOAD,
           flags=0, samples=0, total=0, seq=1, generation=0):
    return struct.pack("<IHHIIQQQQHHIQQII", MAGIC, PROTOCOL, type_, worker, shard, tag, base,
                       offset, count, encoding, flags, samples, total, seq, generation, 0)


def wire_seed(mode, payload_len, head):
    return bytes([mode]) + struct.pack("<I", payload_len) + head


def write(kind, name, data):
    os.makedirs(os.path.join(OUT, kind), exist_ok=True)
    with open(os.path.join(OUT, kind, name), "wb") as f:
        f.write(data)


def wire_seeds():
    n = HI - LO
    seeds = {
        "pull": wire_seed(0, 0, header(PULL, 0, tag=3, base=2)),
        "pull-evaluator": wire_seed(0, 0, header(PULL, EVALUATOR)),
        "push-leader": wire_seed(1, 4 * n, header(PUSH, 1, offset=LO, count=n, encoding=F32,
                                                  flags=2, samples=64, tag=5, base=4)),
        "push-in-round": wire_seed(5, 4 * n, header(PUSH, 2, shard=1, offset=LO, count=n,
                                                    encoding=F32, flags=4, samples=64)),
        "done": wire_seed(0, 0, header(CONTROL, 3, tag=DONE)),
        "stats": wire_seed(0, 0, header(CONTROL, ANY, tag=STATS)),
        "reply-params": wire_seed(3, 4 * n, header(REPLY, 0, offset=LO, count=n, encoding=F32,
                                                   base=9, total=640, generation=1)),
        "reply-json": wire_seed(3, 40, header(REPLY, ANY, encoding=JSON_ENC)),
        "reply-restarted": wire_seed(2, 0, header(REPLY, 0, flags=16, generation=2)),
        "attach": wire_seed(1, ATTACH_SIZE, header(CONTROL, 1, tag=ATTACH, encoding=SHM)),
        "push-shared": wire_seed(0, 0, header(PUSH, 3, offset=LO, count=n, encoding=SHM,
                                              samples=64, generation=7)),
        "reply-shared": wire_seed(2, 0, header(REPLY, 0, offset=LO, count=n, encoding=SHM,
                                               base=9, generation=7)),
    }
    for name, data in seeds.items():
        write("wire", name, data)


def config_seeds():
    paths = glob.glob(os.path.join(ROOT, "configs", "*.ini")) + \
        glob.glob(os.path.join(ROOT, "experiments", "*", "config.ini"))
    for path in sorted(paths):
        with open(path, "rb") as f:
            text = f.read()
        name = os.path.relpath(path, ROOT).replace("/", "-")
        write("config", name, text)
    write("config", "overrides", b"[train]\nalgorithm = hogwild\n+cluster.workers=3\n"
          b"+train.lr=0.05\n+sim.fail=1@2\n")


def cluster_seeds():
    tf = {"cluster": {"ps": ["10.0.0.1:2222", "10.0.0.2:2222"],
                      "worker": ["10.0.0.3:2222", "10.0.0.4:2222"],
                      "chief": ["10.0.0.5:2222"]},
          "task": {"type": "worker", "index": 1}, "environment": "cloud"}
    write("cluster", "tf-worker", b"\x01" + json.dumps(tf).encode())
    tf["task"] = {"type": "ps", "index": 0}
    write("cluster", "tf-ps", b"\x00" + json.dumps(tf).encode() + b"\0--restore")
    write("cluster", "flags-ps", b"\x00\0--ps_hosts=localhost:2222,localhost:2223\0"
          b"--worker_hosts=a:1,b:1\0--job_name=ps\0--task_index=1\0--evaluator=1\0"
          b"--run_dir=/tmp/r\0train.lr=0.1")
    write("cluster", "flags-evaluator", b"\x02\0--ps_hosts=tcp://127.0.0.1:5000\0"
          b"--keys\0/tmp/k\0--report_fd=3\0--resume")
    # asgd role: a role byte of 3, the shards, then TF_CONFIG and the engines'
    # variables in fuzz_cluster.c's order: RANK, WORLD_SIZE, MASTER_ADDR,
    # MASTER_PORT, OMPI_COMM_WORLD_RANK, _SIZE, SLURM_PROCID, SLURM_NTASKS,
    # SLURM_STEP_NODELIST, SLURM_JOB_NODELIST
    def role(shards, tf_config, *values):
        return bytes([3, shards - 1]) + b"\0".join([tf_config] + list(values))
    write("cluster", "role-torchrun", role(2, b"", b"3", b"6", b"10.0.0.1", b"23456"))
    write("cluster", "role-mpirun", role(1, b"", b"", b"", b"head", b"", b"2", b"4"))
    write("cluster", "role-srun", role(1, b"", b"", b"", b"", b"", b"", b"", b"1", b"3", b"",
                                       b"node[01-03],gpu7"))
    tf["cluster"]["master"] = tf["cluster"].pop("chief")
    tf["task"] = {"type": "master", "index": 0}
    write("cluster", "role-tf-master", role(1, json.dumps(tf).encode()))


def idx(dims, payload):
    head = struct.pack(">I", 0x0800 | len(dims)) + b"".join(struct.pack(">I", d) for d in dims)
    return head + payload


def idx_seed(mode, images, labels):
    return bytes([mode]) + struct.pack("<H", len(images)) + images + labels


def idx_seeds():
    images = idx([3, 2, 2], bytes(range(0, 240, 20)))
    labels = idx([3], bytes([0, 1, 2]))
    write("idx", "plain", idx_seed(0, images, labels))
    write("idx", "gzip", idx_seed(3, images, labels))
    write("idx", "limit", idx_seed(2 << 2, images, labels))
    write("idx", "already-gzipped", idx_seed(0, gzip.compress(images, mtime=0),
                                             gzip.compress(labels, mtime=0)))


def compress_seeds():
    """fuzz_compress: format, qsgd bits, value count (2 bytes), payload."""
    def seed(fmt, bits, count, payload):
        return bytes([fmt, bits]) + struct.pack("<H", count) + payload
    write("compress", "f16", seed(1, 0, 3, struct.pack("<3H", 0x3C00, 0xC000, 0x7BFF)))
    write("compress", "bf16", seed(2, 0, 2, struct.pack("<2H", 0x3F80, 0x4000)))
    write("compress", "sparse", seed(3, 0, 10, struct.pack("<IfIf", 1, 0.5, 7, -2.0)))
    write("compress", "signs", seed(4, 0, 9, struct.pack("<f", 0.25) + bytes([0x5A, 0x01])))
    write("compress", "levels", seed(5, 4, 3, struct.pack("<fI", 2.0, 4) + bytes([0x3F, 0x51])))


def write_all():
    wire_seeds()
    compress_seeds()
    config_seeds()
    cluster_seeds()
    idx_seeds()


def differences(made, kept):
    """The seeds written into made that kept lacks or holds otherwise (kept
    may hold more: inputs fuzzing found, kept as seeds)."""
    names = set()
    for folder, _, files in os.walk(made):
        names.update(os.path.relpath(os.path.join(folder, f), made) for f in files)
    return sorted(n for n in names
                  if not (os.path.isfile(os.path.join(kept, n)) and
                          filecmp.cmp(os.path.join(made, n), os.path.join(kept, n),
                                      shallow=False)))


if __name__ == "__main__":
    if sys.argv[1:] == ["--check"]:
        kept = OUT
        with tempfile.TemporaryDirectory() as made:
            OUT = made
            wire_seeds()
            compress_seeds()
            cluster_seeds()
            idx_seeds()
            stale = differences(made, kept)
        if stale:
            sys.exit("fuzz/corpus differs from what scripts/fuzz_seeds.py writes: %s; run it "
                     "again" % ", ".join(stale))
        print("fuzz/corpus's wire, compress, cluster and idx seeds are what "
              "scripts/fuzz_seeds.py writes")
    else:
        write_all()
