# staleness.gp: the cumulative distribution of push staleness per group,
# the x axis to where every group has 99.9% of its pushes (xmax, set by
# asgd plot; the largest staleness is in the x label).
# STEM-G.dat: staleness cdf.
set xlabel xlabel
set ylabel "fraction of pushes"
if (!exists("yrange_set")) { set yrange [0:1.05] }
if (!exists("xrange_set")) { set xrange [0:xmax] }
plot for [g=1:groups] data(g) using 1:2 with steps ls g title titles[g]
