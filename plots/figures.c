/* figures.c: each kind's data files and gnuplot variables. */
#include "plots/figures.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cJSON.h>

#include "plots/gnuplot.h"
#include "plots/labels.h"

#define FIGURE_MAX_POINTS 2000   /* a convergence curve's points, at most */

const char *const figure_kinds[] = {"convergence", "scaling", "staleness", "time-to-accuracy",
                                    "throughput", NULL};

/* STEM-N.dat in the figure's folder, opened for writing with a comment. */
static FILE *s_data(const figure_place *place, int n, const char *comment, error *err)
{
    char path[6400];
    snprintf(path, sizeof path, "%s/%.1100s-%d.dat", place->dir, place->stem, n);
    FILE *f = fopen(path, "w");
    if (!f) {
        error_set(err, ERROR_RUNTIME, "%s: cannot write", path);
        return NULL;
    }
    fprintf(f, "# %s\n", comment);
    return f;
}

static int s_close(FILE *f, const figure_place *place, error *err)
{
    return fclose(f) == 0 ? 0 : error_set(err, ERROR_RUNTIME, "%s: cannot write data", place->dir);
}

/* A gnuplot string variable. */
static void s_string(FILE *gp, const char *name, const char *value)
{
    char quoted[600];
    gnuplot_quote(quoted, sizeof quoted, value);
    fprintf(gp, "%s = %s\n", name, quoted);
}

/* One curve per run of group g, as eval.csv columns. */
typedef struct curves {
    double *xs[PLOT_MAX_RUNS], *ys[PLOT_MAX_RUNS];
    int n[PLOT_MAX_RUNS];
    int count;
    double xmax;              /* the shortest run's last x: where every run has data */
    int shortest;             /* that run's index in the set */
    double longest;           /* the longest run's last x */
} curves;

static void s_read_curves(curves *c, const plot_runs *set, int g, int xc, int yc)
{
    c->count = 0;
    c->xmax = INFINITY;
    c->shortest = -1;
    c->longest = -INFINITY;
    for (int r = 0; r < set->count; r++) {
        if (set->runs[r].g != g) {
            continue;
        }
        int k = c->count;
        int back;
        c->n[k] = plot_run_eval(&set->runs[r], xc, yc, &c->xs[k], &c->ys[k], &back);
        if (back > 0) {   /* a shard restored from its checkpoint took its updates back */
            fprintf(stderr, "%s: %s: %d evaluation%s after its %s went back left out "
                    "(a curve is a function of x)\n", plot_name, set->runs[r].dir, back,
                    back > 1 ? "s" : "", xc == 2 ? "updates" : xc == 1 ? "epoch" : "time");
        }
        if (c->n[k] > 0) {
            double last = c->xs[k][c->n[k] - 1];
            if (last < c->xmax) {
                c->xmax = last;
                c->shortest = r;
            }
            c->longest = fmax(c->longest, last);
            c->count++;
        } else {
            free(c->xs[k]);
            free(c->ys[k]);
        }
    }
}

static void s_free_curves(curves *c)
{
    for (int k = 0; k < c->count; k++) {
        free(c->xs[k]);
        free(c->ys[k]);
    }
}

static int s_compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The x values at which the runs of c were evaluated, up to c->xmax,
 * sorted and each once, thinned evenly to at most FIGURE_MAX_POINTS (the
 * last kept): a single run's curve is its own points, not a resampling
 * that would straighten what happens between grid points. NULL when out
 * of memory. */
static double *s_grid(const curves *c, int *count)
{
    size_t total = 0;
    for (int k = 0; k < c->count; k++) {
        total += (size_t)c->n[k];
    }
    double *g = malloc((total ? total : 1) * sizeof *g);
    if (!g) {
        return NULL;
    }
    size_t n = 0;
    for (int k = 0; k < c->count; k++) {
        for (int i = 0; i < c->n[k] && c->xs[k][i] <= c->xmax; i++) {
            g[n++] = c->xs[k][i];
        }
    }
    qsort(g, n, sizeof *g, s_compare_doubles);
    size_t unique = 0;
    for (size_t i = 0; i < n; i++) {
        if (unique == 0 || g[i] != g[unique - 1]) {
            g[unique++] = g[i];
        }
    }
    size_t step = (unique + FIGURE_MAX_POINTS - 1) / FIGURE_MAX_POINTS, kept = 0;
    for (size_t i = 0; step > 1 && i < unique; i++) {
        if (i % step == 0 || i == unique - 1) {
            g[kept++] = g[i];
        }
    }
    *count = (int)(step > 1 ? kept : unique);
    return g;
}

/* Run k's value at x, with x never below the last call's (cursor[k]
 * walks its points once): where several of its points are at x, the
 * last (the final evaluation, made after a periodic one at the same
 * time, was left out). */
static double s_at(const curves *c, int k, int *cursor, double x)
{
    const double *xs = c->xs[k], *ys = c->ys[k];
    int i = cursor[k];
    while (i < c->n[k] && xs[i] <= x) {
        i++;
    }
    cursor[k] = i;
    if (i == 0) {
        return ys[0];
    }
    if (i == c->n[k]) {
        return ys[i - 1];
    }
    /* xs[i - 1] <= x < xs[i] */
    return ys[i - 1] + (ys[i] - ys[i - 1]) * (x - xs[i - 1]) / (xs[i] - xs[i - 1]);
}

/* Whether a point at x with values down to lo has no place on o's log
 * axes (the evaluation at time 0 on --logx, a loss or staleness of 0 on
 * --logy): gnuplot drops it without a word, and a band from it is drawn
 * from the axis' edge, over values no run had. */
static bool s_off_log_axes(const figure_options *o, double x, double lo)
{
    return (o->logx && !(x > 0)) || (o->logy && !(lo > 0));
}

/* Says on stderr how many of group g's points s_off_log_axes left out. */
static void s_say_off_log_axes(const figure_options *o, const plot_runs *set, int g, int left,
                               int of)
{
    if (left > 0) {
        fprintf(stderr, "%s: %s: %d of its %d points are at or below 0 on a log axis "
                "(--log%s) and left out%s\n", plot_name, set->groups[g], left, of,
                o->logx && o->logy ? "x, --logy" : o->logx ? "x" : "y",
                left == of ? ": it has no line" : "");
    }
}

/* Group g's mean and min-max at every x where one of its runs was
 * evaluated (s_grid), each run interpolated between its own points;
 * returns how many of its runs have a curve, -1 on error. */
static int s_convergence_group(const figure_options *o, const plot_runs *set, int g, int xc,
                               int yc, const figure_place *place, error *err)
{
    curves *c = malloc(sizeof *c);
    FILE *f = c ? s_data(place, g + 1, set->groups[g], err) : NULL;
    if (!f) {
        free(c);
        return c ? -1 : error_set(err, ERROR_RUNTIME, "out of memory");
    }
    s_read_curves(c, set, g, xc, yc);
    if (c->shortest >= 0 && c->xmax < c->longest &&
        cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(set->runs[c->shortest].summary,
                                                      "diverged"))) {
        /* the mean of all its runs ends there: a seed that diverged at
         * once left a group of good runs one point */
        fprintf(stderr, "%s: %s: its line ends at %s %g, where %s diverged; its other "
                "runs go on to %g (--group seed draws each run)\n", plot_name, set->groups[g],
                xc == 0 ? "time" : xc == 1 ? "epoch" : "updates", c->xmax,
                set->runs[c->shortest].dir, c->longest);
    }
    int curves = c->count, points = 0, cursor[PLOT_MAX_RUNS] = {0};
    double *grid = s_grid(c, &points);
    fprintf(f, "# x mean min max over %d runs\n", c->count);
    int off = 0;
    for (int i = 0; grid && i < points; i++) {
        double x = grid[i], sum = 0, lo = INFINITY, hi = -INFINITY;
        for (int k = 0; k < c->count; k++) {
            double y = s_at(c, k, cursor, x);
            sum += y;
            lo = fmin(lo, y);
            hi = fmax(hi, y);
        }
        if (s_off_log_axes(o, x, lo)) {
            off++;
            continue;
        }
        fprintf(f, "%.9g %.9g %.9g %.9g\n", x, sum / c->count, lo, hi);
    }
    s_say_off_log_axes(o, set, g, off, points);
    free(grid);
    s_free_curves(c);
    free(c);
    if (!grid) {
        fclose(f);
        return error_set(err, ERROR_RUNTIME, "out of memory");
    }
    return s_close(f, place, err) < 0 ? -1 : curves;
}

/* The eval.csv column of a convergence figure's x. */
static int s_column(const char *x)
{
    return strcmp(x, "epoch") == 0 ? 1 : strcmp(x, "updates") == 0 ? 2 : 0;
}

static const char *s_convergence(const figure_options *o, plot_runs *set,
                                 const figure_place *place, FILE *gp, error *err)
{
    int xc = s_column(o->x), yc = strcmp(o->y, "loss") == 0 ? 4 : 5;
    s_string(gp, "xlabel", label_of(o->x));
    s_string(gp, "ylabel", label_of(yc == 4 ? "loss" : "acc"));
    int curves = 0;
    for (int g = 0; g < set->ngroups; g++) {
        int n = s_convergence_group(o, set, g, xc, yc, place, err);
        if (n < 0) {
            return NULL;
        }
        curves += n;
    }
    if (curves == 0) {   /* not a figure of empty axes */
        error_set(err, ERROR_USAGE, "%s: --y %s: no run has a test %s at any evaluation%s",
                  plot_name, o->y, yc == 4 ? "loss" : "accuracy",
                  yc == 5 ? " (a regression run has none: --y loss)" : "");
        return NULL;
    }
    return "convergence";
}

static int s_by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Group g's distinct x values where one of its runs has a finite y
 * (scaling: an x with data), sorted; returns their count. */
static int s_group_xs(const plot_runs *set, int g, double *xv)
{
    int nx = 0;
    for (int r = 0; r < set->count; r++) {
        double x = set->runs[r].x;
        bool seen = false;
        for (int i = 0; i < nx; i++) {
            seen = seen || xv[i] == x;
        }
        if (set->runs[r].g == g && !isnan(x) && isfinite(set->runs[r].y) && !seen) {
            xv[nx++] = x;
        }
    }
    qsort(xv, (size_t)nx, sizeof *xv, s_by_value);
    return nx;
}

/* A scaling point: the mean and min-max of group g's y at x over its
 * runs with a finite y there. */
typedef struct point {
    double mean, lo, hi;
} point;

static point s_point(const plot_runs *set, int g, double x)
{
    point p = {.lo = INFINITY, .hi = -INFINITY};
    double sum = 0;
    int k = 0;
    for (int r = 0; r < set->count; r++) {
        double y = set->runs[r].y;
        if (set->runs[r].g == g && set->runs[r].x == x && isfinite(y)) {
            sum += y;
            p.lo = fmin(p.lo, y);
            p.hi = fmax(p.hi, y);
            k++;
        }
    }
    p.mean = sum / k;   /* k > 0: x is one of s_group_xs's */
    return p;
}

/* Says on stderr when runs of group g with an x have no finite y (a
 * diverged run's loss, a field a run lacks, or one of a diverged run's
 * length): its points are the others' mean, min and max, and an x with
 * none of them has no point. */
static void s_report_skipped(const figure_options *o, const plot_runs *set, int g)
{
    int runs = 0, skipped = 0, cut = 0;
    for (int r = 0; r < set->count; r++) {
        if (set->runs[r].g == g && !isnan(set->runs[r].x)) {
            runs++;
            skipped += !isfinite(set->runs[r].y);
            cut += plot_run_cut_short(&set->runs[r], o->x) ||
                   plot_run_cut_short(&set->runs[r], o->y);
        }
    }
    if (skipped > 0) {
        char why[96] = "";
        if (cut > 0) {
            snprintf(why, sizeof why, "; %d of them diverged, and so ran short", cut);
        }
        fprintf(stderr, "%s: %s: %d of %d runs have no finite %s (left out of its "
                "points%s)\n", plot_name, set->groups[g], skipped, runs, o->y, why);
    }
}

/* x, or NaN where it is not finite (gnuplot skips both; it read "inf" and
 * "-nan" as numbers in files meant to be read again), then end. */
static void s_number_or_nan(FILE *f, double x, const char *end)
{
    if (isfinite(x)) {
        fprintf(f, "%.9g%s", x, end);
    } else {
        fprintf(f, "NaN%s", end);
    }
}

/* Group g's mean and min-max y at each x, with the speed-up over its
 * first x and the ideal one. */
static int s_scaling_group(const figure_options *o, const plot_runs *set, int g,
                           const figure_place *place, error *err)
{
    double *xv = malloc(PLOT_MAX_RUNS * sizeof *xv);
    FILE *f = xv ? s_data(place, g + 1, set->groups[g], err) : NULL;
    if (!f) {
        free(xv);
        return xv ? -1 : error_set(err, ERROR_RUNTIME, "out of memory");
    }
    s_report_skipped(o, set, g);
    int nx = s_group_xs(set, g, xv);
    fprintf(f, "# x mean min max speedup ideal\n");
    double base = NAN;
    int off = 0;
    for (int i = 0; i < nx; i++) {
        point p = s_point(set, g, xv[i]);
        if (i == 0) {
            base = p.mean;
        }
        if (s_off_log_axes(o, xv[i], p.lo)) {
            off++;
            continue;
        }
        /* no speed-up over a base of 0 or none */
        double speedup = base != 0 && isfinite(base) ? p.mean / base : NAN;
        double ideal = xv[0] > 0 ? xv[i] / xv[0] : NAN;   /* none from an x of 0 */
        fprintf(f, "%.9g %.9g %.9g %.9g ", xv[i], p.mean, p.lo, p.hi);
        s_number_or_nan(f, speedup, " ");
        s_number_or_nan(f, ideal, "\n");
    }
    s_say_off_log_axes(o, set, g, off, nx);
    free(xv);
    return s_close(f, place, err);
}

static const char *s_scaling(const figure_options *o, plot_runs *set, const figure_place *place,
                             FILE *gp, error *err)
{
    bool xs_known = false, ys_known = false;
    for (int r = 0; r < set->count; r++) {
        const plot_run *run = &set->runs[r];
        double x = plot_run_number(run, o->x), y = plot_run_number(run, o->y);
        bool cut = plot_run_cut_short(run, o->x) || plot_run_cut_short(run, o->y);
        set->runs[r].x = x;
        set->runs[r].y = cut ? NAN : y;
        xs_known = xs_known || !isnan(set->runs[r].x);
        ys_known = ys_known || !isnan(y);
    }
    if (!xs_known || !ys_known) {
        error_set(err, ERROR_USAGE, "%s: %s %s: no run has a number there (a summary "
                  "field such as samples_per_s, or a config key such as cluster.workers)",
                  plot_name, xs_known ? "--y" : "--x", xs_known ? o->y : o->x);
        return NULL;
    }
    s_string(gp, "xlabel", label_of(o->x));
    s_string(gp, "ylabel", label_of(o->y));
    bool speedup = strcmp(o->y, "samples_per_s") == 0 &&
                   (strcmp(o->x, "workers") == 0 || strcmp(o->x, "cluster.workers") == 0);
    fprintf(gp, "speedup = %d\n", speedup);
    /* a tick at every x with data (a log axis labels only powers of ten),
     * and the base of each group's speed-up: its smallest x */
    double *xs = malloc(PLOT_MAX_RUNS * sizeof *xs), base = NAN, top = -INFINITY;
    int nx = 0, widest = 0;   /* the group whose x reach furthest: the one ideal line's */
    bool one_base = true;
    for (int g = 0; xs && g < set->ngroups; g++) {
        double *gx = xs + nx;
        int n = s_group_xs(set, g, gx);
        if (n > 0) {
            one_base = one_base && (isnan(base) || base == gx[0]);
            base = isnan(base) ? gx[0] : base;
            widest = gx[n - 1] > top ? g : widest;
            top = fmax(top, gx[n - 1]);
        }
        nx += n;
    }
    if (xs && nx > 0 && nx <= PLOT_MAX_RUNS) {
        qsort(xs, (size_t)nx, sizeof *xs, s_by_value);
        fprintf(gp, "set xtics (");
        for (int i = 0; i < nx; i++) {
            if (i == 0 || xs[i] != xs[i - 1]) {
                fprintf(gp, "%s\"%g\" %.9g", i ? ", " : "", xs[i], xs[i]);
            }
        }
        fprintf(gp, ")\n");
        if (xs[0] == xs[nx - 1] && !(o->logx && xs[0] <= 0)) {   /* one x: the template
                                      * gives it a range (gnuplot warned of an empty one) */
            fprintf(gp, "x_single = %.9g\n", xs[0]);
        }
    }
    free(xs);
    double y_lo = INFINITY, y_hi = -INFINITY;   /* likewise one y, of the points drawn */
    for (int r = 0; r < set->count; r++) {
        const plot_run *run = &set->runs[r];
        if (isfinite(run->y) && !isnan(run->x) && !(o->logy && run->y <= 0) &&
            !(o->logx && run->x <= 0)) {
            y_lo = fmin(y_lo, run->y);
            y_hi = fmax(y_hi, run->y);
        }
    }
    if (y_lo == y_hi) {
        fprintf(gp, "y_single = %.9g\n", y_lo);
    }
    char words[200];
    if (one_base && !isnan(base)) {
        snprintf(words, sizeof words, "speed-up over %g %s", base,
                 base == 1 && strcmp(label_of(o->x), "workers") == 0 ? "worker" : label_of(o->x));
    } else {
        snprintf(words, sizeof words, "speed-up over each group's fewest %s", label_of(o->x));
    }
    s_string(gp, "speedup_label", words);
    fprintf(gp, "one_ideal = %d\n", one_base);   /* else each group's own, in its colour */
    /* (the first group's points drew it: no line where that group had one x) */
    fprintf(gp, "ideal_group = %d\n", widest + 1);
    for (int g = 0; g < set->ngroups; g++) {
        if (s_scaling_group(o, set, g, place, err) < 0) {
            return NULL;
        }
    }
    return "scaling";
}

/* Run r's staleness histogram and its pushes (0 without one: a run
 * that recorded none, or sequential, which pushes nothing). */
static const cJSON *s_histogram(const plot_run *run, double *pushes)
{
    cJSON *a = cJSON_GetObjectItemCaseSensitive(run->summary, "staleness_histogram");
    *pushes = 0;
    for (int i = 0; cJSON_IsArray(a) && i < cJSON_GetArraySize(a) && i < 64; i++) {
        *pushes += cJSON_GetArrayItem(a, i)->valuedouble;
    }
    return *pushes > 0 ? a : NULL;
}

/* Group g's staleness histogram, summed over its runs that recorded
 * pushes, as a CDF; *p999 the staleness by which 99.9% of its pushes
 * came, *largest the most (its runs' staleness_max: the histogram's last
 * bin holds 63 and above), and *open whether any push is in that last
 * bin. A group with no pushes has no line (it had a CDF of 1 from 0: as
 * if every push had been fresh) and *p999 -1. */
static int s_staleness_group(const plot_runs *set, int g, const figure_place *place,
                             int *p999, int *largest, bool *open, error *err)
{
    double h[64] = {0}, total = 0, most = 0;
    int runs = 0, without = 0;
    for (int r = 0; r < set->count; r++) {
        double pushes;
        if (set->runs[r].g != g) {
            continue;
        }
        const cJSON *a = s_histogram(&set->runs[r], &pushes);
        runs++;
        if (!a) {
            without++;
            continue;
        }
        double run_most = plot_run_number(&set->runs[r], "staleness_max");
        most = run_most > most ? run_most : most;
        for (int i = 0; i < cJSON_GetArraySize(a) && i < 64; i++) {
            h[i] += cJSON_GetArrayItem(a, i)->valuedouble;
        }
        total += pushes;
    }
    if (without > 0) {
        fprintf(stderr, "%s: %s: %d of %d runs recorded no pushes' staleness (%s)\n",
                plot_name, set->groups[g], without, runs,
                without == runs ? "no line" : "left out of its line");
    }
    FILE *f = s_data(place, g + 1, set->groups[g], err);
    if (!f) {
        return -1;
    }
    fprintf(f, "# staleness cdf\n");
    double acc = 0;
    int last = 63;
    while (last > 0 && h[last] == 0) {
        last--;
    }
    *largest = most > last ? (int)fmin(most, 1e9) : last;
    *open = h[63] > 0;
    *p999 = -1;
    for (int i = 0; total > 0 && i <= last + 1 && i < 64; i++) {
        acc += h[i];
        if (acc / total >= 0.999 && *p999 < 0) {
            *p999 = i;
        }
        fprintf(f, "%d %.9g\n", i, acc / total);
    }
    return s_close(f, place, err);
}

static const char *s_staleness(const figure_options *o, plot_runs *set,
                               const figure_place *place, FILE *gp, error *err)
{
    (void)o;
    int xmax = 1, largest = 0, lines = 0;
    bool open = false;
    for (int g = 0; g < set->ngroups; g++) {
        int p999, most;
        bool group_open;
        if (s_staleness_group(set, g, place, &p999, &most, &group_open, err) < 0) {
            return NULL;
        }
        if (p999 < 0) {
            continue;
        }
        lines++;
        xmax = p999 + 1 > xmax ? p999 + 1 : xmax;
        largest = most > largest ? most : largest;
        open = open || group_open;
    }
    if (lines == 0) {   /* not a figure of empty axes */
        error_set(err, ERROR_USAGE, "%s: --kind staleness: no run recorded the "
                  "staleness of a push (sequential runs push nothing)", plot_name);
        return NULL;
    }
    char words[160];
    if (open && xmax > 63) {   /* the last point is of every push from 63 on */
        snprintf(words, sizeof words, "staleness (updates; 63: 63 or more; max %d)", largest);
    } else if (largest >= xmax) {   /* a few pushes lie beyond the axis: say how far (the
                                     * label as short as a column's width allows) */
        snprintf(words, sizeof words, "staleness (updates; 99.9%% shown; max %d)", largest);
    } else {
        snprintf(words, sizeof words, "staleness (updates)");
    }
    s_string(gp, "xlabel", words);
    fprintf(gp, "xmax = %d\n", xmax);
    return "staleness";
}

bool figure_run_drawn(const figure_options *o, const plot_run *run)
{
    switch (o->kind) {
    case KIND_CONVERGENCE: {
        double *xs, *ys;
        int n = plot_run_eval(run, s_column(o->x), strcmp(o->y, "loss") == 0 ? 4 : 5, &xs, &ys,
                              NULL);
        free(xs);
        free(ys);
        return n > 0;
    }
    case KIND_SCALING:
        return !isnan(plot_run_number(run, o->x)) && isfinite(plot_run_number(run, o->y)) &&
               !plot_run_cut_short(run, o->x) && !plot_run_cut_short(run, o->y);
    case KIND_STALENESS: {
        double pushes;
        return s_histogram(run, &pushes) != NULL;
    }
    default:
        return !isnan(figure_bar_value(o, run));
    }
}

double figure_bar_value(const figure_options *o, const plot_run *run)
{
    if (o->kind == KIND_THROUGHPUT) {
        return plot_run_cut_short(run, "samples_per_s") ? NAN
                                                         : plot_run_number(run, "samples_per_s");
    }
    return plot_run_time_to(run, o->target);
}

/* A group's bar: the mean and range of its runs' values. */
typedef struct bar {
    char label[300];          /* the group, "(2/3 reached)" when only some runs did,
                               * "(diverged)" when one diverged */
    double mean, lo, hi;
    bool reached;             /* some run has a value */
    double share;             /* of its runs, those with a value */
} bar;

/* The groups whose every run has a value first, by it; then those of
 * which only some have one, the larger share first (a mean of the seeds
 * that reached the target put a rule that missed it on one seed ahead of
 * rules that always got there), then by it; those with none last. */
static int s_bar_order(const bar *x, const bar *y, int sign)
{
    if (x->share != y->share) {
        return x->share > y->share ? -1 : 1;
    }
    return sign * (x->mean < y->mean ? -1 : x->mean > y->mean);
}

static int s_bar_ascending(const void *a, const void *b)
{
    return s_bar_order(a, b, 1);
}

static int s_bar_descending(const void *a, const void *b)
{
    return s_bar_order(a, b, -1);
}

/* Group g's bar label: the group, with "k/runs reached" (time to
 * accuracy) or "k/runs measured" (throughput) when only some of its runs
 * have a value (the mean is of those) and "diverged" when one of its runs
 * did, as the line plots' legends say. */
static void s_bar_label(char *out, size_t n, const plot_runs *set, int g, int k, int runs,
                        const char *have)
{
    char reached[64] = "";
    if (k > 0 && k < runs) {
        snprintf(reached, sizeof reached, "%d/%d %s", k, runs, have);
    }
    bool diverged = set->diverged[g];
    if (reached[0] || diverged) {
        snprintf(out, n, "%s (%s%s%s)", set->groups[g], reached,
                 reached[0] && diverged ? ", " : "", diverged ? "diverged" : "");
    } else {
        snprintf(out, n, "%s", set->groups[g]);
    }
}

/* Bars best first: the least time to the target, the most samples/s, of
 * the groups whose every run has one (s_bar_order). */
static const char *s_bars(const figure_options *o, plot_runs *set, const figure_place *place,
                          FILE *gp, error *err)
{
    bar *bars = calloc((size_t)set->ngroups, sizeof *bars);
    FILE *f = bars ? s_data(place, 1, "group mean min max reached", err) : NULL;
    if (!f) {
        free(bars);
        if (!bars) {
            error_set(err, ERROR_RUNTIME, "out of memory");
        }
        return NULL;
    }
    bool throughput = o->kind == KIND_THROUGHPUT;
    for (int g = 0; g < set->ngroups; g++) {
        double sum = 0, lo = INFINITY, hi = -INFINITY;
        int k = 0, runs = 0;
        for (int r = 0; r < set->count; r++) {
            double v = set->runs[r].g == g ? figure_bar_value(o, &set->runs[r]) : NAN;
            runs += set->runs[r].g == g;
            if (!isnan(v)) {
                sum += v;
                lo = fmin(lo, v);
                hi = fmax(hi, v);
                k++;
            }
        }
        bars[g] = (bar){.mean = k ? sum / k : 0, .lo = k ? lo : 0, .hi = k ? hi : 0,
                        .reached = k > 0, .share = runs ? (double)k / runs : 0};
        s_bar_label(bars[g].label, sizeof bars[g].label, set, g, k, runs,
                    throughput ? "measured" : "reached");
        if (!k && throughput) {
            fprintf(stderr, "%s: %s has no samples/s in any run (shown as not "
                    "measured)\n", plot_name, set->groups[g]);
        } else if (!k) {
            fprintf(stderr, "%s: %s never reaches test accuracy %g (shown as not "
                    "reached)\n", plot_name, set->groups[g], o->target);
        }
    }
    qsort(bars, (size_t)set->ngroups, sizeof *bars,
          throughput ? s_bar_descending : s_bar_ascending);
    /* the labels hang right of their bars, 30 degrees down, the last ones
     * past the plot's right edge ("aeasgd (2/3 reach" was cut off): the
     * right margin is as wide as the longest of the last three reaches,
     * up to 24 characters (wider, it left no room for the bars: a label
     * longer than that is cut, as before) */
    size_t longest = 0;
    for (int g = set->ngroups > 3 ? set->ngroups - 3 : 0; g < set->ngroups; g++) {
        size_t len = strlen(bars[g].label);
        longest = len > longest ? len : longest;
    }
    fprintf(gp, "bars_rmargin = %d\n", (int)fmin(ceil(0.87 * (double)longest) + 2, 24));
    fprintf(gp, "bars_none = %d\n", !bars[0].reached);   /* best first: none has a bar */
    for (int g = 0; g < set->ngroups; g++) {
        char quoted[600];
        gnuplot_data_quote(quoted, sizeof quoted, bars[g].label);
        fprintf(f, "%s %.9g %.9g %.9g %d\n", quoted, bars[g].mean, bars[g].lo, bars[g].hi,
                bars[g].reached);
    }
    free(bars);
    char words[200];
    if (throughput) {
        snprintf(words, sizeof words, "%s", label_of("samples_per_s"));
    } else {
        snprintf(words, sizeof words, "time to test accuracy %g (s)", o->target);
    }
    s_string(gp, "ylabel", words);
    s_string(gp, "missing", throughput ? "not measured" : "not reached");
    return s_close(f, place, err) < 0 ? NULL : "bars";
}

const char *figure_write(const figure_options *o, plot_runs *set, const figure_place *place,
                         FILE *gp, error *err)
{
    switch (o->kind) {
    case KIND_CONVERGENCE:
        return s_convergence(o, set, place, gp, err);
    case KIND_SCALING:
        return s_scaling(o, set, place, gp, err);
    case KIND_STALENESS:
        return s_staleness(o, set, place, gp, err);
    default:
        return s_bars(o, set, place, gp, err);
    }
}
