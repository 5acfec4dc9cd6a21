# bars.gp: one bar per group (time to accuracy, throughput), best first,
# the mean with a min-max line; a group with no value (it never reached
# the target, or no run has samples/s) keeps its place at the end, marked
# `missing` ("not reached", "not measured").
# STEM-1.dat: "group" mean min max reached.
set style fill solid 0.6 border -1
set boxwidth 0.6
if (!exists("yrange_set")) { set yrange [0:*] }
if (!exists("yrange_set") && bars_none) { set yrange [0:1] }   # no bar: not [0:0]
set xtics rotate by -30 nomirror
set rmargin bars_rmargin   # the last labels hang past the last bar
set offsets 0.5, 0.5, graph 0.08, 0
set key off
set xlabel group_label
set ylabel ylabel
plot data(1) using 0:($5 > 0 ? $2 : 0):xtic(1) with boxes lc rgb "#0072b2" notitle, \
     '' using 0:($5 > 0 && $4 > $3 ? $3 : 1/0):(0):($4 - $3) with vectors nohead \
         lc rgb "black" lw 1.5 dt 1 notitle, \
     '' using 0:(0):($5 > 0 ? "" : missing) with labels left rotate by 90 \
         offset 0,0.5 tc rgb "#555555" notitle
