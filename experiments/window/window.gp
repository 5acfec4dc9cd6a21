# window.png drawn by asgd plot from 54 runs; redraw with: gnuplot window.gp
set terminal pngcairo noenhanced font "Sans,11" size 1100,660
set output 'window.png'
colors = "#0072b2 #d55e00 #009e73 #cc79a7 #e69f00 #56b4e9 #000000 #f0e442"
set style line 1 lc rgb word(colors, 1) lw 2 dt 1 pt 1 ps 0.8 pi 6
set style line 2 lc rgb word(colors, 2) lw 2 dt 2 pt 2 ps 0.8 pi 6
set style line 3 lc rgb word(colors, 3) lw 2 dt 3 pt 3 ps 0.8 pi 6
set style increment user
set grid lc rgb "#dddddd"
set key outside right top box opaque
set title "final test accuracy against the window, 4 workers (3 seeds)"
set logscale x
set xlabel "algorithm.window"
set ylabel "final_test_acc"
plot 'window-1.dat' using 1:2:3:4 with yerrorlines ls 1 title "aeasgd", \
     'window-2.dat' using 1:2:3:4 with yerrorlines ls 2 title "agn", \
     'window-3.dat' using 1:2:3:4 with yerrorlines ls 3 title "downpour"
