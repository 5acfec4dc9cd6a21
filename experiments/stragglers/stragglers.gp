# stragglers.png drawn by asgd plot from 16 runs; redraw with: gnuplot stragglers.gp
set terminal pngcairo noenhanced font "Sans,11" size 1100,660
set output 'stragglers.png'
colors = "#0072b2 #d55e00 #009e73 #cc79a7 #e69f00 #56b4e9 #000000 #f0e442"
set style line 1 lc rgb word(colors, 1) lw 2 dt 1 pt 1 ps 0.8 pi 6
set style line 2 lc rgb word(colors, 2) lw 2 dt 2 pt 2 ps 0.8 pi 6
set style line 3 lc rgb word(colors, 3) lw 2 dt 3 pt 3 ps 0.8 pi 6
set style line 4 lc rgb word(colors, 4) lw 2 dt 4 pt 4 ps 0.8 pi 6
set style increment user
set grid lc rgb "#dddddd"
set key outside right top box opaque
set title "virtual time to finish 3 epochs against the fraction of 4x-slower workers"
set xlabel "sim.straggler_fraction"
set ylabel "time_s"
plot 'stragglers-1.dat' using 1:2:3:4 with yerrorlines ls 1 title "dynsgd", \
     'stragglers-2.dat' using 1:2:3:4 with yerrorlines ls 2 title "hogwild", \
     'stragglers-3.dat' using 1:2:3:4 with yerrorlines ls 3 title "sync", \
     'stragglers-4.dat' using 1:2:3:4 with yerrorlines ls 4 title "sync-backups=2"
