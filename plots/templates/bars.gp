# bars.gp: one bar per group (time to accuracy, throughput), the mean
# with min-max bars. STEM-1.dat: "group" mean min max.
set style fill solid 0.5 border -1
set boxwidth 0.6
set yrange [0:*]
set xtics rotate by -30
set key off
set ylabel ylabel
plot data(1) using 0:2:xtic(1) with boxes lc rgb word(colors, 1) notitle, \
     '' using 0:2:3:4 with yerrorbars lc rgb "black" pt 0 notitle
