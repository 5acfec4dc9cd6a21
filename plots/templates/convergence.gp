# convergence.gp: test accuracy or loss of each group against time,
# epochs or updates: the mean over the group's runs (seeds) as a line,
# their min-max as a band of its colour. STEM-G.dat: x mean min max.
set xlabel xlabel
set ylabel ylabel
# a band is held inside a given y range: gnuplot clips lines at the frame,
# but drew the part of a band below the range outside the frame, to its left
inside(v) = !exists("yrange_lo") ? v : \
            v < (yrange_lo < yrange_hi ? yrange_lo : yrange_hi) ? (yrange_lo < yrange_hi ? yrange_lo : yrange_hi) : \
            v > (yrange_lo < yrange_hi ? yrange_hi : yrange_lo) ? (yrange_lo < yrange_hi ? yrange_hi : yrange_lo) : v
plot for [g=1:groups] data(g) using 1:(inside($3)):(inside($4)) with filledcurves \
         fs transparent solid 0.15 \
         noborder ls g notitle, \
     for [g=1:groups] data(g) using 1:2 with linespoints ls g title titles[g]
