/* plot.c: `asgd plot`: options, the figure's script, and gnuplot. */
#include "plots/plot.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plots/figures.h"
#include "plots/gnuplot.h"
#include "plots/runs.h"

#define PLOT_MAX_DIRS 256

typedef struct options {
    figure_options figure;
    const char *out, *group, *title;
    bool logx, logy;
    const char *dirs[PLOT_MAX_DIRS];
    int ndirs;
} options;

static const char s_usage[] =
    "usage: asgd plot RUN_OR_SWEEP_DIR... -o FIG.pdf|png|svg [--kind K] [--group KEY] "
    "[--x X] [--y Y] [--logx] [--logy] [--title T] [--target ACC]";

static int s_kind(const char *name, error *err)
{
    for (int j = 0; figure_kinds[j]; j++) {
        if (strcmp(name, figure_kinds[j]) == 0) {
            return j;
        }
    }
    return error_set(err, ERROR_USAGE, "asgd plot: --kind %s is not one of convergence, "
                     "scaling, staleness, time-to-accuracy, throughput", name);
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
        o->figure.target = strtod(value, NULL);
    } else {
        return error_set(err, ERROR_USAGE, "asgd plot: unknown option %s", a);
    }
    return 0;
}

static int s_parse(options *o, int argc, char **argv, error *err)
{
    *o = (options){.figure = {.kind = KIND_CONVERGENCE, .target = 0.8},
                   .group = "experiment.label"};
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--logx") == 0 || strcmp(a, "--logy") == 0) {
            *(a[5] == 'x' ? &o->logx : &o->logy) = true;
        } else if (a[0] == '-' && i + 1 == argc) {
            return error_set(err, ERROR_USAGE, "asgd plot: %s needs a value", a);
        } else if (a[0] == '-') {
            if (s_option(o, a, argv[++i], err) < 0) {
                return -1;
            }
        } else if (o->ndirs == PLOT_MAX_DIRS) {
            return error_set(err, ERROR_USAGE, "asgd plot: too many folders");
        } else {
            o->dirs[o->ndirs++] = a;
        }
    }
    figure_options *f = &o->figure;
    if (!f->x) {
        f->x = f->kind == KIND_SCALING ? "workers" : "time";
    }
    if (!f->y) {
        f->y = f->kind == KIND_SCALING ? "samples_per_s" : "acc";
    }
    if (f->kind == KIND_CONVERGENCE && strcmp(f->x, "time") && strcmp(f->x, "epoch") &&
        strcmp(f->x, "updates")) {
        return error_set(err, ERROR_USAGE, "asgd plot: --x %s: convergence plots against "
                         "time, epoch or updates", f->x);
    }
    if (!o->out || o->ndirs == 0) {
        return error_set(err, ERROR_USAGE, "%s", s_usage);
    }
    return 0;
}

/* The gnuplot terminal for the figure's extension; NULL for another. */
static const char *s_terminal(const char *ext)
{
    if (strcmp(ext, ".pdf") == 0) {
        return "pdfcairo noenhanced font \"Sans,9\" size 6in,3.6in";
    }
    if (strcmp(ext, ".png") == 0) {
        return "pngcairo noenhanced font \"Sans,11\" size 1100,660";
    }
    if (strcmp(ext, ".svg") == 0) {
        return "svg noenhanced font \"Sans,11\" size 900,540";
    }
    return NULL;
}

/* The prologue every template reads (plots/templates/style.gp). */
static void s_prologue(FILE *gp, const options *o, const plot_runs *set, const figure_place *pl,
                       const char *file, const char *terminal)
{
    char quoted[1200];
    fprintf(gp, "# %s drawn by asgd plot from %d runs; redraw with: gnuplot %s.gp\n", file,
            set->count, pl->stem);
    gnuplot_quote(quoted, sizeof quoted, file);
    fprintf(gp, "set terminal %s\nset output %s\n", terminal, quoted);
    gnuplot_quote(quoted, sizeof quoted, pl->stem);
    fprintf(gp, "stem = %s\ngroups = %d\narray titles[%d] = [", quoted, set->ngroups,
            set->ngroups);
    for (int g = 0; g < set->ngroups; g++) {
        char title[300];
        snprintf(title, sizeof title, "%s%s", set->groups[g],
                 set->diverged[g] ? " (diverged)" : "");
        gnuplot_quote(quoted, sizeof quoted, title);
        fprintf(gp, "%s%s", g ? ", " : "", quoted);
    }
    gnuplot_quote(quoted, sizeof quoted, o->title ? o->title : figure_kinds[o->figure.kind]);
    fprintf(gp, "]\nfigure_title = %s\nlogx = %d\nlogy = %d\n", quoted, o->logx, o->logy);
}

/* Writes DIR/STEM.gp and the data files; runs gnuplot on it. */
static int s_draw(const options *o, plot_runs *set, const figure_place *pl, const char *file,
                  const char *terminal, error *err)
{
    char gp_path[5200];
    snprintf(gp_path, sizeof gp_path, "%s/%s.gp", pl->dir, pl->stem);
    FILE *gp = fopen(gp_path, "w");
    if (!gp) {
        return error_set(err, ERROR_RUNTIME, "%s: cannot write: %s", gp_path, strerror(errno));
    }
    s_prologue(gp, o, set, pl, file, terminal);
    const char *kind = figure_write(&o->figure, set, pl, gp, err);
    if (kind) {
        fprintf(gp, "\n%s\n%s", gnuplot_template_text("style"), gnuplot_template_text(kind));
    }
    if (fclose(gp) != 0 && kind) {
        return error_set(err, ERROR_RUNTIME, "%s: cannot write", gp_path);
    }
    if (!kind) {
        return -1;
    }
    char script[1100];
    snprintf(script, sizeof script, "%.1000s.gp", pl->stem);
    return gnuplot_draw(pl->dir, script, err);
}

int plot_main(int argc, char **argv, error *err)
{
    options o;
    if (s_parse(&o, argc, argv, err) < 0) {
        return -1;
    }
    const char *dot = strrchr(o.out, '.');
    const char *terminal = dot ? s_terminal(dot) : NULL;
    if (!terminal) {
        return error_set(err, ERROR_USAGE, "asgd plot: -o %s: the figure must end in .pdf, .png "
                         "or .svg", o.out);
    }
    if (!gnuplot_available()) {
        return error_set(err, ERROR_RUNTIME, "gnuplot is not installed; install it with "
                         "`apt-get install gnuplot-nox` (or ./scripts/setup.sh)");
    }
    figure_place pl;
    const char *slash = strrchr(o.out, '/');
    snprintf(pl.dir, sizeof pl.dir, "%.*s", slash ? (int)(slash - o.out) : 1, slash ? o.out : ".");
    const char *file = slash ? slash + 1 : o.out;
    snprintf(pl.stem, sizeof pl.stem, "%.*s", (int)(dot - file), file);
    plot_runs set;
    int rc = plot_runs_collect(&set, o.dirs, o.ndirs, o.group, err);
    if (rc == 0) {
        rc = s_draw(&o, &set, &pl, file, terminal, err);
    }
    if (rc == 0) {
        printf("%s (%d runs, %d groups; script %s/%s.gp)\n", o.out, set.count, set.ngroups,
               pl.dir, pl.stem);
    }
    plot_runs_free(&set);
    return rc;
}
