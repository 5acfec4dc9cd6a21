# staleness-vs-workers.png drawn by asgd plot from 108 runs; redraw with: gnuplot staleness-vs-workers.gp
set terminal pngcairo noenhanced font "Sans,11" size 1100,660
set output "staleness-vs-workers.png"
stem = "staleness-vs-workers"
groups = 6
array titles[6] = ["agn", "downpour", "dynsgd", "easgd", "hogwild", "sync"]
figure_title = "mean staleness of pushes against workers"
logx = 1
logy = 0
xlabel = "workers"
ylabel = "staleness_mean"
speedup = 0

# style.gp: the house style of asgd's figures, read before each kind's
# template. asgd plot defines above it: stem (data files STEM-G.dat),
# groups, titles[g] (each group's legend), figure_title, logx and logy.
#
# Colours (Okabe-Ito), dashes and point types cycle with different
# periods, so every group differs in print, in colour or not.
colors = "#0072b2 #d55e00 #009e73 #cc79a7 #e69f00 #56b4e9 #000000 #f0e442"
do for [g=1:groups] {
    set style line g lc rgb word(colors, 1+(g-1)%8) lw 2 dt 1+(g-1)%5 pt 1+(g-1)%11 ps 0.8 pi 6
}
set style increment user
set grid lc rgb "#dddddd"
set key outside right top box opaque
set title figure_title
if (logx) { set logscale x }
if (logy) { set logscale y }
data(g) = sprintf("%s-%d.dat", stem, g)

# scaling.gp: a summary field of each group against a key (workers, by
# default), the mean with min-max bars; with speedup, beside it the
# speed-up over the group's first point and the ideal line.
# STEM-G.dat: x mean min max speedup ideal.
set xlabel xlabel
set ylabel ylabel
if (speedup) { set multiplot layout 1,2 }
plot for [g=1:groups] data(g) using 1:2:3:4 with yerrorlines ls g title titles[g]
if (speedup) {
    set ylabel "speed-up"
    plot for [g=1:groups] data(g) using 1:5 with linespoints ls g title titles[g], \
         data(1) using 1:6 with lines lc rgb "black" dt 3 title "ideal"
    unset multiplot
}
