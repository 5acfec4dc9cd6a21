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
