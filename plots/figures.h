/* figures.h: the kinds of figure asgd plot draws. Each kind writes its
 * data files beside the figure (STEM-G.dat, one per group, or STEM-1.dat
 * for bars), defines the gnuplot variables its template reads, and names
 * that template (plots/templates/KIND.gp):
 *   convergence       test accuracy (--y acc) or loss (--y loss) against
 *                     --x time | epoch | updates; the mean over the group's
 *                     runs (seeds) on a common grid, with a min-max band
 *   scaling           a summary field (--y, default samples_per_s) against
 *                     --x (default workers: a summary field or config key),
 *                     mean with min-max bars over the runs with a finite
 *                     value (those without are named on stderr); for
 *                     samples/s against workers also the speed-up, with
 *                     the ideal line (each group's own where their fewest
 *                     workers differ)
 *   staleness         the cumulative distribution of push staleness
 *   time-to-accuracy  bars: time until test accuracy first reaches --target
 *   throughput        bars: samples/s
 * A group with a diverged run is labelled "(diverged)" in every kind. */
#ifndef ASGD_FIGURES_H
#define ASGD_FIGURES_H

#include <stdbool.h>
#include <stdio.h>

#include "core/error.h"
#include "plots/runs.h"

enum figure_kind { KIND_CONVERGENCE, KIND_SCALING, KIND_STALENESS, KIND_TTA, KIND_THROUGHPUT };

/* The kinds' names, in enum order, NULL-terminated. */
extern const char *const figure_kinds[];

typedef struct figure_options {
    int kind;                 /* enum figure_kind */
    const char *x, *y;        /* the axes' keys (defaults filled by the parser) */
    double target;            /* time-to-accuracy: the test accuracy to reach */
    bool logx, logy;          /* log axes: a point at 0 or below has no place on them */
} figure_options;

/* A figure's place: its folder and the stem of its files. */
typedef struct figure_place {
    char dir[4096];
    char stem[1024];
} figure_place;

/* Whether a run is drawn in a figure of o's kind (convergence: it has a
 * point; scaling: a number at x and a finite y; staleness: it recorded
 * pushes; bars: it has a value): what a title's "mean of N runs" counts. */
bool figure_run_drawn(const figure_options *o, const plot_run *run);

/* A bar figure's value for one run (time-to-accuracy: the time its test
 * accuracy first reached the target; throughput: its samples/s); NaN when
 * it has none. */
double figure_bar_value(const figure_options *o, const plot_run *run);

/* Writes the kind's data files into place->dir and its variables to gp;
 * returns its template's name, or NULL with err set. */
const char *figure_write(const figure_options *o, plot_runs *set, const figure_place *place,
                         FILE *gp, error *err);

#endif
