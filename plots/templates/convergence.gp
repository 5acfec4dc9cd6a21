# convergence.gp: test accuracy or loss of each group against time,
# epochs or updates: the mean over the group's runs (seeds) as a line,
# their min-max as a band of its colour. STEM-G.dat: x mean min max.
set xlabel xlabel
set ylabel ylabel
plot for [g=1:groups] data(g) using 1:3:4 with filledcurves fs transparent solid 0.15 \
         noborder ls g notitle, \
     for [g=1:groups] data(g) using 1:2 with linespoints ls g title titles[g]
