/* plot.c: `asgd plot`: options, the figure's script, and gnuplot. */
#include "plots/plot.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/stop.h"
#include "core/suggest.h"
#include "plots/figures.h"
#include "plots/gnuplot.h"
#include "plots/labels.h"
#include "plots/runs.h"

#define PLOT_MAX_DIRS 256

enum size { SIZE_COLUMN, SIZE_PAGE, SIZE_SLIDE };
static const char *const s_sizes[] = {"column", "page", "slide", NULL};

typedef struct options {
    figure_options figure;
    const char *out, *group, *title;
    const char *xrange, *yrange;   /* "LO:HI", either end may be empty; NULL: the kind's */
    int size;                 /* enum size */
    bool logx, logy;
    const char *dirs[PLOT_MAX_DIRS];
    int ndirs;
} options;

static const char s_usage[] =
    "usage: asgd plot RUN_OR_SWEEP_DIR... -o FIG.pdf|png|svg [--kind K] [--group KEY] "
    "[--x X] [--y Y] [--logx] [--logy] [--title T] [--target ACC] "
    "[--size column|page|slide] [--xrange LO:HI] [--yrange LO:HI]";

static int s_kind(const char *name, error *err)
{
    for (int j = 0; figure_kinds[j]; j++) {
        if (strcmp(name, figure_kinds[j]) == 0) {
            return j;
        }
    }
    return error_set(err, ERROR_USAGE, "%s: --kind %s is not one of convergence, "
                     "scaling, staleness, time-to-accuracy, throughput", plot_name, name);
}

/* "LO:HI" with finite numbers, LO below HI (either may be left out:
 * "0.8:"); 5:1 or nan reached gnuplot, which failed with a page of its
 * own. */
static int s_check_range(const char *option, const char *value, error *err)
{
    const char *colon = strchr(value, ':');
    bool ok = colon != NULL;
    double ends[2] = {-INFINITY, INFINITY};
    for (int side = 0; ok && side < 2; side++) {
        const char *at = side ? colon + 1 : value;
        size_t len = side ? strlen(at) : (size_t)(colon - value);
        char *end;
        char part[64];
        snprintf(part, sizeof part, "%.*s", (int)(len < 63 ? len : 63), at);
        if (len > 0) {
            ends[side] = strtod(part, &end);
            ok = len < 63 && *end == '\0' && end != part && isfinite(ends[side]);
        }
    }
    ok = ok && ends[0] < ends[1];
    return ok ? 0 : error_set(err, ERROR_USAGE, "%s: %s %s: expected LO:HI, finite "
                              "numbers with LO below HI (either may be left out, as in 0.8:)",
                              plot_name, option, value);
}

static const char *const s_known[] = {"-o", "--kind", "--group", "--x", "--y", "--title",
                                      "--target", "--size", "--logx", "--logy", "--xrange",
                                      "--yrange", NULL};

/* An option that is none of s_known, with the nearest that is. */
static int s_unknown(const char *a, error *err)
{
    const char *near = suggest_nearest(a, s_known);
    return error_set(err, ERROR_USAGE, "%s: unknown option %s%s%s%s", plot_name, a,
                     near ? "; did you mean " : "", near ? near : "", near ? "?" : "");
}

/* One option with its value (argv[i + 1]); -1 when it is unknown. */
static int s_option(options *o, const char *a, const char *value, error *err)
{
    if (strcmp(a, "-o") == 0) {
        o->out = value;
    } else if (strcmp(a, "--kind") == 0) {
        if ((o->figure.kind = s_kind(value, err)) < 0) {
            return -1;
        }
    } else if (strcmp(a, "--group") == 0) {
        o->group = value;
    } else if (strcmp(a, "--x") == 0) {
        o->figure.x = value;
    } else if (strcmp(a, "--y") == 0) {
        o->figure.y = value;
    } else if (strcmp(a, "--title") == 0) {
        o->title = value;
    } else if (strcmp(a, "--target") == 0) {
        char *end;
        o->figure.target = strtod(value, &end);
        if (*end || end == value || !(o->figure.target > 0 && o->figure.target <= 1)) {
            return error_set(err, ERROR_USAGE, "%s: --target %s: expected a test "
                             "accuracy above 0, at most 1", plot_name, value);
        }
    } else if (strcmp(a, "--xrange") == 0 || strcmp(a, "--yrange") == 0) {
        if (s_check_range(a, value, err) < 0) {
            return -1;
        }
        *(a[2] == 'x' ? &o->xrange : &o->yrange) = value;
    } else if (strcmp(a, "--size") == 0) {
        for (o->size = 0; s_sizes[o->size] && strcmp(s_sizes[o->size], value); o->size++) {
        }
        if (!s_sizes[o->size]) {
            return error_set(err, ERROR_USAGE, "%s: --size %s is not one of column, "
                             "page, slide", plot_name, value);
        }
    } else {
        return s_unknown(a, err);
    }
    return 0;
}

static int s_parse(options *o, int argc, char **argv, error *err)
{
    *o = (options){.figure = {.kind = KIND_CONVERGENCE, .target = 0.8},
                   .group = "experiment.label"};
    const char *seen[sizeof s_known / sizeof s_known[0]];
    int nseen = 0;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--logx") == 0 || strcmp(a, "--logy") == 0) {
            *(a[5] == 'x' ? &o->logx : &o->logy) = true;
            *(a[5] == 'x' ? &o->figure.logx : &o->figure.logy) = true;
        } else if (a[0] == '-' && i + 1 == argc) {
            bool known = false;
            for (int k = 0; s_known[k]; k++) {
                known = known || strcmp(a, s_known[k]) == 0;
            }
            return known ? error_set(err, ERROR_USAGE, "%s: %s needs a value", plot_name, a)
                         : s_unknown(a, err);
        } else if (a[0] == '-') {
            for (int j = 0; j < nseen; j++) {   /* -o a.pdf -o b.pdf wrote b.pdf alone */
                if (strcmp(seen[j], a) == 0) {
                    return error_set(err, ERROR_USAGE, "%s: %s given twice", plot_name, a);
                }
            }
            if (s_option(o, a, argv[++i], err) < 0) {
                return -1;
            }
            seen[nseen++] = a;   /* known: s_option refused any other */
        } else if (o->ndirs == PLOT_MAX_DIRS) {
            return error_set(err, ERROR_USAGE, "%s: too many folders", plot_name);
        } else {
            o->dirs[o->ndirs++] = a;
        }
    }
    figure_options *f = &o->figure;
    if ((f->x || f->y) && f->kind != KIND_CONVERGENCE && f->kind != KIND_SCALING) {
        /* a bar or histogram figure has its own axes: --x was drawn past */
        return error_set(err, ERROR_USAGE, "%s: %s: only convergence and scaling figures "
                         "take it (--kind)", plot_name, f->x ? "--x" : "--y");
    }
    if (!f->x) {
        f->x = f->kind == KIND_SCALING ? "workers" : "time";
    }
    if (!f->y) {
        f->y = f->kind == KIND_SCALING ? "samples_per_s" : "acc";
    }
    if (f->kind == KIND_CONVERGENCE && strcmp(f->x, "time") && strcmp(f->x, "epoch") &&
        strcmp(f->x, "updates")) {
        return error_set(err, ERROR_USAGE, "%s: --x %s: convergence plots against "
                         "time, epoch or updates", plot_name, f->x);
    }
    if (f->kind == KIND_CONVERGENCE && strcmp(f->y, "acc") && strcmp(f->y, "loss")) {
        return error_set(err, ERROR_USAGE, "%s: --y %s: convergence plots acc or loss "
                         "(a summary field is a scaling plot's: --kind scaling)", plot_name, f->y);
    }
    if (!o->out || o->ndirs == 0) {
        return error_set(err, ERROR_USAGE, "%s", s_usage);
    }
    return 0;
}

static void s_string_var(FILE *gp, const char *name, const char *value)
{
    char quoted[600];
    gnuplot_quote(quoted, sizeof quoted, value);
    fprintf(gp, "%s = %s\n", name, quoted);
}

/* Whether the key goes below the plot (style.gp reads key_below): on a
 * column's width, and on a page with more than 8 groups (beside the plot,
 * 16 took half the width). */
static bool s_key_below(int size, int groups)
{
    return size == SIZE_COLUMN || (size == SIZE_PAGE && groups > 8);
}

/* The gnuplot terminal for the figure's extension and size; NULL for an
 * extension it does not draw. Sizes: a column of a two-column paper
 * (3.5 in), a page's width (7 in), a 16:9 slide; fonts at print size
 * (8-9 pt on paper, 16 pt on a slide). A PNG is drawn at 200 dpi. A page
 * figure with more than 8 groups has its key below (style.gp), and is
 * taller by the key's four rows. */
static const char *s_terminal(const char *ext, int size, int groups)
{
    static const char *const tall_page[] = {
        "pdfcairo noenhanced font \"Sans,9\" size 7in,4.2in",
        "pngcairo noenhanced font \"Sans,9\" size 1400,840 fontscale 2.2",
        "svg noenhanced font \"Sans,9\" size 504,302",
    };
    if (size == SIZE_PAGE && s_key_below(size, groups)) {
        return strcmp(ext, ".pdf") == 0 ? tall_page[0] : strcmp(ext, ".png") == 0 ? tall_page[1]
               : strcmp(ext, ".svg") == 0 ? tall_page[2] : NULL;
    }
    static const char *const pdf[] = {
        "pdfcairo noenhanced font \"Sans,8\" size 3.5in,2.6in",
        "pdfcairo noenhanced font \"Sans,9\" size 7in,3.2in",
        "pdfcairo noenhanced font \"Sans,16\" size 10in,5.625in",
    };
    static const char *const png[] = {
        "pngcairo noenhanced font \"Sans,8\" size 700,520 fontscale 2.2",
        "pngcairo noenhanced font \"Sans,9\" size 1400,640 fontscale 2.2",
        "pngcairo noenhanced font \"Sans,16\" size 1920,1080 fontscale 1.8",
    };
    static const char *const svg[] = {
        "svg noenhanced font \"Sans,8\" size 252,187",
        "svg noenhanced font \"Sans,9\" size 504,230",
        "svg noenhanced font \"Sans,16\" size 720,405",
    };
    return strcmp(ext, ".pdf") == 0 ? pdf[size] : strcmp(ext, ".png") == 0 ? png[size]
           : strcmp(ext, ".svg") == 0 ? svg[size] : NULL;
}

/* Group styles: 16 colours (Okabe-Ito's 7 and 9 of Paul Tol's, no
 * yellow: all readable on white), and in black and white 16 distinct
 * pairs of dash pattern and point type; beyond 16 they repeat. */
static const char *const s_colours[16] = {
    "#0072b2", "#d55e00", "#009e73", "#cc79a7", "#e69f00", "#56b4e9", "#000000", "#882255",
    "#332288", "#117733", "#999933", "#aa4499", "#44aa99", "#661100", "#6699cc", "#888888",
};
static const int s_points[15] = {7, 5, 9, 13, 1, 2, 6, 4, 8, 12, 3, 11, 10, 14, 15};

static void s_styles(FILE *gp, int groups)
{
    for (int g = 0; g < groups; g++) {
        fprintf(gp, "set style line %d lc rgb \"%s\" lw 2 dt %d pt %d ps 0.8 pi 6\n", g + 1,
                s_colours[g % 16], 1 + g % 4, s_points[g % 15]);
    }
    fprintf(gp, "set style increment user\n");
}

/* The fewest and most runs behind one line of a figure of o's kind (or,
 * in a scaling figure, one point; a bar figure, one bar): the runs of a
 * group drawn there (figure_run_drawn), at the same x for scaling;
 * *most 0 when out of memory. */
static void s_runs_per_line(const plot_runs *set, const figure_options *o, int *fewest,
                            int *most)
{
    *fewest = set->count;
    *most = 0;
    double *xs = calloc((size_t)set->count, sizeof *xs);
    bool scaling = o->kind == KIND_SCALING;
    for (int r = 0; xs && r < set->count; r++) {
        bool drawn = figure_run_drawn(o, &set->runs[r]);
        xs[r] = !drawn ? NAN : scaling ? plot_run_number(&set->runs[r], o->x) : 0;
    }
    for (int r = 0; xs && r < set->count; r++) {
        if (isnan(xs[r])) {
            continue;
        }
        int k = 0;
        for (int q = 0; q < set->count; q++) {
            k += set->runs[q].g == set->runs[r].g && xs[q] == xs[r];
        }
        *fewest = k < *fewest ? k : *fewest;
        *most = k > *most ? k : *most;
    }
    free(xs);
}

/* What every run shares, for the title: "mlp on fashion-mnist, 4
 * workers, mean of 3 runs" (a field that varies is left out: it is on an
 * axis or in the legend); the runs counted are those a figure of o's
 * kind draws. */
static void s_setting(char *out, size_t n, const plot_runs *set, const figure_options *o)
{
    bool pooled = o->kind == KIND_STALENESS;
    char model[64] = "", data[64] = "", workers[32] = "", mode[16] = "";
    const char *keys[] = {"model", "dataset", "workers", "mode"};
    char *vals[] = {model, data, workers, mode};
    size_t sizes[] = {sizeof model, sizeof data, sizeof workers, sizeof mode};
    for (int k = 0; k < 4; k++) {
        plot_run_value(&set->runs[0], keys[k], vals[k], sizes[k]);
        for (int r = 1; r < set->count && vals[k][0]; r++) {
            char v[64];
            plot_run_value(&set->runs[r], keys[k], v, sizeof v);
            if (strcmp(v, vals[k]) != 0) {
                vals[k][0] = '\0';
            }
        }
    }
    int fewest, most;
    s_runs_per_line(set, o, &fewest, &most);
    int at = snprintf(out, n, "%s%s%s", model, model[0] && data[0] ? " on " : "", data);
    if (workers[0] && at < (int)n) {
        at += snprintf(out + at, n - (size_t)at, "%s%s worker%s", at ? ", " : "", workers,
                       strcmp(workers, "1") ? "s" : "");
    }
    char count[32];   /* "3", or "3-4" when lines average different numbers */
    if (fewest < most) {
        snprintf(count, sizeof count, "%d-%d", fewest, most);
    } else {
        snprintf(count, sizeof count, "%d", most);
    }
    if (most > 1 && at < (int)n) {   /* a CDF pools its runs' pushes; the rest average */
        at += snprintf(out + at, n - (size_t)at, pooled ? "%s%s runs pooled" : "%smean of %s runs",
                       at ? ", " : "", count);
    }
    if (strcmp(mode, "sim") == 0 && at < (int)n) {
        snprintf(out + at, n - (size_t)at, "%ssimulated", at ? ", " : "");
    } else if (plot_runs_modes_mixed(set, NULL, 0) && at < (int)n) {
        snprintf(out + at, n - (size_t)at, "%ssimulated and measured", at ? ", " : "");
    }
}

/* Whether a figure of o's kind puts times or rates on an axis. */
static bool s_shows_time(const figure_options *o)
{
    switch (o->kind) {
    case KIND_CONVERGENCE:
        return strcmp(o->x, "time") == 0;
    case KIND_SCALING:
        return strstr(o->y, "time") || strstr(o->y, "per_s");
    case KIND_TTA:
    case KIND_THROUGHPUT:
        return true;
    default:
        return false;
    }
}

/* Says on stderr when simulated and measured (real, threads) runs share
 * a figure of times or rates: virtual seconds are the model's, not the
 * host's, and nothing else in the figure tells them apart. */
static void s_warn_modes(const plot_runs *set, const figure_options *o)
{
    char groups[600];
    if (s_shows_time(o) && plot_runs_modes_mixed(set, groups, sizeof groups)) {
        fprintf(stderr, "%s: simulated and measured runs share its time axis or rates "
                "(%s): simulated seconds are the model's, not this host's; --group "
                "experiment.mode draws them apart\n", plot_name, groups);
    }
}

/* The figure's title: --title, else what it shows and the setting. */
static void s_title(char *out, size_t n, const options *o, const plot_runs *set)
{
    if (o->title) {
        snprintf(out, n, "%s", o->title);
        return;
    }
    const figure_options *f = &o->figure;
    char what[200], setting[300];
    switch (f->kind) {
    case KIND_CONVERGENCE:
        snprintf(what, sizeof what, "%s", strcmp(f->y, "loss") == 0 ? "Test loss"
                                                                    : "Test accuracy");
        break;
    case KIND_SCALING: {   /* the axes' words, without their units */
        const char *y = label_of(f->y), *x = label_of(f->x);
        const char *yu = strstr(y, " ("), *xu = strstr(x, " (");
        snprintf(what, sizeof what, "%.*s against %.*s", yu ? (int)(yu - y) : (int)strlen(y), y,
                 xu ? (int)(xu - x) : (int)strlen(x), x);
        what[0] = (char)(what[0] >= 'a' && what[0] <= 'z' ? what[0] - 32 : what[0]);
        break;
    }
    case KIND_STALENESS:
        snprintf(what, sizeof what, "Staleness of pushes");
        break;
    case KIND_TTA:
        snprintf(what, sizeof what, "Time to test accuracy %g", f->target);
        break;
    default:
        snprintf(what, sizeof what, "Throughput");
        break;
    }
    s_setting(setting, sizeof setting, set, f);
    snprintf(out, n, "%s%s%s", what, setting[0] ? ": " : "", setting);
}

/* A quoted gnuplot string broken into lines of about `width` characters,
 * at spaces (the single-quoted parts joined by "\n", a newline to gnuplot
 * in double quotes): a title wider than a column figure is cut off, not
 * wrapped. */
static void s_wrap(char *quoted, size_t n, size_t width)
{
    /* room for the whole: a break adds 7 characters, one a line at most
     * (a string cut short lost its closing quote) */
    char out[2400];
    size_t at = 0, line = 0;
    const char *colon = strstr(quoted, ": ");   /* what it shows, then the setting */
    bool long_title = strlen(quoted) > width;   /* measured as the lines are, quotes in */
    for (const char *p = quoted; *p && at + 1 < sizeof out; p++) {
        const char *next = strchr(p + 1, ' ');
        size_t word = next ? (size_t)(next - p) : strlen(p);
        bool after_colon = colon && p == colon + 1;
        if (*p == ' ' && line > 0 && (line + word > width || (long_title && after_colon)) &&
            at + 10 < sizeof out) {
            memcpy(out + at, "'.\"\\n\".'", 8);   /* 'a'."\n".'b': a line break */
            at += 8;
            line = 0;
            continue;
        }
        out[at++] = *p;
        line++;
    }
    out[at] = '\0';
    snprintf(quoted, n, "%.2399s", out);
}

/* The prologue every template reads (plots/templates/style.gp). */
static void s_prologue(FILE *gp, const options *o, const plot_runs *set, const figure_place *pl,
                       const char *file, const char *terminal)
{
    char quoted[2400], comment[1024];
    /* a comment is one line: a line break in -o ended it, and what
     * followed ran as gnuplot commands */
    snprintf(comment, sizeof comment, "%s", file);
    for (char *c = comment; *c; c++) {
        *c = (unsigned char)*c < 0x20 ? '?' : *c;
    }
    fprintf(gp, "# %s drawn by asgd plot from %d runs; redraw with: gnuplot %s.gp\n", comment,
            set->count, comment);
    /* asgd plot draws into temporary files (gnuplot_draw defines asgd_figure
     * and asgd_stem); the names are set whatever an earlier script in the
     * same gnuplot session left */
    gnuplot_quote(quoted, sizeof quoted, file);
    fprintf(gp, "figure_file = %s\nif (exists(\"asgd_figure\")) figure_file = asgd_figure\n",
            quoted);
    fprintf(gp, "set terminal %s\nset output figure_file\n", terminal);
    gnuplot_quote(quoted, sizeof quoted, pl->stem);
    fprintf(gp, "stem = %s\nif (exists(\"asgd_stem\")) stem = asgd_stem\n", quoted);
    fprintf(gp, "groups = %d\narray titles[%d] = [", set->ngroups, set->ngroups);
    for (int g = 0; g < set->ngroups; g++) {
        char legend[300], title[320];
        label_group(legend, sizeof legend, o->group, set->groups[g]);
        snprintf(title, sizeof title, "%s%s", legend, set->diverged[g] ? " (diverged)" : "");
        gnuplot_quote(quoted, sizeof quoted, title);
        fprintf(gp, "%s%s", g ? ", " : "", quoted);
    }
    char title[600];
    s_title(title, sizeof title, o, set);
    gnuplot_quote(quoted, sizeof quoted, title);
    s_wrap(quoted, sizeof quoted, o->size == SIZE_COLUMN ? 48 : o->size == SIZE_PAGE ? 68 : 60);
    fprintf(gp, "]\nfigure_title = %s\nlogx = %d\nlogy = %d\n", quoted, o->logx, o->logy);
    s_string_var(gp, "size", s_sizes[o->size]);
    fprintf(gp, "key_below = %d\n", s_key_below(o->size, set->ngroups));
    if (o->xrange) {   /* the kind's template leaves a range given here alone */
        fprintf(gp, "set xrange [%s]\nxrange_set = 1\n", o->xrange);
    }
    if (o->yrange) {
        fprintf(gp, "set yrange [%s]\nyrange_set = 1\n", o->yrange);
        double lo, hi;   /* both ends given: bands are held inside them */
        if (sscanf(o->yrange, "%lf :%lf", &lo, &hi) == 2) {
            fprintf(gp, "yrange_lo = %.17g\nyrange_hi = %.17g\n", lo, hi);
        }
    }
    s_string_var(gp, "group_label", label_of(o->group));
    s_styles(gp, set->ngroups);
}

/* Whether the figure at path is whole: not empty, and ending as its
 * format ends (gnuplot exits 0 when its write failed, on a full disk a
 * figure of 0 bytes or cut short). */
static bool s_whole(const char *path, const char *ext)
{
    FILE *f = fopen(path, "rbe");
    char tail[64] = {0};
    long size = f && fseek(f, 0, SEEK_END) == 0 ? ftell(f) : -1;
    long n = size < (long)sizeof tail ? size : (long)sizeof tail;
    bool read = f && size > 0 && fseek(f, size - n, SEEK_SET) == 0 &&
                fread(tail, 1, (size_t)n, f) == (size_t)n;
    if (f) {
        fclose(f);
    }
    if (!read) {
        return false;
    }
    static const unsigned char png_end[8] = {'I', 'E', 'N', 'D', 0xae, 0x42, 0x60, 0x82};
    if (strcmp(ext, ".png") == 0) {
        return n >= 8 && memcmp(tail + n - 8, png_end, 8) == 0;
    }
    const char *mark = strcmp(ext, ".pdf") == 0 ? "%%EOF" : "</svg>";
    for (long i = 0; i + (long)strlen(mark) <= n; i++) {
        if (memcmp(tail + i, mark, strlen(mark)) == 0) {
            return true;
        }
    }
    return false;
}

/* DIR/STEM-N.dat for N = 1, 2 ... that exist, renamed to TO's stem, or
 * (to NULL) removed. Returns -1 (err set) where a rename fails. */
static int s_move_data(const char *dir, const char *stem, const char *to, error *err)
{
    for (int g = 1; ; g++) {
        char from[6400], dest[6400];
        snprintf(from, sizeof from, "%s/%.1100s-%d.dat", dir, stem, g);
        if (access(from, F_OK) != 0) {
            return 0;
        }
        snprintf(dest, sizeof dest, "%s/%.1100s-%d.dat", dir, to ? to : "", g);
        if (!to) {
            remove(from);
        } else if (rename(from, dest) != 0) {
            return error_set(err, ERROR_RUNTIME, "%s: cannot write: %s", dest, strerror(errno));
        }
    }
}

/* Writes DIR/STEM.gp and the data files and runs gnuplot on them, all
 * under a temporary stem, then renames each to its own name once the
 * figure is whole: a failure (gnuplot's, a full disk, a wrong option, a
 * SIGINT or SIGTERM that stop_install turned into a flag) removes the
 * temporary files and leaves the figure, script and data of an earlier run
 * as they were. */
static int s_draw(const options *o, plot_runs *set, const figure_place *pl, const char *file,
                  const char *terminal, error *err)
{
    figure_place tmp = *pl;
    snprintf(tmp.stem, sizeof tmp.stem, ".%.900s.%ld.tmp", pl->stem, (long)getpid());
    char gp_path[5200], tmp_gp[5200], figure[5200], tmp_figure[5200], tmp_file[1100];
    snprintf(gp_path, sizeof gp_path, "%s/%s.gp", pl->dir, pl->stem);
    snprintf(tmp_gp, sizeof tmp_gp, "%s/%s.gp", tmp.dir, tmp.stem);
    snprintf(figure, sizeof figure, "%s/%s", pl->dir, file);
    snprintf(tmp_file, sizeof tmp_file, "%.1000s%s", tmp.stem, strrchr(file, '.'));
    snprintf(tmp_figure, sizeof tmp_figure, "%s/%s", tmp.dir, tmp_file);
    FILE *gp = fopen(tmp_gp, "w");
    if (!gp) {
        return error_set(err, ERROR_RUNTIME, "%s: cannot write: %s", gp_path, strerror(errno));
    }
    s_prologue(gp, o, set, pl, file, terminal);
    const char *kind = figure_write(&o->figure, set, &tmp, gp, err);
    if (kind) {
        fprintf(gp, "\n%s\n%s", gnuplot_template_text("style"), gnuplot_template_text(kind));
    }
    int rc = 0;
    if (fclose(gp) != 0 && kind) {
        rc = error_set(err, ERROR_RUNTIME, "%s: cannot write (is the disk full?)", gp_path);
    }
    char script[1100];
    snprintf(script, sizeof script, "%.1000s.gp", tmp.stem);
    if (rc == 0 && kind && !stop_requested() &&
        gnuplot_draw(tmp.dir, script, tmp.stem, tmp_file, err) < 0) {
        char why[sizeof err->msg];
        snprintf(why, sizeof why, "%s", err->msg);
        rc = error_set(err, ERROR_RUNTIME, "%s: %s", figure, why);
    } else if (!kind) {
        rc = -1;
    }
    int sig = stop_requested();   /* gnuplot_draw stopped gnuplot */
    if (sig) {
        rc = error_set(err, ERROR_SIGNALLED(sig), "%s: interrupted (signal %d); an earlier "
                       "figure and its script are as they were", figure, sig);
    }
    if (rc == 0 && !s_whole(tmp_figure, strrchr(file, '.'))) {
        rc = error_set(err, ERROR_RUNTIME, "%s: gnuplot could not write it whole (is the disk "
                       "full?)", figure);
    }
    if (rc == 0 && s_move_data(tmp.dir, tmp.stem, pl->stem, err) < 0) {
        rc = -1;
    } else if (rc == 0 && (rename(tmp_gp, gp_path) != 0 || rename(tmp_figure, figure) != 0)) {
        rc = error_set(err, ERROR_RUNTIME, "%s: cannot write: %s", figure, strerror(errno));
    }
    if (rc < 0) {
        s_move_data(tmp.dir, tmp.stem, NULL, err);
        remove(tmp_gp);
        remove(tmp_figure);
    }
    return rc;
}

int plot_main(int argc, char **argv, error *err)
{
    options o;
    if (s_parse(&o, argc, argv, err) < 0) {
        return -1;
    }
    const char *dot = strrchr(o.out, '.');
    const char *terminal = dot ? s_terminal(dot, o.size, 0) : NULL;
    if (!terminal) {
        return error_set(err, ERROR_USAGE, "%s: -o %s: the figure must end in .pdf, .png "
                         "or .svg", plot_name, o.out);
    }
    figure_place pl;
    const char *slash = strrchr(o.out, '/');
    snprintf(pl.dir, sizeof pl.dir, "%.*s", slash ? (int)(slash - o.out) : 1, slash ? o.out : ".");
    const char *file = slash ? slash + 1 : o.out;
    struct stat st;
    if (pl.dir[0] && (stat(pl.dir, &st) != 0 || !S_ISDIR(st.st_mode))) {
        /* it said "asgd: FIG.gp: cannot write", of a file never asked for */
        return error_set(err, ERROR_USAGE, "%s: -o %s: %s is no folder to write it in", plot_name,
                         o.out, pl.dir);
    }
    /* the whole name: fig.pdf and fig.png keep a script and data each */
    snprintf(pl.stem, sizeof pl.stem, "%s", file);
    plot_runs set;
    int rc = plot_runs_collect(&set, o.dirs, o.ndirs, o.group, err);
    int sig = stop_requested();   /* while many runs were read */
    if (rc == 0 && sig) {
        rc = error_set(err, ERROR_SIGNALLED(sig), "%s: interrupted (signal %d)", plot_name, sig);
    }
    if (rc == 0) {
        char left[2400];
        if (plot_runs_left_out(&set, left, sizeof left)) {
            fprintf(stderr, "%s: %s\n", plot_name, left);
        }
        plot_runs_warn_mixed(&set, o.group, o.figure.kind == KIND_SCALING ? o.figure.x : NULL);
        s_warn_modes(&set, &o.figure);
        /* after the runs: a wrong folder is the user's error (exit 2) with
         * gnuplot or without (test_plot failed so where gnuplot was missing) */
        terminal = s_terminal(dot, o.size, set.ngroups);
        rc = gnuplot_available() ? s_draw(&o, &set, &pl, file, terminal, err)
                                 : error_set(err, ERROR_RUNTIME, "gnuplot is not installed; "
                                             "install it with `apt-get install gnuplot-nox` "
                                             "(or ./scripts/setup.sh)");
    }
    if (rc == 0) {
        printf("%s (%d run%s, %d group%s; script %s/%s.gp)\n", o.out, set.count,
               set.count == 1 ? "" : "s", set.ngroups, set.ngroups == 1 ? "" : "s", pl.dir,
               pl.stem);
    }
    plot_runs_free(&set);
    return rc;
}
