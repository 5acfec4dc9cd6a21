# bench/lib.sh: helpers the benchmark scripts share (sourced, not run).

# The median of the numbers on stdin, one a line: the middle one, or the
# mean of the two middle ones when there is an even number. Lines that are
# not a number (blank, "nan", "failed": a run that failed) are left out,
# and with no number at all it prints nan, which printf prints as nan,
# never as 0. Printed with 10 significant digits.
median() {
    LC_ALL=C awk '$1 ~ /^[-+]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][-+]?[0-9]+)?$/ {print $1}' |
        LC_ALL=C sort -g |
        LC_ALL=C awk '{v[NR] = $1}
                      END {if (NR == 0) print "nan"
                           else printf "%.10g\n", (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'
}

# line_field KEY: KEY's number in a "key=value key=value" line on stdin
# (bench_step's and torch_step.py's output).
line_field() {
    sed "s/.*$1=\([0-9.]*\).*/\1/"
}

# summary_field DIR KEY: KEY's value in DIR/summary.json, or nan where it
# is null (a NaN the run wrote) or missing: printf prints nan, never 0.
summary_field() {
    local v
    v=$(grep -o "\"$2\":[^,}]*" "$1/summary.json" 2>/dev/null | head -1 | sed 's/^[^:]*:[[:space:]]*//; s/[[:space:]]*$//')
    case $v in
        '' | null) echo nan ;;
        *) echo "$v" ;;
    esac
}

# mean_all: the mean of the numbers on stdin, one a line, or nan where any
# line is not a number (a diverged run's null accuracy, a failed run's
# blank): left out, or read as 0, it made a mean that looked like the
# others' (0.8 and a null seed read 0.4000). Printed with 10 significant
# digits.
mean_all() {
    LC_ALL=C awk 'NF == 0 {bad = 1; next}
                  $1 !~ /^[-+]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][-+]?[0-9]+)?$/ {bad = 1}
                  {s += $1; n++}
                  END {if (n == 0 || bad) print "nan"; else printf "%.10g\n", s / n}'
}

# time_to_target DIR TARGET [NEVER]: the time_s of DIR/eval.csv's first
# evaluation of a trained model (updates > 0: the untrained model's
# accuracy is chance) with a finite loss (a diverged model's accuracy is
# no model's) at or above TARGET accuracy, as asgd plot times it; NEVER
# (default empty) where none is.
time_to_target() {
    LC_ALL=C awk -F, -v a="$2" -v never="${3:-}" \
        'NR > 1 && $3 > 0 && $5 ~ /^[0-9.eE+-]+$/ && $6 >= a {print $1; found = 1; exit}
         END {if (!found && never != "") print never}' "$1/eval.csv"
}

# run_verdict DIR: ok for a complete run that did not diverge; else
# diverged, or failed (no summary.json, or one not complete). A diverged
# run's samples/s is that of the few steps before it stopped and its
# accuracy is null: neither measures its setting.
run_verdict() {
    if [ "$(summary_field "$1" complete)" != true ]; then
        echo failed
    elif [ "$(summary_field "$1" diverged)" != false ]; then
        echo diverged
    else
        echo ok
    fi
}

# result_field DIR KEY: summary_field, but nan for a run that diverged or
# failed (run_verdict), whose time, rate and counts are of the steps before
# it stopped and so no result of its setting; its staleness_* fields stay
# (each push's staleness was measured).
result_field() {
    case $2 in
        staleness_*) summary_field "$1" "$2" ;;
        *) if [ "$(run_verdict "$1")" = ok ]; then summary_field "$1" "$2"; else echo nan; fi ;;
    esac
}

# record_run DIR FILE KEY...: appends DIR's KEYs (summary_field), on one
# line, to FILE where run_verdict says ok, and else its verdict to
# FILE.left, so that a table's medians are of usable runs only and
# kept_runs says how many those were.
record_run() {
    local dir=$1 file=$2 verdict line=""
    shift 2
    verdict=$(run_verdict "$dir")
    if [ "$verdict" != ok ]; then
        echo "$verdict" >>"$file.left"
        return
    fi
    for key in "$@"; do
        line+="${line:+ }$(summary_field "$dir" "$key")"
    done
    echo "$line" >>"$file"
}

# kept_runs FILE: "K of N" (the runs record_run kept of those it saw),
# followed by how many diverged and failed where any did.
kept_runs() {
    local kept=0 diverged=0 failed=0
    [ -f "$1" ] && kept=$(wc -l <"$1")
    [ -f "$1.left" ] && diverged=$(grep -c '^diverged$' "$1.left" || true) &&
        failed=$(grep -c '^failed$' "$1.left" || true)
    printf "%d of %d" "$kept" "$((kept + diverged + failed))"
    [ "$diverged" -gt 0 ] && printf ", %d diverged" "$diverged"
    [ "$failed" -gt 0 ] && printf ", %d failed" "$failed"
    echo
}
