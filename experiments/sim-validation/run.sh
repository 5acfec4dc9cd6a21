#!/usr/bin/env bash
# hogwild and sync with 4 workers, real and simulated: prints mean
# staleness, final accuracy, updates and time for each, and draws
# runs/sim-validation/validation.png (test accuracy against updates, real and simulated side by
# side) with gnuplot. Run folders go to runs/sim-validation/.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
"$root/scripts/build.sh"
command -v gnuplot >/dev/null || { echo "gnuplot is missing: apt-get install gnuplot-nox" >&2; exit 1; }
. "$root/bench/lib.sh"   # summary_field (nan for a null: never 0), mean_all
field() { summary_field "$@"; }
data=$(mktemp -d)
trap 'rm -rf "$data"' EXIT
echo "| rule | mode | staleness mean | staleness max | final acc | updates | time s |"
echo "| --- | --- | --- | --- | --- | --- | --- |"
for rule in hogwild sync; do
    lr=0.05
    [ "$rule" = sync ] && lr=0.2
    for mode in real sim; do
        dir=$("$root/build/asgd" train "$here/config.ini" experiment.out="$root/runs" \
              train.algorithm="$rule" train.lr="$lr" experiment.mode="$mode")
        cp "$dir/eval.csv" "$data/$rule-$mode.csv"
        printf "| %s | %s | %.2f | %d | %.4f | %d | %.2f |\n" "$rule" "$mode" \
            "$(field "$dir" staleness_mean)" "$(field "$dir" staleness_max)" \
            "$(field "$dir" final_test_acc)" "$(field "$dir" updates)" "$(field "$dir" time_s)"
    done
done
gnuplot <<GP
set terminal pngcairo size 1100,420 font "Sans,11"
set output "$root/runs/sim-validation/validation.png"
set datafile separator ","
set key bottom right
set grid
set xlabel "server updates"
set ylabel "test accuracy"
set yrange [0:0.9]
set multiplot layout 1,2
set title "hogwild, 4 workers"
plot "$data/hogwild-real.csv" every ::1 using 3:6 with linespoints lw 2 pt 7 title "real processes", \
     "$data/hogwild-sim.csv" every ::1 using 3:6 with linespoints lw 2 dt 2 pt 6 title "simulated"
set title "sync, 4 workers"
plot "$data/sync-real.csv" every ::1 using 3:6 with linespoints lw 2 pt 7 title "real processes", \
     "$data/sync-sim.csv" every ::1 using 3:6 with linespoints lw 2 dt 2 pt 6 title "simulated"
unset multiplot
GP
echo "figure: $root/runs/sim-validation/validation.png (the committed $here/validation.png: cp it there on purpose)"
