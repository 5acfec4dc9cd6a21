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
    LC_ALL=C awk 'NF == 0 {next}
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
