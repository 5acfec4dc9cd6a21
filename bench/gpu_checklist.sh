#!/usr/bin/env bash
# Issue 18's GPU checklist in one go, for a machine with a GPU (a lent
# device machine: ../shared/device/README.md builds asgd there). Each check
# runs under its own time limit and a failing one does not stop the rest;
# everything goes to stdout as Markdown, in this order:
#   1. the GPU, the host, the build and the CPU's OpenBLAS kernels;
#   2. the CUDA tests (`ctest -L gpu`) and test_plot, which must skip
#      where gnuplot is missing;
#   3. bench/step_speed.sh cuda: asgd's step against PyTorch eager and
#      PyTorch's CUDA-graph replay, with the GEMM share;
#   4. the multi-GPU experiment (sync, the CNN, 4 workers on one GPU) in
#      real and threads mode, with 1, 4 and 8 shards, and hogwild threads,
#      against the sequential CNN on the same GPU, with each worker's time
#      in pulls, gradients and pushes (its log's last line);
#   5. one real hogwild worker on the GPU against the sequential GPU
#      trainer (bench/hogwild_vs_sequential.sh with backend.device=cuda);
#   6. hogwild on the host's cores: 1 to 12 worker processes on the CPU
#      (bench/workers_throughput.sh), twice;
#   7. the CNN experiment's accuracy on the GPU.
#   bench/gpu_checklist.sh [BUILD_DIR (build)]
# ONLY="2 4" runs those sections alone (the first always runs).
# BUILD_DIR must hold a CUDA build; the bench scripts it calls time build/,
# so where it is another folder, build/ must link to it (or sections 3, 5
# and 6 are refused), and they build nothing (ASGD_PREBUILT=1).
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
# absolute: the checks below run from the root and from the build folder
build=$(cd "${1:-$root/build}" && pwd -P) || { echo "gpu_checklist: no folder ${1:-$root/build}" >&2; exit 2; }
asgd=$build/asgd
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
cd "$root" || exit 1

. "$root/bench/lib.sh"   # summary_field
section() { printf '\n## %s (%s)\n\n' "$1" "$(date -u +%H:%M:%S)"; }
want() { [ -z "${ONLY:-}" ] || [[ " $ONLY " == *" $1 "* ]]; }
# check SECONDS COMMAND...: runs it under a limit; says how it ended
check() {
    local limit=$1 t0=$SECONDS rc
    shift
    timeout "$limit" "$@"
    rc=$?
    printf '\n(exit %d after %d s%s)\n' "$rc" $((SECONDS - t0)) \
        "$([ "$rc" = 124 ] && echo ", stopped at the $limit s limit")"
}
# train NAME CONFIG OVERRIDES...: one run, a table row and its workers' time
train() {
    local name=$1 config=$2 dir
    shift 2
    dir=$(timeout 60 "$asgd" train "$config" experiment.out="$out" eval.every=0 "$@" \
              2>"$out/stderr" | tail -1)
    if [ ! -f "$dir/summary.json" ]; then
        echo "| $name | failed: $(tail -2 "$out/stderr" | tr '\n' ' ') | | | |"
        return
    fi
    printf '| %s | %.0f | %s | %.2f | %s |\n' "$name" "$(summary_field "$dir" samples_per_s)" \
        "$(summary_field "$dir" final_test_acc)" "$(summary_field "$dir" train_time_s)" \
        "$(grep -ho 'worker [0-9]*: [0-9.]* s in pulls.*' "$dir/log.txt" | head -4 |
           paste -sd ';' | sed 's/;/; /g')"
}

if [ "$(readlink -f "$root/build")" != "$build" ] && { want 3 || want 5 || want 6; }; then
    echo "gpu_checklist: sections 3, 5 and 6 time build/, which is not $build:" \
         "link it (ln -sfn $build build), or pick other sections (ONLY)" >&2
    exit 2
fi
export ASGD_PREBUILT=1

section "1. machine and build"
nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.max.sm --format=csv,noheader
echo "cores: $(nproc); $(uname -r); $(nvcc --version 2>/dev/null | tail -1)"
echo "asgd: $(git -C "$root" rev-parse --short HEAD)$(git -C "$root" diff --quiet || echo ' (dirty)')"
# the CPU's OpenBLAS kernels, which sections 4 to 6 compute with on the host
# (a new CPU gets Prescott's, several times slower: set OPENBLAS_CORETYPE)
blas_run=$("$asgd" train "$root/experiments/hogwild/config.ini" experiment.out="$out" \
               train.algorithm=sequential train.epochs=0.01 eval.every=0 2>"$out/stderr" | tail -1)
echo "OpenBLAS: $(summary_field "$blas_run" blas 2>/dev/null)"
grep -h "OpenBLAS computes" "$out/stderr"

if want 2; then
    section "2. CUDA tests and test_plot"
    (cd "$build" && check 150 ctest -L gpu --output-on-failure)
    command -v gnuplot >/dev/null || echo "gnuplot: missing, so test_plot must skip"
    (cd "$build" && check 60 ctest -R '^test_plot$' --output-on-failure)
fi

if want 3; then
    section "3. one training step against PyTorch (bench/step_speed.sh cuda 5)"
    check 150 "$root/bench/step_speed.sh" cuda 5
fi

if want 4; then
    section "4. multi-GPU experiment: sync, the CNN, 4 workers on one GPU, 1 epoch"
    multi=$root/experiments/multi-gpu-single-machine/config.ini
    echo "| run | samples/s | final test acc | train time (s) | workers' time (first 4) |"
    echo "| --- | --- | --- | --- | --- |"
    train "sequential CNN, GPU" "$multi" train.algorithm=sequential train.lr=0.01 train.epochs=1
    train "sync, 4 worker processes (real mode)" "$multi" cluster.workers=4 train.epochs=1
    for servers in 4 8; do
        train "sync, 4 worker processes, $servers shards" "$multi" cluster.workers=4 \
            cluster.servers=$servers train.epochs=1
    done
    for servers in 1 4 8; do
        train "sync, 4 worker threads (threads mode), $servers shards" "$multi" \
            cluster.workers=4 cluster.servers=$servers train.epochs=1 experiment.mode=threads
    done
    hogwild=(train.algorithm=hogwild train.optimizer=sgd train.lr=0.01)
    train "hogwild, 4 worker threads (threads mode)" "$multi" cluster.workers=4 train.epochs=1 \
        experiment.mode=threads "${hogwild[@]}"
    train "hogwild, 4 worker threads, 4 shards" "$multi" cluster.workers=4 train.epochs=1 \
        experiment.mode=threads cluster.servers=4 "${hogwild[@]}"
    train "hogwild, 4 worker threads, 4 server threads" "$multi" cluster.workers=4 \
        train.epochs=1 experiment.mode=threads algorithm.server_threads=4 "${hogwild[@]}"
    train "hogwild, 1 worker process, CNN" "$multi" cluster.workers=1 train.epochs=1 \
        "${hogwild[@]}"
    train "hogwild, 4 worker processes, MLP" "$root/experiments/hogwild/config.ini" \
        cluster.workers=4 train.epochs=2 backend.device=cuda
    train "hogwild, 1 worker process, MLP" "$root/experiments/hogwild/config.ini" \
        cluster.workers=1 train.epochs=2 backend.device=cuda
fi

if want 5; then
    section "5. one hogwild worker on the GPU against the sequential GPU trainer (MLP, 2 epochs, 3 rounds)"
    OVERRIDES="backend.device=cuda" check 120 "$root/bench/hogwild_vs_sequential.sh" 2 3
fi

if want 6; then
    section "6. hogwild on the CPU cores: worker processes against one (MLP, 1 epoch, twice)"
    for round in 1 2; do
        RULES=hogwild check 100 "$root/bench/workers_throughput.sh" 1 1 2 4 8 12
    done
fi

if want 7; then
    section "7. the CNN experiment on the GPU (8 epochs)"
    echo "| run | samples/s | final test acc | train time (s) | |"
    echo "| --- | --- | --- | --- | --- |"
    train "cnn, sequential, GPU" "$root/experiments/cnn/config.ini" backend.device=cuda
fi
echo
echo "done at $(date -u +%H:%M:%S)"
