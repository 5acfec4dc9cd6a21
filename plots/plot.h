/* plot.h: `asgd plot DIR... -o FIG.pdf|png|svg [options]`: figures from run
 * folders, drawn by a real gnuplot process through a pipe.
 *
 * The runs are the complete run folders under each DIR (runs.h), grouped
 * by --group KEY (a config key, read from the run's resolved config.ini;
 * by default experiment.label, which is the algorithm's name unless a
 * config sets it; or a summary field such as workers); each group is one
 * line, bar or curve of the --kind of figure (figures.h), in a style of
 * its own (16 colours; 16 dash and point pairs for black and white). Axis
 * labels, legends and the title are in words (labels.h); the title states
 * what all runs share (model, data set, workers, how many runs a line
 * averages: "mean of 3-4 runs" where lines differ) unless --title
 * gives one. --size column|page|slide sets the figure's size and fonts.
 * Beside FIG go FIG.gp (the gnuplot script: a prologue of variables, then
 * the templates of plots/templates/) and its data files (FIG-N.dat), one
 * set per output file: `cd` to the figure's folder and `gnuplot FIG.gp`
 * redraws it without asgd. */
#ifndef ASGD_PLOT_H
#define ASGD_PLOT_H

#include "core/error.h"

int plot_main(int argc, char **argv, error *err);

#endif
