#!/usr/bin/env bash
# Two builds' training steps side by side, for a change to the kernels:
# bench_step of OLD_BUILD and NEW_BUILD alternated ROUNDS times (each first
# in every other round), medians with the new/old ratio of each round.
# DEVICE=cuda (the default): the CNN at batch 64 and 512 and the MLP at
# batch 512, then each build's CNN step at batch 512 kernel by kernel under
# Nsight Compute (ncu), asgd's own kernels with their time per step and
# share, costliest first. DEVICE=cpu: the CNN at batch 64 and the MLP at 64
# and 512, on THREADS BLAS threads (1). Prints Markdown.
#   [DEVICE=cpu|cuda] [THREADS=N] bench/step_ab.sh OLD_BUILD NEW_BUILD [ROUNDS (3)]
# On a device machine, a build of the commit before a change: carry its
# tree in .dev (here: git archive REV -o .dev/old.tar), since the device's
# copy of .git may not hold REV or name it HEAD, then there:
#   mkdir /tmp/old && tar -xf .dev/old.tar -C /tmp/old && cp -r .dev /tmp/old &&
#   (cd /tmp/old && . .dev/device-build.sh) && bench/step_ab.sh /tmp/old/build-gpu build-gpu
set -uo pipefail
old=${1:?usage: bench/step_ab.sh OLD_BUILD NEW_BUILD [ROUNDS]}
new=${2:?usage: bench/step_ab.sh OLD_BUILD NEW_BUILD [ROUNDS]}
rounds=${3:-3}
device=${DEVICE:-cuda}
root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/bench/lib.sh"   # median, line_field
case $device in
cuda) runs=("cnn 64 50" "cnn 512 20" "mlp 512 200") ;;
cpu) runs=("cnn 64 10" "mlp 64 400" "mlp 512 100")
     export OPENBLAS_NUM_THREADS=${THREADS:-1} ;;
*) echo "step_ab.sh: DEVICE is cpu or cuda, not $device" >&2; exit 2 ;;
esac

echo "| model | batch | old samples/s | new samples/s | new / old (rounds) | old GEMM share | new GEMM share |"
echo "| --- | --- | --- | --- | --- | --- | --- |"
for run in "${runs[@]}"; do
    read -r model batch steps <<<"$run"
    rows=""
    for ((r = 0; r < rounds; r++)); do
        if ((r % 2 == 0)); then   # each build first in every other round
            a=$("$old/bench/bench_step" "$device" "$model" "$batch" "$steps" 5) || exit 1
            b=$("$new/bench/bench_step" "$device" "$model" "$batch" "$steps" 5) || exit 1
        else
            b=$("$new/bench/bench_step" "$device" "$model" "$batch" "$steps" 5) || exit 1
            a=$("$old/bench/bench_step" "$device" "$model" "$batch" "$steps" 5) || exit 1
        fi
        rows+="$(line_field samples_per_s <<<"$a") $(line_field samples_per_s <<<"$b") \
$(line_field gemm_fraction <<<"$a") $(line_field gemm_fraction <<<"$b")"$'\n'
    done
    ratios=$(awk 'NF {printf "%s%.2f", sep, $2 / $1; sep = ", "}' <<<"$rows")
    printf '| %s | %s | %.0f | %.0f | %s | %s | %s |\n' "$model" "$batch" \
        "$(awk 'NF {print $1}' <<<"$rows" | median)" "$(awk 'NF {print $2}' <<<"$rows" | median)" \
        "$ratios" "$(awk 'NF {print $3}' <<<"$rows" | median)" \
        "$(awk 'NF {print $4}' <<<"$rows" | median)"
done

[ "$device" = cuda ] || exit 0
ncu=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | tail -1)
if [ -z "$ncu" ]; then
    echo; echo "ncu: not found, so no kernel-by-kernel times"
    exit 0
fi
profile=$(mktemp)
trap 'rm -f "$profile"' EXIT
# bench_step cuda cnn 512 1 1 runs 12 gradients (one recording the GEMMs,
# ten warm-up steps, one timed) and 11 optimizer updates (the recording
# has none), so a kernel's time per step is its total over 12, or 11
for build in "$old" "$new"; do
    echo
    echo "asgd's own kernels (k_*, not cuBLAS) in a CNN step at batch 512, $build (ncu):"
    echo
    echo "| kernel | launches per step | us per step | share of asgd's kernels |"
    echo "| --- | --- | --- | --- |"
    if ! timeout 60 "$ncu" --clock-control none --print-units base --csv \
        --metrics gpu__time_duration.sum --kernel-name regex:'^k_' \
        "$build/bench/bench_step" cuda cnn 512 1 1 >"$profile" 2>&1; then
        echo "| ncu failed: $(tail -1 "$profile") | | | |"
        continue
    fi
    awk -F'","' '/"Kernel Name"/ { for (i = 1; i <= NF; i++) {
                                            if ($i == "Kernel Name") kn = i
                                            if ($i ~ /Metric Value/) mv = i } }
             kn && /gpu__time_duration.sum/ {
                name = $kn; sub(/\(.*/, "", name); sub(/^void /, "", name)
                v = $mv; gsub(/[",]/, "", v); ns[name] += v; n[name]++ }
             END { for (k in ns) { steps[k] = k ~ /optim/ ? 11 : 12; all += ns[k] / steps[k] }
                   if (all == 0) { print "| no k_ kernel in ncu'"'"'s output | | | |"; exit }
                   for (k in ns) printf "| %s | %.1f | %.1f | %.3f |\n", k, n[k] / steps[k],
                                        ns[k] / steps[k] / 1000, ns[k] / steps[k] / all
                   printf "| all of them | | %.1f | 1 |\n", all / 1000 }' "$profile" |
        sort -t'|' -k4 -rn
done
