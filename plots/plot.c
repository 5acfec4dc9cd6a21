/* plot.c: collecting runs, writing data files and the gnuplot script, and
 * driving gnuplot. */
#include "plots/plot.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cJSON.h>

#include "core/config.h"
#include "core/run.h"

#define PLOT_MAX_RUNS 4096
#define PLOT_MAX_GROUPS 32
#define PLOT_GRID 60

enum kind { KIND_CONVERGENCE, KIND_SCALING, KIND_STALENESS, KIND_TTA, KIND_THROUGHPUT };
static const char *const s_kinds[] = {"convergence", "scaling", "staleness",
                                      "time-to-accuracy", "throughput", NULL};

typedef struct prun {
    char dir[4096];
    char group[256];
    double x, y;              /* scaling: the --x and --y values, read once */
    cJSON *summary;
} prun;

typedef struct options {
    int kind;
    const char *out, *group, *x, *y, *title;
    bool logx, logy;
    double target;
} options;

typedef struct plot {
    options o;
    prun *runs;
    int nruns;
    char groups[PLOT_MAX_GROUPS][256];
    int ngroups;
    char dir[4096], stem[1024], ext[8];
} plot;

/* A key's value for a run: a summary field, or section.key of config.ini. */
static void s_value(const prun *r, const char *key, char *out, size_t n)
{
    out[0] = '\0';
    const char *dot = strchr(key, '.');
    if (!dot) {
        cJSON *v = cJSON_GetObjectItemCaseSensitive(r->summary, key);
        if (cJSON_IsString(v)) {
            snprintf(out, n, "%s", v->valuestring);
        } else if (cJSON_IsNumber(v)) {
            snprintf(out, n, "%g", v->valuedouble);
        }
        return;
    }
    char path[4200], section[128];
    snprintf(path, sizeof path, "%s/config.ini", r->dir);
    snprintf(section, sizeof section, "%.*s", (int)(dot - key), key);
    error err;
    config *c = config_load(path, &err);
    const char *v;
    if (c && config_get_string(c, section, dot + 1, "", &v, &err) == 0) {
        snprintf(out, n, "%s", v);
    }
    config_destroy(&c);
}

static void s_collect(plot *p, const char *dir, int depth)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/summary.json", dir);
    cJSON *j = run_read_json(path);
    if (j) {
        if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(j, "complete")) &&
            p->nruns < PLOT_MAX_RUNS) {
            prun *r = &p->runs[p->nruns++];
            snprintf(r->dir, sizeof r->dir, "%s", dir);
            r->summary = j;
        } else {
            cJSON_Delete(j);
        }
        return;
    }
    if (depth == 0) {
        return;
    }
    DIR *d = opendir(dir);
    struct dirent *ent;
    char **names = NULL;
    size_t n = 0;
    while (d && (ent = readdir(d))) {
        if (ent->d_name[0] == '.') {
            continue;
        }
        char **grown = realloc(names, (n + 1) * sizeof *names);
        if (!grown) {
            break;
        }
        names = grown;
        names[n++] = strdup(ent->d_name);
    }
    if (d) {
        closedir(d);
    }
    /* sorted, so that figures do not depend on the file system's order */
    for (size_t i = 1; i < n; i++) {
        for (size_t k = i; k > 0 && strcmp(names[k - 1], names[k]) > 0; k--) {
            char *t = names[k];
            names[k] = names[k - 1];
            names[k - 1] = t;
        }
    }
    for (size_t i = 0; i < n; i++) {
        char sub[4200];
        snprintf(sub, sizeof sub, "%s/%s", dir, names[i]);
        struct stat st;
        if (stat(sub, &st) == 0 && S_ISDIR(st.st_mode)) {
            s_collect(p, sub, depth - 1);
        }
        free(names[i]);
    }
    free(names);
}

static int s_group_index(plot *p, const char *name)
{
    for (int g = 0; g < p->ngroups; g++) {
        if (strcmp(p->groups[g], name) == 0) {
            return g;
        }
    }
    if (p->ngroups == PLOT_MAX_GROUPS) {
        return -1;
    }
    snprintf(p->groups[p->ngroups], sizeof p->groups[0], "%s", name);
    return p->ngroups++;
}

/* eval.csv rows: x (column xc) and y (column yc). */
static int s_eval(const prun *r, int xc, int yc, double **xs, double **ys)
{
    char path[4200], line[512];
    snprintf(path, sizeof path, "%s/eval.csv", r->dir);
    FILE *f = fopen(path, "r");
    int n = 0, cap = 0;
    *xs = *ys = NULL;
    while (f && fgets(line, sizeof line, f)) {
        double v[6];
        if (sscanf(line, "%lf,%lf,%lf,%lf,%lf,%lf", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5]) != 6) {
            continue;
        }
        if (n == cap) {
            cap = cap ? 2 * cap : 64;
            *xs = realloc(*xs, (size_t)cap * sizeof **xs);
            *ys = realloc(*ys, (size_t)cap * sizeof **ys);
        }
        (*xs)[n] = v[xc];
        (*ys)[n] = v[yc];
        n++;
    }
    if (f) {
        fclose(f);
    }
    return n;
}

static double s_interp(const double *xs, const double *ys, int n, double x)
{
    if (x <= xs[0]) {
        return ys[0];
    }
    for (int i = 1; i < n; i++) {
        if (x <= xs[i]) {
            double span = xs[i] - xs[i - 1];
            return span > 0 ? ys[i - 1] + (ys[i] - ys[i - 1]) * (x - xs[i - 1]) / span : ys[i];
        }
    }
    return ys[n - 1];
}

static FILE *s_data(const plot *p, int g, char *name, size_t n)
{
    snprintf(name, n, "%s-%d.dat", p->stem, g + 1);
    char path[6400];
    snprintf(path, sizeof path, "%s/%.1100s", p->dir, name);
    FILE *f = fopen(path, "w");
    if (f) {
        fprintf(f, "# %s\n", p->groups[g]);
    }
    return f;
}

static double s_num(const prun *r, const char *key)
{
    char v[256];
    s_value(r, key, v, sizeof v);
    return v[0] ? strtod(v, NULL) : NAN;
}

/* Writes the data files and the plot commands for the chosen kind. */
static int s_body(plot *p, FILE *gp, error *err)
{
    const options *o = &p->o;
    char name[1200];
    if (o->kind == KIND_CONVERGENCE) {
        int xc = strcmp(o->x, "epoch") == 0 ? 1 : strcmp(o->x, "updates") == 0 ? 2 : 0;
        int yc = strcmp(o->y, "loss") == 0 ? 4 : 5;
        fprintf(gp, "set xlabel \"%s\"\nset ylabel \"test %s\"\nplot ",
                xc == 0 ? "time (s)" : xc == 1 ? "epochs" : "server updates",
                yc == 4 ? "loss" : "accuracy");
        for (int g = 0; g < p->ngroups; g++) {
            double *xs[PLOT_MAX_RUNS], *ys[PLOT_MAX_RUNS];
            int ns[PLOT_MAX_RUNS], k = 0;
            double xmax = INFINITY;
            for (int r = 0; r < p->nruns; r++) {
                if (strcmp(p->runs[r].group, p->groups[g]) == 0) {
                    ns[k] = s_eval(&p->runs[r], xc, yc, &xs[k], &ys[k]);
                    if (ns[k] > 0) {
                        xmax = fmin(xmax, xs[k][ns[k] - 1]);
                        k++;
                    }
                }
            }
            FILE *f = s_data(p, g, name, sizeof name);
            if (!f) {
                return error_set(err, ERROR_RUNTIME, "%s: cannot write data", p->dir);
            }
            fprintf(f, "# x mean min max over %d runs\n", k);
            for (int i = 0; k > 0 && i <= PLOT_GRID; i++) {
                double x = xmax * i / PLOT_GRID, sum = 0, lo = INFINITY, hi = -INFINITY;
                for (int r = 0; r < k; r++) {
                    double y = s_interp(xs[r], ys[r], ns[r], x);
                    sum += y;
                    lo = fmin(lo, y);
                    hi = fmax(hi, y);
                }
                fprintf(f, "%.9g %.9g %.9g %.9g\n", x, sum / k, lo, hi);
            }
            fclose(f);
            for (int r = 0; r < k; r++) {
                free(xs[r]);
                free(ys[r]);
            }
            fprintf(gp, "%s'%s' using 1:3:4 with filledcurves fs transparent solid 0.15 "
                    "lc rgb word(colors, %d) notitle, '%s' using 1:2 with linespoints ls %d "
                    "title \"%s\"", g ? ", \\\n     " : "", name, g % 8 + 1, name, g + 1,
                    p->groups[g]);
        }
        fprintf(gp, "\n");
        return 0;
    }
    if (o->kind == KIND_SCALING) {
        bool speedup = strcmp(o->y, "samples_per_s") == 0 && strcmp(o->x, "workers") == 0;
        if (speedup) {
            fprintf(gp, "set multiplot layout 1,2\n");
        }
        fprintf(gp, "set xlabel \"%s\"\nset ylabel \"%s\"\nplot ", o->x, o->y);
        char names[PLOT_MAX_GROUPS][1200];
        for (int g = 0; g < p->ngroups; g++) {
            double xv[PLOT_MAX_RUNS];
            int nx = 0;
            for (int r = 0; r < p->nruns; r++) {
                double x = p->runs[r].x;
                bool seen = false;
                for (int i = 0; i < nx; i++) {
                    seen = seen || xv[i] == x;
                }
                if (strcmp(p->runs[r].group, p->groups[g]) == 0 && !isnan(x) && !seen) {
                    xv[nx++] = x;
                }
            }
            for (int i = 1; i < nx; i++) {
                for (int k = i; k > 0 && xv[k - 1] > xv[k]; k--) {
                    double t = xv[k];
                    xv[k] = xv[k - 1];
                    xv[k - 1] = t;
                }
            }
            FILE *f = s_data(p, g, names[g], sizeof names[g]);
            if (!f) {
                return error_set(err, ERROR_RUNTIME, "%s: cannot write data", p->dir);
            }
            fprintf(f, "# x mean min max speedup ideal\n");
            double base = NAN;
            for (int i = 0; i < nx; i++) {
                double sum = 0, lo = INFINITY, hi = -INFINITY;
                int k = 0;
                for (int r = 0; r < p->nruns; r++) {
                    if (strcmp(p->runs[r].group, p->groups[g]) == 0 &&
                        p->runs[r].x == xv[i]) {
                        double y = p->runs[r].y;
                        sum += y;
                        lo = fmin(lo, y);
                        hi = fmax(hi, y);
                        k++;
                    }
                }
                if (i == 0) {
                    base = sum / k;
                }
                fprintf(f, "%.9g %.9g %.9g %.9g %.9g %.9g\n", xv[i], sum / k, lo, hi,
                        sum / k / base, xv[i] / xv[0]);
            }
            fclose(f);
            fprintf(gp, "%s'%s' using 1:2:3:4 with yerrorlines ls %d title \"%s\"",
                    g ? ", \\\n     " : "", names[g], g + 1, p->groups[g]);
        }
        fprintf(gp, "\n");
        if (speedup) {
            fprintf(gp, "set ylabel \"speed-up\"\nplot ");
            for (int g = 0; g < p->ngroups; g++) {
                fprintf(gp, "'%s' using 1:5 with linespoints ls %d title \"%s\", ", names[g],
                        g + 1, p->groups[g]);
            }
            fprintf(gp, "'%s' using 1:6 with lines lc rgb \"black\" dt 3 title \"ideal\"\n"
                    "unset multiplot\n", names[0]);
        }
        return 0;
    }
    if (o->kind == KIND_STALENESS) {
        fprintf(gp, "set xlabel \"staleness (updates)\"\nset ylabel \"fraction of pushes\"\n"
                "set yrange [0:1.05]\nplot ");
        for (int g = 0; g < p->ngroups; g++) {
            double h[64] = {0}, total = 0;
            for (int r = 0; r < p->nruns; r++) {
                cJSON *a = cJSON_GetObjectItemCaseSensitive(p->runs[r].summary,
                                                            "staleness_histogram");
                if (strcmp(p->runs[r].group, p->groups[g]) != 0 || !cJSON_IsArray(a)) {
                    continue;
                }
                for (int i = 0; i < cJSON_GetArraySize(a) && i < 64; i++) {
                    h[i] += cJSON_GetArrayItem(a, i)->valuedouble;
                    total += cJSON_GetArrayItem(a, i)->valuedouble;
                }
            }
            FILE *f = s_data(p, g, name, sizeof name);
            if (!f) {
                return error_set(err, ERROR_RUNTIME, "%s: cannot write data", p->dir);
            }
            fprintf(f, "# staleness cdf\n");
            double acc = 0;
            int last = 63;
            while (last > 0 && h[last] == 0) {
                last--;
            }
            for (int i = 0; i <= last + 1 && i < 64; i++) {
                acc += h[i];
                fprintf(f, "%d %.9g\n", i, total > 0 ? acc / total : 1);
            }
            fclose(f);
            fprintf(gp, "%s'%s' using 1:2 with steps ls %d title \"%s\"", g ? ", \\\n     " : "",
                    name, g + 1, p->groups[g]);
        }
        fprintf(gp, "\n");
        return 0;
    }
    /* bars: time to accuracy, or throughput */
    snprintf(name, sizeof name, "%s-1.dat", p->stem);
    char path[6400];
    snprintf(path, sizeof path, "%s/%s", p->dir, name);
    FILE *f = fopen(path, "w");
    if (!f) {
        return error_set(err, ERROR_RUNTIME, "%s: cannot write", path);
    }
    fprintf(f, "# group mean min max\n");
    for (int g = 0; g < p->ngroups; g++) {
        double sum = 0, lo = INFINITY, hi = -INFINITY;
        int k = 0;
        for (int r = 0; r < p->nruns; r++) {
            if (strcmp(p->runs[r].group, p->groups[g]) != 0) {
                continue;
            }
            double v = NAN;
            if (o->kind == KIND_THROUGHPUT) {
                v = s_num(&p->runs[r], "samples_per_s");
            } else {
                double *xs, *ys;
                int n = s_eval(&p->runs[r], 0, 5, &xs, &ys);
                for (int i = 0; i < n && isnan(v); i++) {
                    if (ys[i] >= o->target) {
                        v = xs[i];
                    }
                }
                free(xs);
                free(ys);
            }
            if (!isnan(v)) {
                sum += v;
                lo = fmin(lo, v);
                hi = fmax(hi, v);
                k++;
            }
        }
        if (k > 0) {
            fprintf(f, "\"%s\" %.9g %.9g %.9g\n", p->groups[g], sum / k, lo, hi);
        } else {
            fprintf(stderr, "asgd plot: %s never reaches test accuracy %g\n", p->groups[g],
                    o->target);
        }
    }
    fclose(f);
    fprintf(gp, "set style fill solid 0.5 border -1\nset boxwidth 0.6\nset yrange [0:*]\n"
            "set xtics rotate by -30\nset key off\nset ylabel \"%s\"\n"
            "plot '%s' using 0:2:xtic(1) with boxes lc rgb word(colors, 1) notitle, "
            "'' using 0:2:3:4 with yerrorbars lc rgb \"black\" pt 0 notitle\n",
            o->kind == KIND_THROUGHPUT ? "samples/s"
                                       : "time to target test accuracy (s)", name);
    return 0;
}

static int s_parse(options *o, int argc, char **argv, const char **dirs, int *ndirs, error *err)
{
    *o = (options){.kind = KIND_CONVERGENCE, .group = "experiment.label", .target = 0.8};
    *ndirs = 0;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        bool has_value = i + 1 < argc;
        if (strcmp(a, "--logx") == 0) {
            o->logx = true;
        } else if (strcmp(a, "--logy") == 0) {
            o->logy = true;
        } else if (a[0] == '-' && !has_value) {
            return error_set(err, ERROR_USAGE, "asgd plot: %s needs a value", a);
        } else if (strcmp(a, "-o") == 0) {
            o->out = argv[++i];
        } else if (strcmp(a, "--kind") == 0) {
            const char *k = argv[++i];
            o->kind = -1;
            for (int j = 0; s_kinds[j]; j++) {
                if (strcmp(k, s_kinds[j]) == 0) {
                    o->kind = j;
                }
            }
            if (o->kind < 0) {
                return error_set(err, ERROR_USAGE, "asgd plot: --kind %s is not one of "
                                 "convergence, scaling, staleness, time-to-accuracy, throughput", k);
            }
        } else if (strcmp(a, "--group") == 0) {
            o->group = argv[++i];
        } else if (strcmp(a, "--x") == 0) {
            o->x = argv[++i];
        } else if (strcmp(a, "--y") == 0) {
            o->y = argv[++i];
        } else if (strcmp(a, "--title") == 0) {
            o->title = argv[++i];
        } else if (strcmp(a, "--target") == 0) {
            o->target = strtod(argv[++i], NULL);
        } else if (a[0] == '-') {
            return error_set(err, ERROR_USAGE, "asgd plot: unknown option %s", a);
        } else {
            dirs[(*ndirs)++] = a;
        }
    }
    if (!o->x) {
        o->x = o->kind == KIND_SCALING ? "workers" : "time";
    }
    if (!o->y) {
        o->y = o->kind == KIND_SCALING ? "samples_per_s" : "acc";
    }
    if (o->kind == KIND_CONVERGENCE && strcmp(o->x, "time") && strcmp(o->x, "epoch") &&
        strcmp(o->x, "updates")) {
        return error_set(err, ERROR_USAGE, "asgd plot: --x %s: convergence plots against "
                         "time, epoch or updates", o->x);
    }
    if (!o->out || *ndirs == 0) {
        return error_set(err, ERROR_USAGE, "usage: asgd plot RUN_OR_SWEEP_DIR... -o FIG.pdf|png|svg "
                         "[--kind K] [--group KEY] [--x X] [--y Y] [--logx] [--logy] "
                         "[--title T] [--target ACC]");
    }
    return 0;
}

static bool s_have_gnuplot(void)
{
    const char *path = getenv("PATH");
    char buf[4096];
    snprintf(buf, sizeof buf, "%s", path ? path : "/usr/bin:/bin");
    for (char *save, *d = strtok_r(buf, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
        char exe[4200];
        snprintf(exe, sizeof exe, "%s/gnuplot", d);
        if (access(exe, X_OK) == 0) {
            return true;
        }
    }
    return false;
}

int plot_main(int argc, char **argv, error *err)
{
    const char *dirs[256];
    int ndirs;
    plot p = {0};
    if (argc > 256 || s_parse(&p.o, argc, argv, dirs, &ndirs, err) < 0) {
        return argc > 256 ? error_set(err, ERROR_USAGE, "asgd plot: too many folders") : -1;
    }
    const char *dot = strrchr(p.o.out, '.');
    const char *terminal = NULL;
    if (dot && strcmp(dot, ".pdf") == 0) {
        terminal = "pdfcairo noenhanced font \"Sans,9\" size 6in,3.6in";
    } else if (dot && strcmp(dot, ".png") == 0) {
        terminal = "pngcairo noenhanced font \"Sans,11\" size 1100,660";
    } else if (dot && strcmp(dot, ".svg") == 0) {
        terminal = "svg noenhanced font \"Sans,11\" size 900,540";
    } else {
        return error_set(err, ERROR_USAGE, "asgd plot: -o %s: the figure must end in .pdf, .png "
                         "or .svg", p.o.out);
    }
    if (!s_have_gnuplot()) {
        return error_set(err, ERROR_RUNTIME, "gnuplot is not installed; install it with "
                         "`apt-get install gnuplot-nox` (or ./scripts/setup.sh)");
    }
    const char *slash = strrchr(p.o.out, '/');
    snprintf(p.dir, sizeof p.dir, "%.*s", slash ? (int)(slash - p.o.out) : 1,
             slash ? p.o.out : ".");
    const char *file = slash ? slash + 1 : p.o.out;
    snprintf(p.stem, sizeof p.stem, "%.*s", (int)(dot - file), file);
    snprintf(p.ext, sizeof p.ext, "%s", dot);
    p.runs = calloc(PLOT_MAX_RUNS, sizeof *p.runs);
    if (!p.runs) {
        return error_set(err, ERROR_RUNTIME, "out of memory");
    }
    for (int i = 0; i < ndirs; i++) {
        s_collect(&p, dirs[i], 4);
    }
    int rc = -1;
    if (p.nruns == 0) {
        error_set(err, ERROR_USAGE, "asgd plot: no complete run folders under %s%s", dirs[0],
                  ndirs > 1 ? " and the others" : "");
        goto done;
    }
    for (int r = 0; r < p.nruns; r++) {
        s_value(&p.runs[r], p.o.group, p.runs[r].group, sizeof p.runs[r].group);
        if (p.o.kind == KIND_SCALING) {
            p.runs[r].x = s_num(&p.runs[r], p.o.x);
            p.runs[r].y = s_num(&p.runs[r], p.o.y);
        }
        if (!p.runs[r].group[0]) {
            snprintf(p.runs[r].group, sizeof p.runs[r].group, "(no %s)", p.o.group);
        }
        if (s_group_index(&p, p.runs[r].group) < 0) {
            error_set(err, ERROR_USAGE, "asgd plot: more than %d groups of %s", PLOT_MAX_GROUPS,
                      p.o.group);
            goto done;
        }
    }
    char gp_path[5200];
    snprintf(gp_path, sizeof gp_path, "%s/%s.gp", p.dir, p.stem);
    FILE *gp = fopen(gp_path, "w");
    if (!gp) {
        error_set(err, ERROR_RUNTIME, "%s: cannot write: %s", gp_path, strerror(errno));
        goto done;
    }
    fprintf(gp, "# %s%s drawn by asgd plot from %d runs; redraw with: gnuplot %s.gp\n",
            p.stem, p.ext, p.nruns, p.stem);
    fprintf(gp, "set terminal %s\nset output '%s%s'\n", terminal, p.stem, p.ext);
    fprintf(gp, "colors = \"#0072b2 #d55e00 #009e73 #cc79a7 #e69f00 #56b4e9 #000000 #f0e442\"\n");
    /* colours, dashes and points cycle with different periods, so that
     * every group differs in print, in colour or not */
    for (int g = 0; g < p.ngroups; g++) {
        fprintf(gp, "set style line %d lc rgb word(colors, %d) lw 2 dt %d pt %d ps 0.8 pi 6\n",
                g + 1, g % 8 + 1, g % 5 + 1, g % 11 + 1);
    }
    fprintf(gp, "set style increment user\nset grid lc rgb \"#dddddd\"\n"
            "set key outside right top box opaque\nset title \"%s\"\n",
            p.o.title ? p.o.title : s_kinds[p.o.kind]);
    if (p.o.logx) {
        fprintf(gp, "set logscale x\n");
    }
    if (p.o.logy) {
        fprintf(gp, "set logscale y\n");
    }
    rc = s_body(&p, gp, err);
    fclose(gp);
    if (rc < 0) {
        goto done;
    }
    /* gnuplot through a pipe, from the figure's folder */
    fflush(NULL);
    FILE *pipe = popen("gnuplot", "w");
    if (!pipe) {
        rc = error_set(err, ERROR_RUNTIME, "cannot start gnuplot: %s", strerror(errno));
        goto done;
    }
    fprintf(pipe, "cd '%s'\nload '%s.gp'\n", p.dir, p.stem);
    int status = pclose(pipe);
    if (status != 0) {
        rc = error_set(err, ERROR_RUNTIME, "gnuplot failed on %s (status %d)", gp_path, status);
        goto done;
    }
    printf("%s (%d runs, %d groups; script %s)\n", p.o.out, p.nruns, p.ngroups, gp_path);
    rc = 0;
done:
    for (int r = 0; r < p.nruns; r++) {
        cJSON_Delete(p.runs[r].summary);
    }
    free(p.runs);
    return rc;
}
