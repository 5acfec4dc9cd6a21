# bench/lib.sh: helpers the benchmark scripts share (sourced, not run).

# The median of the numbers on stdin, one a line: the middle one, or the
# mean of the two middle ones when there is an even number (a run that
# failed and was skipped leaves one).
median() {
    sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'
}
