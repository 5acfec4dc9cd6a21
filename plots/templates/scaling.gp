# scaling.gp: a summary field of each group against a key (workers, by
# default), the mean with min-max bars, ticks at every x that has data;
# with speedup, beside it the speed-up over each group's smallest x and
# the ideal line: one, black, where every group's smallest x is the same
# (one_ideal; drawn through the points of the group whose x reach
# furthest, ideal_group), else each group's own, dotted in its colour.
# STEM-G.dat: x mean min max speedup ideal.
set xlabel xlabel
set ylabel ylabel
set autoscale xfix   # the data's range, not the next tick's, with a margin
set offsets graph 0.04, graph 0.04, 0, 0
# one x (x_single), or one y (y_single): a range around it, where gnuplot
# warned of an empty one and widened it by 1%
pad(v) = v == 0 ? 1 : abs(v) / 2
if (exists("x_single") && !exists("xrange_set")) {
    if (logx) { set xrange [x_single / 2:x_single * 2] } \
    else { set xrange [x_single - pad(x_single):x_single + pad(x_single)] }
}
if (exists("y_single") && !exists("yrange_set")) {
    if (logy) { set yrange [y_single / 2:y_single * 2] } \
    else { set yrange [y_single - pad(y_single):y_single + pad(y_single)] }
}
if (speedup) { set multiplot layout 1,2 title figure_title; unset title }
plot for [g=1:groups] data(g) using 1:2:3:4 with yerrorlines ls g title titles[g]
if (speedup) {
    set ylabel speedup_label
    if (!exists("yrange_set")) { set autoscale y }   # not the first plot's y_single range
    if (exists("x_single") && !exists("yrange_set")) { set yrange [logy ? 0.5 : 0:2] }   # 1
    if (one_ideal) {
        plot for [g=1:groups] data(g) using 1:5 with linespoints ls g title titles[g], \
             data(ideal_group) using 1:6 with lines lc rgb "black" dt 3 title "ideal"
    } else {
        plot for [g=1:groups] data(g) using 1:5 with linespoints ls g title titles[g], \
             for [g=1:groups] data(g) using 1:6 with lines ls g dt 3 \
                 title (g == 1 ? "ideal (dotted)" : "")
    }
    unset multiplot
}
