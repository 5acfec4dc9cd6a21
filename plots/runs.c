/* runs.c: finding, grouping and reading the runs of a figure. */
#define _GNU_SOURCE   /* realpath, strverscmp */
#include "plots/runs.h"

#include <dirent.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cJSON.h>

#include "core/config.h"
#include "core/experiment.h"
#include "core/run.h"
#include "core/suggest.h"

const char *plot_name = "asgd plot";

void plot_run_value(const plot_run *r, const char *key, char *out, size_t n)
{
    out[0] = '\0';
    const char *dot = strchr(key, '.');
    if (!dot) {
        cJSON *v = cJSON_GetObjectItemCaseSensitive(r->summary, key);
        if (cJSON_IsString(v)) {
            snprintf(out, n, "%s", v->valuestring);
        } else if (cJSON_IsBool(v)) {   /* --group diverged: "(no diverged)" of every run */
            snprintf(out, n, "%s", cJSON_IsTrue(v) ? "true" : "false");
        } else if (cJSON_IsNumber(v)) {
            /* a whole number in full, others to 9 digits: "%g" made seeds
             * 10000001 and 10000002 one group, "seed = 1e+07" */
            double d = v->valuedouble;
            snprintf(out, n, d == floor(d) && fabs(d) < 0x1p53 ? "%.0f" : "%.9g", d);
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
        experiment_value_text(section, dot + 1, v, out, n);   /* lr = 5e-2 and 0.05: one group */
    }
    config_destroy(&c);
}

double plot_run_number(const plot_run *r, const char *key)
{
    cJSON *field = strchr(key, '.') ? NULL : cJSON_GetObjectItemCaseSensitive(r->summary, key);
    if (cJSON_IsNumber(field)) {   /* every digit, not the label's six */
        return field->valuedouble;
    }
    char v[256], *end;
    plot_run_value(r, key, v, sizeof v);
    double x = strtod(v, &end);
    return v[0] && *end == '\0' ? x : NAN;   /* "sync" is no number, not 0 */
}

bool plot_run_cut_short(const plot_run *r, const char *key)
{
    static const char *const of_its_length[] = {
        "time_s", "train_time_s", "wall_time_s", "epochs", "samples", "samples_per_s",
        "updates", "pushes", "push_bytes", "push_messages", "shared_pushes", "dropped",
        "rejected", "nonfinite", "duplicates", "lost_updates", "checkpoints", "checkpoint_s",
        "injected_drops", "injected_duplicates"};
    if (!cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(r->summary, "diverged"))) {
        return false;
    }
    for (size_t i = 0; i < sizeof of_its_length / sizeof of_its_length[0]; i++) {
        if (strcmp(key, of_its_length[i]) == 0) {
            return true;
        }
    }
    return false;
}

/* Folders in natural order: the digits in names compared as numbers, so
 * that a sweep's "workers=2" comes before its "workers=16" (strcmp put
 * 16 first, in reports and legends). */
static int s_by_name(const void *a, const void *b)
{
    return strverscmp(*(char *const *)a, *(char *const *)b);
}

/* The entries of dir but . and .., sorted (caller frees each and the list). */
static char **s_sorted_entries(const char *dir, size_t *count)
{
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
        if ((names[n] = strdup(ent->d_name))) {
            n++;
        }
    }
    if (d) {
        closedir(d);
    }
    if (n > 0) {
        qsort(names, n, sizeof *names, s_by_name);
    }
    *count = n;
    return names;
}

/* Whether a run with this real path was collected already (folders given
 * that overlap, or a link to a run, reach one run twice). */
static bool s_seen(const plot_runs *set, const char *real)
{
    for (int r = 0; r < set->count; r++) {
        if (strcmp(set->runs[r].real, real) == 0) {
            return true;
        }
    }
    return false;
}

/* Notes an incomplete run's folder, once per real path. */
static void s_left_out(plot_runs *set, const char *dir, const char *real)
{
    for (int i = 0; i < set->nleft_out; i++) {
        if (strcmp(set->left_out_real[i], real) == 0) {
            return;
        }
    }
    char **dirs = realloc(set->left_out, (size_t)(set->nleft_out + 1) * sizeof *dirs);
    if (dirs) {
        set->left_out = dirs;
    }
    char **reals = realloc(set->left_out_real, (size_t)(set->nleft_out + 1) * sizeof *reals);
    if (reals) {
        set->left_out_real = reals;
    }
    char *d = dirs && reals ? strdup(dir) : NULL, *r = d ? strdup(real) : NULL;
    if (!r) {   /* out of memory: the run goes uncounted, nothing else changes */
        free(d);
        return;
    }
    set->left_out[set->nleft_out] = d;
    set->left_out_real[set->nleft_out++] = r;
}

bool plot_runs_left_out(const plot_runs *set, char *out, size_t n)
{
    if (n > 0) {
        out[0] = '\0';
    }
    if (set->nleft_out == 0 || n < 64) {
        return set->nleft_out > 0;
    }
    /* incomplete: interrupted, failed, still running, or without an
     * evaluation to read */
    size_t len = (size_t)snprintf(out, n, "%d incomplete run%s left out (", set->nleft_out,
                                  set->nleft_out == 1 ? "" : "s");
    int shown = 0;
    for (; shown < set->nleft_out; shown++) {
        /* the folders that fit with room to close the list, then how many did not */
        size_t need = (shown > 0 ? 2 : 0) + strlen(set->left_out[shown]) + 24;
        if (len + need >= n) {
            break;
        }
        len += (size_t)snprintf(out + len, n - len, "%s%s", shown > 0 ? ", " : "",
                                set->left_out[shown]);
    }
    if (shown < set->nleft_out) {
        snprintf(out + len, n - len, "%s%d more)", shown > 0 ? ", and " : "",
                 set->nleft_out - shown);
    } else {
        snprintf(out + len, n - len, ")");
    }
    return true;
}

/* dir/eval.csv, open past its header; NULL when missing or when its
 * header is not asgd's (columns in another order would be read as ours:
 * a foreign file's loss drawn as accuracy). */
static FILE *s_open_eval(const char *dir)
{
    char path[4200], header[512];
    snprintf(path, sizeof path, "%s/eval.csv", dir);
    FILE *f = fopen(path, "r");
    if (f && (!fgets(header, sizeof header, f) ||
              strcmp(header, RUN_EVAL_HEADER "\n") != 0)) {
        fclose(f);
        return NULL;
    }
    return f;
}

/* Whether an eval.csv line is a row of a model that was evaluated: a
 * whole line (a last one cut short by a crash or a full disk may have lost
 * digits: "0.20" of 0.2081; summary.json leaves it out too), six numbers,
 * a finite time, and a finite loss (not a diverged model, whose accuracy
 * is whatever argmax makes of NaN parameters; summary.json's
 * best_test_acc leaves it out too). */
static bool s_eval_row(const char *line, double v[6])
{
    return strchr(line, '\n') &&
           sscanf(line, "%lf,%lf,%lf,%lf,%lf,%lf", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5]) == 6 &&
           isfinite(v[0]) && isfinite(v[4]);
}

/* Whether dir/eval.csv has a row of an evaluated model. */
static bool s_has_evaluation(const char *dir)
{
    char line[512];
    FILE *f = s_open_eval(dir);
    bool found = false;
    while (f && !found && fgets(line, sizeof line, f)) {
        double v[6];
        found = s_eval_row(line, v);
    }
    if (f) {
        fclose(f);
    }
    return found;
}

static void s_collect(plot_runs *set, const char *dir, int depth)
{
    char path[4200], real[PATH_MAX];
    snprintf(path, sizeof path, "%s/summary.json", dir);
    cJSON *j = run_read_json(path);
    if (j) {
        if (!realpath(dir, real)) {
            snprintf(real, sizeof real, "%s", dir);
        }
        /* a summary that says complete beside an eval.csv with no row to
         * read (missing, garbage) was plotted as a run without a word */
        bool complete = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(j, "complete")) &&
                        s_has_evaluation(dir);
        bool fresh = complete && !s_seen(set, real);   /* a run reached twice counts once */
        set->too_many = set->too_many || (fresh && set->count == PLOT_MAX_RUNS);
        if (fresh && set->count < PLOT_MAX_RUNS) {
            plot_run *r = &set->runs[set->count++];
            snprintf(r->dir, sizeof r->dir, "%s", dir);
            snprintf(r->real, sizeof r->real, "%s", real);
            r->summary = j;
        } else {
            if (!complete) {
                s_left_out(set, dir, real);
            }
            cJSON_Delete(j);
        }
        return;
    }
    /* a run folder (asgd train makes config.ini and log.txt first) whose
     * summary.json was never written (a full disk): incomplete, said */
    char log_path[4200];
    snprintf(path, sizeof path, "%s/config.ini", dir);
    snprintf(log_path, sizeof log_path, "%s/log.txt", dir);
    if (access(path, F_OK) == 0 && access(log_path, F_OK) == 0) {
        if (!realpath(dir, real)) {
            snprintf(real, sizeof real, "%s", dir);
        }
        s_left_out(set, dir, real);
        return;
    }
    size_t n;
    char **names = s_sorted_entries(dir, &n);
    bool deeper = false;   /* at the limit: whether runs may lie below, unsearched */
    for (size_t i = 0; i < n; i++) {
        char sub[4200];
        snprintf(sub, sizeof sub, "%s/%s", dir, names[i]);
        struct stat st;
        if (stat(sub, &st) == 0 && S_ISDIR(st.st_mode)) {
            if (depth > 0) {
                s_collect(set, sub, depth - 1);
            } else {
                deeper = true;
            }
        }
        free(names[i]);
    }
    free(names);
    if (deeper && set->too_deep++ == 0) {
        snprintf(set->too_deep_dir, sizeof set->too_deep_dir, "%s", dir);
    }
}

/* Groups in order of their values: numbers first, by value (2 workers
 * before 16, lr 1e-3 before 0.01), then the others with the digits in
 * them compared as numbers; one order whatever the mix (qsort needs it). */
static int s_by_group(const void *a, const void *b)
{
    const char *x = a, *y = b;
    char *xend, *yend;
    double u = strtod(x, &xend), v = strtod(y, &yend);
    bool xn = x[0] && *xend == '\0', yn = y[0] && *yend == '\0';
    if (xn != yn) {
        return xn ? -1 : 1;
    }
    if (xn && u != v) {
        return u < v ? -1 : 1;
    }
    return strverscmp(x, y);
}

static int s_group_index(plot_runs *set, const char *name)
{
    for (int g = 0; g < set->ngroups; g++) {
        if (strcmp(set->groups[g], name) == 0) {
            return g;
        }
    }
    if (set->ngroups == PLOT_MAX_GROUPS) {
        return -1;
    }
    snprintf(set->groups[set->ngroups], sizeof set->groups[0], "%s", name);
    return set->ngroups++;
}

/* The first key in which one run's config.ini differs from its group's
 * first run's, beyond what every run of a group may differ in. */
typedef struct mixed {
    config *first;
    const char *group_key, *x_key;
    bool setup_only;          /* only the keys every point of a scaling line must share */
    char where[300];          /* "[section] key (A in one, B in the other)" */
} mixed;

/* Whether "section.key" is one of the NULL-terminated keys. */
static bool s_listed(const char *section, const char *key, const char *const *keys)
{
    char full[256];
    snprintf(full, sizeof full, "%s.%s", section, key);
    for (int i = 0; keys[i]; i++) {
        if (strcmp(full, keys[i]) == 0) {
            return true;
        }
    }
    return false;
}

/* What the points of one scaling line must share, whatever else follows
 * its x: the mode (simulated seconds are not wall seconds), the model, the
 * data, the device and the work of a run. */
static bool s_setup_key(const char *section, const char *key)
{
    static const char *const keys[] = {"experiment.mode", "train.batch", "train.epochs",
                                       "backend.device", NULL};
    static const char *const where[] = {"data.path", "data.cache", NULL};   /* not what */
    return s_listed(section, key, keys) || strcmp(section, "model") == 0 ||
           (strcmp(section, "data") == 0 && !s_listed(section, key, where));
}

/* Keys a group's runs may differ in: where and which run it is, the
 * seed, the group's own key, and a scaling figure's x. */
static bool s_may_differ(const mixed *m, const char *section, const char *key)
{
    static const char *const own[] = {"experiment.seed", "experiment.run_id", "experiment.out",
                                      "experiment.name", NULL};
    if (s_listed(section, key, own)) {
        return true;
    }
    char full[256];
    snprintf(full, sizeof full, "%s.%s", section, key);
    const char *x = m->x_key ? m->x_key : "";
    return strcmp(full, m->group_key) == 0 || strcmp(full, x) == 0 ||
           (!strchr(x, '.') && strcmp(key, x) == 0);   /* x = workers: [cluster] workers */
}

static int s_compare_entry(void *ctx, const char *section, const char *key, const char *value)
{
    mixed *m = ctx;
    const char *was;
    error err;
    if (s_may_differ(m, section, key) || (m->setup_only && !s_setup_key(section, key)) ||
        config_get_string(m->first, section, key, "(none)", &was, &err) < 0) {
        return 0;
    }
    char a[256], b[256];
    experiment_value_text(section, key, was, a, sizeof a);
    experiment_value_text(section, key, value, b, sizeof b);
    if (strcmp(a, b) == 0) {
        return 0;
    }
    snprintf(m->where, sizeof m->where, "[%s] %s (%.60s and %.60s)", section, key, was, value);
    return 1;
}

static config *s_run_config(const plot_run *r)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/config.ini", r->dir);
    error err;
    return config_load(path, &err);
}

/* Whether run b's config.ini differs from run a's beyond what a group's
 * runs may (only in the keys of one setup, with setup_only); where, then,
 * names the first key. */
static bool s_differ(const plot_runs *set, int a, int b, const char *group_key,
                     const char *x_key, bool setup_only, char *where, size_t n)
{
    mixed m = {.first = s_run_config(&set->runs[a]), .group_key = group_key, .x_key = x_key,
               .setup_only = setup_only};
    config *c = m.first ? s_run_config(&set->runs[b]) : NULL;
    bool differ = c && config_each_entry(c, s_compare_entry, &m) != 0;
    if (differ) {
        snprintf(where, n, "%s", m.where);
    }
    config_destroy(&c);
    config_destroy(&m.first);
    return differ;
}

bool plot_runs_mixed(const plot_runs *set, int g, const char *group_key, const char *x_key,
                     char *out, size_t n)
{
    /* A scaling figure averages the runs of a group at each x alone, so a
     * run is compared with the group's first run at its own x: a key that
     * follows x (aeasgd's alpha = 0.9 / N, resolved into each config.ini)
     * mixes nothing. Without an x, with the group's first run. */
    char (*xs)[256] = x_key ? calloc((size_t)set->count, sizeof *xs) : NULL;
    for (int r = 0; xs && r < set->count; r++) {
        if (set->runs[r].g == g) {
            plot_run_value(&set->runs[r], x_key, xs[r], sizeof xs[r]);
        }
    }
    int first = -1, other = -1;
    char where[sizeof ((mixed *)0)->where] = "";
    for (int r = 0; r < set->count && other < 0; r++) {
        if (set->runs[r].g != g) {
            continue;
        }
        int f = r;
        for (int q = 0; q < r && f == r; q++) {
            if (set->runs[q].g == g && (!xs || strcmp(xs[q], xs[r]) == 0)) {
                f = q;
            }
        }
        if (f == r) {
            continue;
        }
        if (s_differ(set, f, r, group_key, x_key, false, where, sizeof where)) {
            first = f;
            other = r;
        }
    }
    bool across = false;   /* its points, each from the runs at its x, of one setup */
    for (int r = 0; xs && other < 0 && r < set->count; r++) {
        if (set->runs[r].g != g) {
            continue;
        }
        if (first < 0) {
            first = r;
            continue;
        }
        if (s_differ(set, first, r, group_key, x_key, true, where, sizeof where)) {
            other = r;
            across = true;
        }
    }
    free(xs);
    if (across) {
        snprintf(out, n, "its points differ in %s, not only in %s (%.1000s, %.1000s): a "
                 "speed-up or a trend along %s compares different experiments", where, x_key,
                 set->runs[first].dir, set->runs[other].dir, x_key);
    } else if (other >= 0) {
        snprintf(out, n, "its runs differ in %s, not only in their seeds (%.1000s, %.1000s)",
                 where, set->runs[first].dir, set->runs[other].dir);
    }
    return other >= 0;
}

/* A run's config.ini without its comments (the "# From BASE" line names
 * the file it came from, another path for a copy) and where it went
 * ([experiment] out, name and run_id), each value as experiment_value_text
 * gives it: runs with the same text ran the same config (config.ini is
 * written in one order); NULL when it cannot be read. */
static char *s_config_text(const plot_run *r)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/config.ini", r->dir);
    char *text = run_read_file(path);
    size_t lines = 1;
    for (const char *p = text; p && (p = strchr(p, '\n')); p++) {
        lines++;
    }
    /* a line grows by its value, at most 255 bytes as read */
    char *same = text ? malloc(strlen(text) + lines * 260) : NULL;
    char section[128] = "";
    size_t kept = 0;
    for (char *line = same ? text : NULL, *next; line && *line; line = next) {
        next = strchr(line, '\n');
        size_t len = next ? (size_t)(next - line) : strlen(line);
        next = next ? next + 1 : line + len;
        if (line[0] == '[') {
            snprintf(section, sizeof section, "%.*s", (int)strcspn(line + 1, "]\n"), line + 1);
        }
        const char *equals = memchr(line, '=', len);
        char key[128] = "", value[256], canonical[256];
        if (equals) {
            size_t end = (size_t)(equals - line);
            while (end > 0 && line[end - 1] == ' ') {
                end--;
            }
            snprintf(key, sizeof key, "%.*s", (int)end, line);
        }
        bool where = strcmp(section, "experiment") == 0 &&
                     (strcmp(key, "out") == 0 || strcmp(key, "name") == 0 ||
                      strcmp(key, "run_id") == 0);
        if (where || line[0] == '#' || line[0] == ';') {
            continue;
        }
        size_t head = equals ? (size_t)(equals - line) + 1 : len;
        snprintf(value, sizeof value, "%.*s", (int)(len - head), line + head);
        experiment_value_text(section, key, value + strspn(value, " "), canonical,
                              sizeof canonical);
        kept += (size_t)sprintf(same + kept, "%.*s%s%s\n", (int)head, line, equals ? " " : "",
                                equals ? canonical : "");
    }
    if (same) {
        same[kept] = '\0';
    }
    free(text);
    return same;
}

void plot_runs_warn_mixed(const plot_runs *set, const char *group_key, const char *x_key)
{
    for (int g = 0; g < set->ngroups; g++) {
        char why[2400];
        if (plot_runs_mixed(set, g, group_key, x_key, why, sizeof why)) {
            fprintf(stderr, "%s: %s: %s%s\n", plot_name, set->groups[g], why,
                    strstr(why, "its runs differ") == why ? ": its lines and points average them"
                                                          : "");
        }
    }
    /* one config run twice with one seed: each config read once, the
     * texts compared (a group's pairs parsed twice each took minutes) */
    char **texts = calloc((size_t)set->count, sizeof *texts);
    for (int r = 0; texts && r < set->count; r++) {
        texts[r] = s_config_text(&set->runs[r]);
    }
    for (int r = 0; texts && r < set->count; r++) {
        for (int q = 0; q < r && texts[r]; q++) {
            if (set->runs[q].g == set->runs[r].g && texts[q] && strcmp(texts[q], texts[r]) == 0) {
                char seed[64];
                plot_run_value(&set->runs[r], "seed", seed, sizeof seed);
                fprintf(stderr, "%s: %s: %s and %s are one config with seed %s, run "
                        "twice: its mean counts that seed twice\n", plot_name,
                        set->groups[set->runs[r].g], set->runs[q].dir, set->runs[r].dir, seed);
                break;
            }
        }
    }
    for (int r = 0; texts && r < set->count; r++) {
        free(texts[r]);
    }
    free(texts);
}

bool plot_runs_modes_mixed(const plot_runs *set, char *groups, size_t n)
{
    int sim = -1, measured = -1;
    for (int r = 0; r < set->count; r++) {
        char mode[16];
        plot_run_value(&set->runs[r], "mode", mode, sizeof mode);
        if (strcmp(mode, "sim") == 0) {
            sim = sim < 0 ? r : sim;
        } else if (mode[0]) {
            measured = measured < 0 ? r : measured;
        }
    }
    if (sim < 0 || measured < 0) {
        return false;
    }
    if (groups) {
        char mode[16];
        plot_run_value(&set->runs[measured], "mode", mode, sizeof mode);
        snprintf(groups, n, "%.200s: sim, %.200s: %s", set->groups[set->runs[sim].g],
                 set->groups[set->runs[measured].g], mode);
    }
    return true;
}

/* Says when a run has no value of a config key because its config.ini
 * cannot be read: such runs were grouped with every other without a word,
 * whatever their rules. */
static void s_say_unread_config(const plot_run *run, const char *key)
{
    char path[4200];
    error err;
    snprintf(path, sizeof path, "%s/config.ini", run->dir);
    config *c = strchr(key, '.') ? config_load(path, &err) : NULL;
    if (strchr(key, '.') && !c) {
        fprintf(stderr, "%s: %s: %s: grouped as \"(no %s)\"\n", plot_name, run->dir, err.msg, key);
    }
    config_destroy(&c);
}

/* The candidates for a mistyped --group KEY: the keys of run's
 * config.ini (section.key) and its summary's fields, into names. */
typedef struct key_names {
    char names[512][80];
    const char *list[513];
    int count;
} key_names;

static int s_add_key(void *ctx, const char *section, const char *key, const char *value)
{
    (void)value;
    key_names *k = ctx;
    if (k->count < 512) {
        snprintf(k->names[k->count], sizeof k->names[0], "%s.%s", section, key);
        k->list[k->count] = k->names[k->count];
        k->count++;
    }
    return 0;
}

/* -1 with err set where no run has key, as a config key or a summary
 * field, and asgd reads no such config key: a typo (cluster.worker) made
 * one group "(no cluster.worker)" of every run, exit 0. The nearest key
 * of the first run is suggested. */
static int s_check_group_key(const plot_runs *set, const char *key, error *err)
{
    const char *dot = strchr(key, '.');
    char section[128];
    snprintf(section, sizeof section, "%.*s", dot ? (int)(dot - key) : 0, key);
    if (dot && experiment_knows_key(section, dot + 1)) {
        return 0;   /* a key asgd reads, which these runs' configs may leave out */
    }
    for (int r = 0; r < set->count; r++) {
        if (strncmp(set->runs[r].group, "(no ", 4) != 0 ||
            (!dot && cJSON_GetObjectItemCaseSensitive(set->runs[r].summary, key))) {
            return 0;   /* a run has it (a field that is null, a list, in every run) */
        }
    }
    key_names *k = calloc(1, sizeof *k);
    if (!k) {
        return error_set(err, ERROR_RUNTIME, "out of memory");
    }
    char path[4200];
    snprintf(path, sizeof path, "%s/config.ini", set->runs[0].dir);
    error ignored;
    config *c = config_load(path, &ignored);
    if (c) {
        config_each_entry(c, s_add_key, k);
    }
    config_destroy(&c);
    const cJSON *field;
    cJSON_ArrayForEach(field, set->runs[0].summary) {
        if (k->count < 512 && field->string) {
            snprintf(k->names[k->count], sizeof k->names[0], "%s", field->string);
            k->list[k->count] = k->names[k->count];
            k->count++;
        }
    }
    const char *near = suggest_nearest(key, k->list);
    error_set(err, ERROR_USAGE, "--group %s: no run has it, as a key of its config.ini or a "
              "field of its summary.json%s%s%s", key, near ? "; did you mean " : "",
              near ? near : "", near ? "?" : "");
    free(k);
    return -1;
}

int plot_runs_collect(plot_runs *set, const char *const *dirs, int ndirs, const char *group_key,
                      error *err)
{
    memset(set, 0, sizeof *set);
    set->runs = calloc(PLOT_MAX_RUNS, sizeof *set->runs);
    if (!set->runs) {
        return error_set(err, ERROR_RUNTIME, "out of memory");
    }
    for (int i = 0; i < ndirs; i++) {
        struct stat st;
        if (stat(dirs[i], &st) != 0 || !S_ISDIR(st.st_mode)) {
            /* a mistyped one of several dropped its runs without a word */
            error_set(err, ERROR_USAGE, "%s: %s", dirs[i], stat(dirs[i], &st) != 0
                      ? "no such folder" : "not a folder of runs");
            plot_runs_free(set);
            return -1;
        }
        s_collect(set, dirs[i], PLOT_MAX_DEPTH);
    }
    if (set->too_deep > 0) {   /* runs below were left out without a word */
        fprintf(stderr, "%s: %d folder%s %d levels down hold%s folders not searched "
                "(%s, ...): give a folder nearer the runs\n", plot_name, set->too_deep,
                set->too_deep > 1 ? "s" : "", PLOT_MAX_DEPTH, set->too_deep > 1 ? "" : "s",
                set->too_deep_dir);
    }
    if (set->count == 0) {
        char left[1200];
        bool any = plot_runs_left_out(set, left, sizeof left);
        error_set(err, ERROR_USAGE, "no complete run folders under %s%s%s%s",
                  dirs[0], ndirs > 1 ? " and the others" : "", any ? "; " : "", left);
        plot_runs_free(set);
        return -1;
    }
    if (set->too_many) {
        error_set(err, ERROR_USAGE, "more than %d complete runs under %s%s: give "
                  "fewer folders (a figure of the first %d would look like one of all)",
                  PLOT_MAX_RUNS, dirs[0], ndirs > 1 ? " and the others" : "", PLOT_MAX_RUNS);
        plot_runs_free(set);
        return -1;
    }
    for (int r = 0; r < set->count; r++) {
        plot_run *run = &set->runs[r];
        plot_run_value(run, group_key, run->group, sizeof run->group);
        if (!run->group[0]) {
            snprintf(run->group, sizeof run->group, "(no %s)", group_key);
            s_say_unread_config(run, group_key);
        }
        if (s_group_index(set, run->group) < 0) {
            error_set(err, ERROR_USAGE, "more than %d groups of %s",
                      PLOT_MAX_GROUPS, group_key);
            plot_runs_free(set);
            return -1;
        }
    }
    if (s_check_group_key(set, group_key, err) < 0) {
        plot_runs_free(set);
        return -1;
    }
    qsort(set->groups, (size_t)set->ngroups, sizeof set->groups[0], s_by_group);
    for (int r = 0; r < set->count; r++) {
        plot_run *run = &set->runs[r];
        run->g = s_group_index(set, run->group);   /* there: added above */
        if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(run->summary, "diverged"))) {
            set->diverged[run->g] = true;
        }
    }
    return 0;
}

void plot_runs_free(plot_runs *set)
{
    for (int r = 0; r < set->count; r++) {
        cJSON_Delete(set->runs[r].summary);
    }
    for (int i = 0; i < set->nleft_out; i++) {
        free(set->left_out[i]);
        free(set->left_out_real[i]);
    }
    free(set->left_out);
    free(set->left_out_real);
    free(set->runs);
    memset(set, 0, sizeof *set);
}

double plot_run_time_to(const plot_run *r, double target)
{
    char line[512];
    FILE *f = s_open_eval(r->dir);
    double v[6], t = NAN;
    while (f && isnan(t) && fgets(line, sizeof line, f)) {
        if (s_eval_row(line, v) && v[2] > 0 && isfinite(v[5]) && v[5] >= target) {
            t = v[0];
        }
    }
    if (f) {
        fclose(f);
    }
    return t;
}

int plot_run_eval(const plot_run *r, int xc, int yc, double **xs, double **ys, int *went_back)
{
    char line[512];
    FILE *f = s_open_eval(r->dir);
    int n = 0, cap = 0, back = 0;
    *xs = *ys = NULL;
    while (f && fgets(line, sizeof line, f)) {
        double v[6];
        bool row = s_eval_row(line, v);
        if (!row || !isfinite(v[yc]) || !isfinite(v[xc]) || (n > 0 && v[xc] < (*xs)[n - 1])) {
            back += row && n > 0 && isfinite(v[xc]) && v[xc] < (*xs)[n - 1];
            continue;
        }
        if (n == cap) {
            cap = cap ? 2 * cap : 64;
            double *gx = realloc(*xs, (size_t)cap * sizeof **xs);
            double *gy = gx ? realloc(*ys, (size_t)cap * sizeof **ys) : NULL;
            if (gx) {
                *xs = gx;
            }
            if (!gy) {
                break;
            }
            *ys = gy;
        }
        (*xs)[n] = v[xc];
        (*ys)[n] = v[yc];
        n++;
    }
    if (f) {
        fclose(f);
    }
    if (went_back) {
        *went_back = back;
    }
    return n;
}
