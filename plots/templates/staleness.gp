# staleness.gp: the cumulative distribution of push staleness per group.
# STEM-G.dat: staleness cdf.
set xlabel "staleness (updates)"
set ylabel "fraction of pushes"
set yrange [0:1.05]
plot for [g=1:groups] data(g) using 1:2 with steps ls g title titles[g]
