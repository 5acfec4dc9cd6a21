#!/usr/bin/env bash
# Hogwild on one host against the sequential trainer (one BLAS thread):
# one real worker process through the sockets ([cluster] shm = off) and
# through shared segments (auto), each with [algorithm] prefetch off and
# on (the next pull overlapping the gradient), and experiment.mode =
# threads with 1 and 2 worker threads over one parameter vector
# (server_threads 2: pushes applied at once). The MLP 256-128 on
# Fashion-MNIST, batch 64, one BLAS thread per worker, no evaluation during
# training. The runs alternate, REPS times each; each line gives the
# median samples/s (summary.json) with the smallest and largest, the
# median over the sequential trainer's median, and the median accuracy
# and staleness, each over the runs that completed without diverging
# (which the last column counts).
#   bench/hogwild_vs_sequential.sh [EPOCHS (2)] [REPS (5)]
# OVERRIDES adds config overrides to every run, e.g. on a GPU with the CNN:
#   OVERRIDES="model.type=cnn backend.device=cuda" bench/hogwild_vs_sequential.sh 1 3
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
epochs=${1:-2}
reps=${2:-5}
"$root/scripts/build.sh"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

. "$root/bench/lib.sh"   # median, record_run, kept_runs

names=(sequential
       "hogwild, 1 worker process, sockets, prefetch off"
       "hogwild, 1 worker process, sockets, prefetch on"
       "hogwild, 1 worker process, shared segments, prefetch off"
       "hogwild, 1 worker process, shared segments, prefetch on"
       "hogwild, threads mode, 1 thread" "hogwild, threads mode, 2 threads")
configs=(sequential hogwild hogwild hogwild hogwild hogwild hogwild)
one="cluster.workers=1 cluster.shm"
threads="experiment.mode=threads algorithm.server_threads=2 cluster.workers"
extras=("" "$one=off algorithm.prefetch=off" "$one=off algorithm.prefetch=on"
        "$one=auto algorithm.prefetch=off" "$one=auto algorithm.prefetch=on"
        "$threads=1" "$threads=2")
runs=${#names[@]}
read -r -a overrides <<<"${OVERRIDES:-}"
for ((r = 0; r < reps; r++)); do
    for ((i = 0; i < runs; i++)); do
        read -r -a extra <<<"${extras[$i]}"
        dir=$("$root/build/asgd" train "$root/experiments/${configs[$i]}/config.ini" \
              experiment.out="$out" train.epochs="$epochs" backend.threads=1 eval.every=0 \
              "${extra[@]}" "${overrides[@]}" 2>"$out/stderr" | tail -1) || true
        if [ ! -f "$dir/summary.json" ]; then   # the others still run
            echo "${names[$i]}: failed: $(tail -1 "$out/stderr")" >&2
        fi
        record_run "$dir" "$out/$i" samples_per_s final_test_acc staleness_mean
    done
done
base=$( (cat "$out/0" 2>/dev/null || true) | awk '{print $1}' | median)
echo "| run | samples/s, median | min | max | against sequential | final test acc | staleness mean | runs |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- |"
for ((i = 0; i < runs; i++)); do
    if [ ! -s "$out/$i" ]; then
        echo "| ${names[$i]} | none usable | | | | | | $(kept_runs "$out/$i") |"
        continue
    fi
    rate=$(awk '{print $1}' "$out/$i" | median)
    printf "| %s | %.0f | %.0f | %.0f | %.2f | %.4f | %.3f | %s |\n" "${names[$i]}" "$rate" \
        "$(awk '{print $1}' "$out/$i" | sort -g | head -1)" \
        "$(awk '{print $1}' "$out/$i" | sort -g | tail -1)" \
        "$(awk -v a="$rate" -v b="$base" 'BEGIN {print (b != "nan" && b + 0 > 0 ? a / b : "nan")}')" \
        "$(awk '{print $2}' "$out/$i" | median)" "$(awk '{print $3}' "$out/$i" | median)" \
        "$(kept_runs "$out/$i")"
done
