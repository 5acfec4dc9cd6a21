#!/usr/bin/env bash
# Memory per worker process of a real hogwild job (the MLP 256-128 on
# Fashion-MNIST, one BLAS thread per process), with the data cache off
# (each process decodes its own copy) and on (one mapped copy per host,
# core/datacache.h), side by side. Each worker's proportional set size
# (Pss in /proc/PID/smaps_rollup: shared pages divided among the processes
# that map them) and resident set size are read once every worker has
# trained a while. The learning rate is 0.01: 16 hogwild workers at the
# experiment's 0.05 diverge (and stop) within seconds.
#   bench/memory.sh [WORKERS (16)] [EPOCHS (4)]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
workers=${1:-16}
epochs=${2:-4}
"$root/scripts/build.sh"
out=$(mktemp -d)
cache=$(mktemp -d)
trap 'rm -rf "$out" "$cache"' EXIT

. "$root/bench/lib.sh"   # summary_field

kib() { awk -v k="$2" '$1 == k":" {print $2}' "/proc/$1/smaps_rollup" 2>/dev/null || true; }

# The workers' PIDs: `asgd worker` children of the job.
worker_pids() {
    for p in /proc/[0-9]*; do
        if tr '\0' ' ' <"$p/cmdline" 2>/dev/null | grep -q "^$root/build/asgd worker .*$out"; then
            echo "${p#/proc/}"
        fi
    done
}

echo "| data.cache | workers | Pss per worker, mean (MiB) | max (MiB) | Rss mean (MiB) | model (MiB) | final test acc |"
echo "| --- | --- | --- | --- | --- | --- | --- |"
for mode in off on; do
    value=off
    [ "$mode" = off ] || value=$cache
    "$root/build/asgd" train "$root/experiments/hogwild/config.ini" experiment.out="$out" \
        cluster.workers="$workers" train.epochs="$epochs" train.lr=0.01 backend.threads=1 eval.every=0 \
        data.cache="$value" >"$out/dir-$mode" 2>"$out/log-$mode" &
    job=$!
    sample=""
    for _ in $(seq 1 600); do   # until every worker has stepped (its data loaded)
        sleep 0.5
        pids=$(worker_pids)
        if [ "$(echo "$pids" | grep -c .)" -eq "$workers" ]; then
            sleep 3
            pids=$(worker_pids)
            sample=$(for p in $pids; do echo "$(kib "$p" Pss) $(kib "$p" Rss)"; done)
            break
        fi
    done
    wait "$job"
    if [ -z "$(echo "$sample" | awk 'NF == 2')" ]; then
        echo "memory.sh: the $mode job ended before its $workers workers could be sampled" \
             "(3 s after all had started): give it more EPOCHS" >&2
        exit 1
    fi
    dir=$(cat "$out/dir-$mode")
    params=$(summary_field "$dir" params)
    acc=$(summary_field "$dir" final_test_acc)   # nan: the job diverged
    echo "$sample" | awk -v m="$mode" -v w="$workers" -v p="$params" -v a="$acc" '
        NF == 2 {n++; pss += $1; rss += $2; if ($1 > max) max = $1}
        END {printf "| %s | %d | %.1f | %.1f | %.1f | %.2f | %s |\n", m, w, pss / n / 1024,
             max / 1024, rss / n / 1024, p * 4 / 1048576, a}'   # smaps_rollup: KiB
done
