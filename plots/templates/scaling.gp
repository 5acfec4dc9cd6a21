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
if (speedup) { set multiplot layout 1,2 title figure_title; unset title }
plot for [g=1:groups] data(g) using 1:2:3:4 with yerrorlines ls g title titles[g]
if (speedup) {
    set ylabel speedup_label
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
