/* plot.h: `asgd plot DIR... -o FIG.pdf|png|svg [options]`: figures from run
 * folders, drawn by a real gnuplot process through a pipe.
 *
 * Runs are the folders under each DIR (searched down to 4 levels) holding a
 * complete summary.json. Runs are grouped by --group KEY (a config key,
 * read from the run's resolved config.ini; by default experiment.label,
 * which is the algorithm's name unless a config sets it; or a summary field
 * such as workers); each group is one line, bar or curve. Kinds:
 *   convergence       test accuracy (--y acc) or loss (--y loss) against
 *                     --x time | epoch | updates; the mean over the group's
 *                     runs (seeds) with a min-max band
 *   scaling           a summary field (--y, default samples_per_s) against
 *                     --x (default workers: a summary field or config key),
 *                     mean with min-max bars; for samples/s against workers
 *                     also the speed-up, with the ideal line
 *   staleness         the cumulative distribution of push staleness
 *   time-to-accuracy  bars: time until test accuracy first reaches --target
 *   throughput        bars: samples/s
 * Beside FIG go FIG's stem + ".gp" (the gnuplot script) and its data files
 * (stem-N.dat): `cd` to the figure's folder and `gnuplot STEM.gp` redraws
 * it without asgd. Lines differ in dash and point type as well as colour,
 * so figures survive black-and-white printing; the legend sits outside the
 * plot, hiding no data. */
#ifndef ASGD_PLOT_H
#define ASGD_PLOT_H

#include "core/error.h"

int plot_main(int argc, char **argv, error *err);

#endif
