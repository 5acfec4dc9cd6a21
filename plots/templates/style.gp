# style.gp: the house style of asgd's figures, read before each kind's
# template. asgd plot defines above it: stem (data files STEM-G.dat),
# groups, titles[g] (each group's legend), figure_title, logx, logy,
# size (column, page or slide), key_below (where the key goes), group_label (the grouping key in words),
# and a line style per group: 16 colours, and 16 pairs of dash pattern
# and point type, so that groups differ in colour and in black and white.
set grid lc rgb "#dddddd"
# below the plot where asgd plot says (key_below: a column's width, or a
# page with many groups, which beside it took half the width)
if (key_below) {
    set key below horizontal maxrows 4 samplen 2.5 spacing 0.9 height 1
} else {
    set key outside right top box opaque
}
set title figure_title
if (logx) { set logscale x }
if (logy) { set logscale y }
data(g) = sprintf("%s-%d.dat", stem, g)
