# accuracy-vs-workers.png drawn by asgd plot from 108 runs; redraw with: gnuplot accuracy-vs-workers.gp
set terminal pngcairo noenhanced font "Sans,11" size 1100,660
set output 'accuracy-vs-workers.png'
colors = "#0072b2 #d55e00 #009e73 #cc79a7 #e69f00 #56b4e9 #000000 #f0e442"
set style line 1 lc rgb word(colors, 1) lw 2 dt 1 pt 1 ps 0.8 pi 6
set style line 2 lc rgb word(colors, 2) lw 2 dt 2 pt 2 ps 0.8 pi 6
set style line 3 lc rgb word(colors, 3) lw 2 dt 3 pt 3 ps 0.8 pi 6
set style line 4 lc rgb word(colors, 4) lw 2 dt 4 pt 4 ps 0.8 pi 6
set style line 5 lc rgb word(colors, 5) lw 2 dt 5 pt 5 ps 0.8 pi 6
set style line 6 lc rgb word(colors, 6) lw 2 dt 1 pt 6 ps 0.8 pi 6
set style increment user
set grid lc rgb "#dddddd"
set key outside right top box opaque
set title "final test accuracy against workers (mean, min-max over 3 seeds)"
set logscale x
set xlabel "workers"
set ylabel "final_test_acc"
plot 'accuracy-vs-workers-1.dat' using 1:2:3:4 with yerrorlines ls 1 title "agn", \
     'accuracy-vs-workers-2.dat' using 1:2:3:4 with yerrorlines ls 2 title "downpour", \
     'accuracy-vs-workers-3.dat' using 1:2:3:4 with yerrorlines ls 3 title "dynsgd", \
     'accuracy-vs-workers-4.dat' using 1:2:3:4 with yerrorlines ls 4 title "easgd", \
     'accuracy-vs-workers-5.dat' using 1:2:3:4 with yerrorlines ls 5 title "hogwild", \
     'accuracy-vs-workers-6.dat' using 1:2:3:4 with yerrorlines ls 6 title "sync"
