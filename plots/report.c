/* report.c: `asgd report`: a Markdown and HTML page for a set of runs. */
#include "plots/report.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cJSON.h>

#include "core/config.h"
#include "core/experiment.h"
#include "core/provenance.h"
#include "core/run.h"
#include "core/stop.h"
#include "core/suggest.h"
#include "plots/gnuplot.h"
#include "plots/plot.h"
#include "plots/runs.h"

#define REPORT_MAX_DIRS 256
#define REPORT_MAX_KEYS 512

/* The page, written to both files at once. */
typedef struct doc {
    FILE *md, *html;
} doc;

static void s_html_text(FILE *f, const char *t)
{
    for (; *t; t++) {
        switch (*t) {
        case '&': fputs("&amp;", f); break;
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '"': fputs("&quot;", f); break;
        default: fputc(*t, f);
        }
    }
}

/* A Markdown table cell: a | would end it, a newline the row. */
static void s_md_cell(FILE *f, const char *t)
{
    for (; *t; t++) {
        if (*t == '|') {
            fputs("\\|", f);
        } else {
            fputc(*t == '\n' ? ' ' : *t, f);
        }
    }
}

static void s_heading(doc *d, int level, const char *text)
{
    fprintf(d->md, "\n%.*s %s\n\n", level, "####", text);
    fprintf(d->html, "<h%d>", level);
    s_html_text(d->html, text);
    fprintf(d->html, "</h%d>\n", level);
}

static void s_para(doc *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void s_para(doc *d, const char *fmt, ...)
{
    char text[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    fprintf(d->md, "%s\n\n", text);
    fputs("<p>", d->html);
    s_html_text(d->html, text);
    fputs("</p>\n", d->html);
}

static void s_row(doc *d, int n, const char *const *cells, bool header)
{
    fputs("|", d->md);
    fputs("<tr>", d->html);
    for (int i = 0; i < n; i++) {
        fputc(' ', d->md);
        s_md_cell(d->md, cells[i]);
        fputs(" |", d->md);
        fputs(header ? "<th>" : "<td>", d->html);
        s_html_text(d->html, cells[i]);
        fputs(header ? "</th>" : "</td>", d->html);
    }
    fputs("\n", d->md);
    fputs("</tr>\n", d->html);
    if (header) {
        fputs("|", d->md);
        for (int i = 0; i < n; i++) {
            fputs("---|", d->md);
        }
        fputs("\n", d->md);
    }
}

static void s_table_start(doc *d, int n, const char *const *header)
{
    fputs("<table>\n", d->html);
    s_row(d, n, header, true);
}

static void s_table_end(doc *d)
{
    fputs("\n", d->md);
    fputs("</table>\n", d->html);
}

static void s_image(doc *d, const char *file, const char *alt)
{
    fprintf(d->md, "![%s](%s)\n\n", alt, file);
    fputs("<p><img src=\"", d->html);
    s_html_text(d->html, file);
    fputs("\" alt=\"", d->html);
    s_html_text(d->html, alt);
    fputs("\"></p>\n", d->html);
}

/* A summary field as text: a number with `digits` decimals (or, with
 * digits < 0, -digits significant ones and no fewer than a whole number's:
 * a simulated run's 0.0115 s is not "0.01"), 6 significant ones from a
 * billion on unless it is a whole number a double holds exactly (a loss of
 * 8.8e65 printed 66 digits, all but the first few noise), or the string. */
static void s_field(char *out, size_t n, const cJSON *summary, const char *key, int digits)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(summary, key);
    double d = cJSON_IsNumber(v) ? v->valuedouble : 0;
    if (cJSON_IsNumber(v) && fabs(d) >= 1e9 && !(d == floor(d) && fabs(d) < 0x1p53)) {
        snprintf(out, n, "%.6g", d);
    } else if (cJSON_IsNumber(v) && digits < 0 && fabs(d) < pow(10, -digits - 1)) {
        snprintf(out, n, "%.*g", -digits, d);
    } else if (cJSON_IsNumber(v)) {
        snprintf(out, n, "%.*f", digits < 0 ? 0 : digits, v->valuedouble);
    } else if (cJSON_IsString(v)) {
        snprintf(out, n, "%s", v->valuestring);
    } else if (cJSON_IsBool(v)) {
        snprintf(out, n, "%s", cJSON_IsTrue(v) ? "yes" : "no");
    } else {
        snprintf(out, n, "-");
    }
}

#define REPORT_NAME_SIZE 512

/* The last `parts` parts of a path, without trailing slashes, into out;
 * true when that is the whole path. */
static bool s_last_parts(char *out, size_t n, const char *dir, int parts)
{
    size_t end = strlen(dir);
    while (end > 1 && dir[end - 1] == '/') {
        end--;
    }
    size_t start = end;
    for (int k = 0; k < parts && start > 0; k++) {
        while (k > 0 && start > 0 && dir[start - 1] == '/') {
            start--;
        }
        while (start > 0 && dir[start - 1] != '/') {
            start--;
        }
    }
    snprintf(out, n, "%.*s", (int)(end - start), dir + start);
    return start == 0;
}

/* Every run's name on the page: its folder's last part, or as many of its
 * last parts as tell it from every other run (two folders given may each
 * hold a hogwild-seed1: the page showed two rows of that name, with
 * different numbers and nothing to say which was which). names holds
 * count x REPORT_NAME_SIZE; NULL when out of memory. */
static char *s_names(const plot_runs *set)
{
    char *names = calloc((size_t)set->count, REPORT_NAME_SIZE);
    char mine[REPORT_NAME_SIZE], theirs[REPORT_NAME_SIZE];
    for (int r = 0; names && r < set->count; r++) {
        const char *dir = set->runs[r].dir;
        for (int parts = 1;; parts++) {
            bool whole = s_last_parts(mine, sizeof mine, dir, parts);
            bool alike = false;
            for (int q = 0; q < set->count && !alike; q++) {
                s_last_parts(theirs, sizeof theirs, set->runs[q].dir, parts);
                alike = q != r && strcmp(mine, theirs) == 0;
            }
            if (!alike || whole) {
                break;
            }
        }
        snprintf(names + (size_t)r * REPORT_NAME_SIZE, REPORT_NAME_SIZE, "%s", mine);
    }
    return names;
}

static const char *s_name(const char *names, int r)
{
    return names + (size_t)r * REPORT_NAME_SIZE;
}

static void s_summaries(doc *d, const plot_runs *set, const char *names)
{
    static const char *const header[] = {"run", "rule", "mode", "workers", "final test acc",
                                         "best test acc", "final test loss",
                                         "training time (s)", "samples/s", "mean staleness",
                                         "diverged"};
    static const char *const keys[] = {"algorithm", "mode", "workers", "final_test_acc",
                                       "best_test_acc", "final_test_loss", "time_s",
                                       "samples_per_s", "staleness_mean", "diverged"};
    /* < 0: that many significant digits below 10^(-d-1) (a loss of
     * 5.1e-05 read 0.0001 at 4 decimals, a staleness of 0.004 read 0.00) */
    static const int digits[] = {0, 0, 0, 4, 4, -4, -4, -4, -3, 0};
    enum { COLUMNS = sizeof header / sizeof header[0] };
    s_heading(d, 2, "Runs");
    s_table_start(d, COLUMNS, header);
    for (int r = 0; r < set->count; r++) {
        char cells[COLUMNS][256];
        const char *row[COLUMNS] = {s_name(names, r)};
        for (int k = 0; k < COLUMNS - 1; k++) {
            s_field(cells[k + 1], sizeof cells[k + 1], set->runs[r].summary, keys[k], digits[k]);
            row[k + 1] = cells[k + 1];
        }
        /* the rule that ran, and the label it was given where that differs
         * (the column showed the label alone: "hogwild" for a sync run) */
        char label[200];
        s_field(label, sizeof label, set->runs[r].summary, "label", 0);
        size_t used = strlen(cells[1]);
        if (label[0] && strcmp(label, cells[1]) != 0 && used + strlen(label) + 4 < sizeof cells[1]) {
            snprintf(cells[1] + used, sizeof cells[1] - used, " (%s)", label);
        }
        s_row(d, COLUMNS, row, false);
    }
    s_table_end(d);
}

/* Every run's config, as "section.key" = value, for the keys that differ. */
typedef struct configs {
    int runs, nkeys;
    char *keys[REPORT_MAX_KEYS];
    char **values;            /* runs x REPORT_MAX_KEYS, NULL: not in that run */
    int run;                  /* the run being read */
} configs;

static int s_key_index(configs *c, const char *key)
{
    for (int k = 0; k < c->nkeys; k++) {
        if (strcmp(c->keys[k], key) == 0) {
            return k;
        }
    }
    if (c->nkeys == REPORT_MAX_KEYS || !(c->keys[c->nkeys] = strdup(key))) {
        return -1;
    }
    return c->nkeys++;
}

static int s_take_entry(void *ctx, const char *section, const char *key, const char *value)
{
    configs *c = ctx;
    char name[300];
    snprintf(name, sizeof name, "%s.%s", section, key);
    if (strcmp(name, "experiment.run_id") == 0 || strcmp(name, "experiment.out") == 0) {
        return 0;   /* they differ by construction */
    }
    int k = s_key_index(c, name);
    if (k >= 0) {
        char text[512];
        experiment_value_text(section, key, value, text, sizeof text);   /* 5e-2, 0.05: alike */
        free(c->values[c->run * REPORT_MAX_KEYS + k]);
        c->values[c->run * REPORT_MAX_KEYS + k] = strdup(text);
    }
    return 0;
}

static bool s_differs(const configs *c, int k)
{
    const char *first = c->values[k];
    for (int r = 1; r < c->runs; r++) {
        const char *v = c->values[r * REPORT_MAX_KEYS + k];
        if (!first != !v || (first && strcmp(first, v) != 0)) {
            return true;
        }
    }
    return false;
}

static void s_differences(doc *d, const plot_runs *set, const char *names)
{
    configs c = {.runs = set->count};
    c.values = calloc((size_t)set->count * REPORT_MAX_KEYS, sizeof *c.values);
    s_heading(d, 2, "What differs between the runs");
    for (int r = 0; c.values && r < set->count; r++) {
        char path[4200];
        snprintf(path, sizeof path, "%s/config.ini", set->runs[r].dir);
        error err;
        config *cfg = config_load(path, &err);
        c.run = r;
        if (cfg) {
            config_each_entry(cfg, s_take_entry, &c);
        }
        config_destroy(&cfg);
    }
    int differing[REPORT_MAX_KEYS], n = 0;
    for (int k = 0; c.values && k < c.nkeys; k++) {
        if (s_differs(&c, k)) {
            differing[n++] = k;
        }
    }
    if (n == 0) {
        s_para(d, "Every run has the same resolved config%s.",
               set->count > 1 ? " (but its run id): they differ only by chance" : "");
    } else {
        const char *header[REPORT_MAX_KEYS + 1] = {"run"};
        for (int i = 0; i < n; i++) {
            header[i + 1] = c.keys[differing[i]];
        }
        s_para(d, "The keys of the resolved configs (config.ini) whose values are not the same "
               "in every run (-: a key that run's config does not have); all other keys are.");
        s_table_start(d, n + 1, header);
        for (int r = 0; r < set->count; r++) {
            const char *row[REPORT_MAX_KEYS + 1] = {s_name(names, r)};
            for (int i = 0; i < n; i++) {
                const char *v = c.values[r * REPORT_MAX_KEYS + differing[i]];
                row[i + 1] = v ? v : "-";
            }
            s_row(d, n + 1, row, false);
        }
        s_table_end(d);
    }
    for (int k = 0; k < c.nkeys; k++) {
        free(c.keys[k]);
        for (int r = 0; c.values && r < c.runs; r++) {
            free(c.values[r * REPORT_MAX_KEYS + k]);
        }
    }
    free(c.values);
}

/* The figures, each drawn by asgd plot into out: one that has nothing to
 * show is said on the page; one that could not be drawn (gnuplot failed,
 * the disk is full) fails the report, err set. */
static int s_figures(doc *d, const plot_runs *set, const char *out, const char *const *dirs,
                     int ndirs, const char *target, error *err)
{
    static const char *const kinds[] = {"convergence", "time-to-accuracy", "throughput",
                                        "staleness"};
    s_heading(d, 2, "Figures");
    if (!gnuplot_available()) {
        s_para(d, "No figures: gnuplot is not installed (apt-get install gnuplot-nox), and "
               "asgd report draws them with it.");
        return 0;
    }
    /* a group whose runs differ in more than their seeds (real and
     * simulated time, another compressor) is one line or bar all the same:
     * asgd plot says so on stderr only, which the page left out */
    for (int g = 0; g < set->ngroups; g++) {
        char why[2400];
        if (plot_runs_mixed(set, g, "experiment.label", NULL, why, sizeof why)) {
            s_para(d, "%s: %s: its lines, points and bars below average them as if they were "
                   "seeds.", set->groups[g], why);
        }
    }
    char groups[600];
    if (plot_runs_modes_mixed(set, groups, sizeof groups)) {
        s_para(d, "Simulated and measured runs share the time axes and rates below (%s): "
               "simulated seconds are the model's, not this host's.", groups);
    }
    for (int i = 0; i < 4; i++) {
        char file[64], path[4200];
        snprintf(file, sizeof file, "report-%s.png", kinds[i]);
        snprintf(path, sizeof path, "%s/%s", out, file);
        char *argv[REPORT_MAX_DIRS + 10];
        int argc = 0;
        for (int k = 0; k < ndirs; k++) {
            argv[argc++] = (char *)dirs[k];
        }
        const char *rest[] = {"-o", path, "--kind", kinds[i], "--target", target, "--size",
                              "page"};
        for (int k = 0; k < 8; k++) {
            argv[argc++] = (char *)rest[k];
        }
        error why = {0};
        if (plot_main(argc, argv, &why) < 0 && why.status != ERROR_USAGE) {
            *err = why;
            return -1;
        } else if (why.msg[0]) {   /* the page is the report's: not "asgd report: --kind" */
            size_t said = strlen(plot_name);
            bool named = strncmp(why.msg, plot_name, said) == 0 && why.msg[said] == ':';
            s_para(d, "%s: not drawn: %s", kinds[i], why.msg + (named ? said + 2 : 0));
        } else {
            s_image(d, file, kinds[i]);
        }
    }
    return 0;
}

static void s_provenance(doc *d, const plot_runs *set, const char *names)
{
    static const char *const header[] = {"run", "started", "host", "cpu", "cores", "device",
                                         "asgd", "commit", "uncommitted changes", "command"};
    static const char *const keys[] = {"started", "host", "cpu", "cores", "device",
                                       "asgd_version", "git_commit", "git_dirty", "command"};
    s_heading(d, 2, "Provenance");
    s_table_start(d, 10, header);
    for (int r = 0; r < set->count; r++) {
        char cells[10][1024];
        const char *row[10] = {s_name(names, r)};
        for (int k = 0; k < 9; k++) {
            s_field(cells[k + 1], sizeof cells[k + 1], set->runs[r].summary, keys[k], 0);
            row[k + 1] = cells[k + 1];
        }
        cells[7][12] = '\0';   /* the commit, short */
        s_row(d, 10, row, false);
    }
    s_table_end(d);
}

typedef struct report_options {
    const char *dirs[REPORT_MAX_DIRS];
    int ndirs;
    const char *out, *target;
} report_options;

static int s_parse(report_options *o, int argc, char **argv, error *err)
{
    *o = (report_options){.target = "0.8"};
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if ((strcmp(a, "-o") == 0 || strcmp(a, "--target") == 0) && i + 1 < argc) {
            *(a[1] == 'o' ? &o->out : &o->target) = argv[++i];
        } else if (strcmp(a, "-o") == 0 || strcmp(a, "--target") == 0) {
            return error_set(err, ERROR_USAGE, "asgd report: %s needs a value", a);
        } else if (a[0] == '-') {
            static const char *const known[] = {"-o", "--target", NULL};
            const char *near = suggest_nearest(a, known);
            return error_set(err, ERROR_USAGE, "asgd report: unknown option %s%s%s%s", a,
                             near ? "; did you mean " : "", near ? near : "", near ? "?" : "");
        } else if (o->ndirs == REPORT_MAX_DIRS) {
            return error_set(err, ERROR_USAGE, "asgd report: too many folders");
        } else {
            o->dirs[o->ndirs++] = a;
        }
    }
    if (o->ndirs == 0) {
        return error_set(err, ERROR_USAGE, "usage: asgd report RUN_OR_SWEEP_DIR... [-o OUT] "
                         "[--target ACC]");
    }
    char *end;
    double t = strtod(o->target, &end);
    if (*end || end == o->target || !(t > 0 && t <= 1)) {
        return error_set(err, ERROR_USAGE, "asgd report: --target %s: expected a test "
                         "accuracy above 0, at most 1", o->target);
    }
    o->out = o->out ? o->out : o->dirs[0];
    return 0;
}

int report_main(int argc, char **argv, error *err)
{
    report_options o;
    plot_name = "asgd report";   /* the figures' modules' messages are its own */
    if (s_parse(&o, argc, argv, err) < 0) {
        return -1;
    }
    plot_runs set;
    /* the runs first: a mistyped folder was made (empty) before it was read */
    if (plot_runs_collect(&set, o.dirs, o.ndirs, "experiment.label", err) < 0) {
        return -1;
    }
    if (run_make_dirs(o.out, err) < 0) {
        plot_runs_free(&set);
        return -1;
    }
    /* both pages written under temporary names and renamed once whole: a
     * failure (a full disk, Ctrl-C) leaves the last report as it was */
    char md_path[4200], html_path[4200], md_tmp[4300], html_tmp[4300];
    snprintf(md_path, sizeof md_path, "%s/report.md", o.out);
    snprintf(html_path, sizeof html_path, "%s/report.html", o.out);
    snprintf(md_tmp, sizeof md_tmp, "%s/.report.md.%ld.tmp", o.out, (long)getpid());
    snprintf(html_tmp, sizeof html_tmp, "%s/.report.html.%ld.tmp", o.out, (long)getpid());
    doc d = {.md = fopen(md_tmp, "w"), .html = fopen(html_tmp, "w")};
    char *names = s_names(&set);
    int rc = 0;
    if (!names) {
        rc = error_set(err, ERROR_RUNTIME, "asgd report: out of memory");
    } else if (!d.md || !d.html) {
        rc = error_set(err, ERROR_RUNTIME, "%s: cannot write: %s", d.md ? html_path : md_path,
                       strerror(errno));
    } else {
        fputs("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>asgd report</title>"
              "<style>body{font-family:sans-serif;max-width:72em;margin:2em auto}"
              "table{border-collapse:collapse;font-size:90%}td,th{border:1px solid #ccc;"
              "padding:2px 6px;text-align:left}img{max-width:100%}</style></head><body>\n",
              d.html);
        fputs("# asgd report\n\n", d.md);
        fputs("<h1>asgd report</h1>\n", d.html);
        time_t now = time(NULL);
        struct tm tm;
        char when[64];
        gmtime_r(&now, &tm);
        strftime(when, sizeof when, "%Y-%m-%d %H:%M UTC", &tm);
        s_para(&d, "%d complete run%s in %d group%s under %s%s, written %s by %s.",
               set.count, set.count == 1 ? "" : "s", set.ngroups, set.ngroups == 1 ? "" : "s",
               o.dirs[0], o.ndirs > 1 ? " and the other folders given" : "", when,
               provenance_version_line());
        char left[1800];
        if (plot_runs_left_out(&set, left, sizeof left)) {   /* a sweep cut short is no smaller sweep */
            s_para(&d, "%s.", left);
        }
        s_summaries(&d, &set, names);
        s_differences(&d, &set, names);
        rc = s_figures(&d, &set, o.out, o.dirs, o.ndirs, o.target, err);
        s_provenance(&d, &set, names);
        fputs("</body></html>\n", d.html);
    }
    bool md_ok = d.md && fclose(d.md) == 0, html_ok = d.html && fclose(d.html) == 0;
    if (rc == 0 && (!md_ok || !html_ok)) {
        rc = error_set(err, ERROR_RUNTIME, "%s: cannot write (is the disk full?)",
                       md_ok ? html_path : md_path);
    }
    int sig = stop_requested();
    if (rc == 0 && sig) {
        rc = error_set(err, ERROR_SIGNALLED(sig), "asgd report: interrupted (signal %d); %s is "
                       "as it was", sig, md_path);
    }
    if (rc == 0 && (rename(md_tmp, md_path) != 0 || rename(html_tmp, html_path) != 0)) {
        rc = error_set(err, ERROR_RUNTIME, "%s: cannot write: %s", o.out, strerror(errno));
    }
    if (rc < 0) {
        remove(md_tmp);
        remove(html_tmp);
    }
    if (rc == 0) {
        printf("%s %s (%d run%s)\n", md_path, html_path, set.count, set.count == 1 ? "" : "s");
    }
    free(names);
    plot_runs_free(&set);
    return rc;
}
