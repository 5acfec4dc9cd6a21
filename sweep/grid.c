/* grid.c: reading a sweep file and expanding its grid. */
#include "sweep/grid.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cJSON.h>

#include "core/backend/backend.h"
#include "core/experiment.h"
#include "core/run.h"
#include "sweep/resolved.h"

static char *s_trim(char *s)
{
    while (*s == ' ' || *s == '\t') {
        s++;
    }
    char *end = s + strlen(s);
    while (end > s && (end[-1] == ' ' || end[-1] == '\t')) {
        *--end = '\0';
    }
    return s;
}

typedef struct grid_ctx {
    sweep *s;
    error *err;
} grid_ctx;

/* Why key may not be a [grid] key: the sweep sets it for every run; NULL
 * when it may. */
static const char *s_sweeps_own(const char *key)
{
    static const char *const own[][2] = {
        {"experiment.seed", "list seeds in [sweep] as `seeds =`"},
        {"experiment.name", "name the sweep in [sweep] as `name =`"},
        {"experiment.out", "say where runs go in [sweep] as `out =`"},
        {"experiment.run_id", "each run's folder is named by its grid values and seed"},
    };
    for (size_t i = 0; i < sizeof own / sizeof own[0]; i++) {
        if (strcmp(key, own[i][0]) == 0) {
            return own[i][1];
        }
    }
    return NULL;
}

/* How many of -j's slots a run takes: a real run's processes (workers,
 * shards, the evaluator), a threads run's threads (workers and the
 * evaluating main thread), else one. */
static int s_weight(const experiment *e)
{
    if (!e->alg) {
        return 1;
    }
    return e->mode == MODE_REAL ? e->workers + e->servers + 1
           : e->mode == MODE_THREADS ? e->workers + 1
                                     : 1;
}

/* -1 naming the key when v is already one of k's values: two folders of
 * one run (two spellings of one value are found once the runs resolve:
 * s_check_same). */
static int s_check_repeat(const sweep *s, const grid_key *k, const char *v, error *err)
{
    for (int i = 0; i < k->count; i++) {
        if (strcmp(k->values[i], v) == 0) {
            return error_set(err, ERROR_USAGE, "%s:%d: [grid] %s: %s is listed twice", s->path,
                             k->line, k->key, v);
        }
    }
    return 0;
}

static int s_grid_entry(void *ctx, const char *key, const char *value, int line)
{
    grid_ctx *g = ctx;
    sweep *s = g->s;
    if (s->nkeys == SWEEP_MAX_KEYS) {
        return error_set(g->err, ERROR_USAGE, "%s:%d: [grid] %s: more than %d keys", s->path,
                         line, key, SWEEP_MAX_KEYS);
    }
    if (!strchr(key, '.') || key[0] == '.') {
        return error_set(g->err, ERROR_USAGE, "%s:%d: [grid] %s: expected section.key", s->path,
                         line, key);
    }
    const char *own = s_sweeps_own(key);
    if (own) {
        return error_set(g->err, ERROR_USAGE, "%s:%d: [grid] %s: the sweep sets it itself; %s",
                         s->path, line, key, own);
    }
    grid_key *k = &s->keys[s->nkeys++];
    snprintf(k->key, sizeof k->key, "%s", key);
    k->line = line;
    char *copy = strdup(value);
    if (!copy) {
        return error_set(g->err, ERROR_RUNTIME, "out of memory");
    }
    /* values of a key that takes a list (model.hidden = 64,32) go between
     * '|': 64,32 | 128,64 */
    k->bars = strchr(value, '|') != NULL;
    const char *between = k->bars ? "|" : ",";
    for (char *item = copy, *rest; item; item = rest) {
        char *end = strchr(item, *between);
        rest = end ? end + 1 : NULL;
        if (end) {
            *end = '\0';
        }
        char *v = s_trim(item);
        if (*v == '\0') {   /* "0.1,,0.2": two runs, or a run of an empty value? */
            if (strspn(value, " \t,|") != strlen(value)) {   /* else no value at all */
                free(copy);
                return error_set(g->err, ERROR_USAGE, "%s:%d: [grid] %s: an empty value "
                                 "between its %s", s->path, line, key,
                                 k->bars ? "'|'s" : "commas");
            }
            continue;
        }
        if (k->count == SWEEP_MAX_VALUES || strchr(v, '/')) {
            /* said before copy, which v points into, is freed (read after:
             * "too many values" of a path) */
            error_set(g->err, ERROR_USAGE, "%s:%d: [grid] %s: %s", s->path, line, key,
                      strchr(v, '/') ? "values may not contain '/' (a run's folder is named by "
                                       "them)" : "too many values");
            free(copy);
            return -1;
        }
        if (s_check_repeat(s, k, v, g->err) < 0) {
            free(copy);
            return -1;
        }
        k->values[k->count++] = strdup(v);
    }
    free(copy);
    if (k->count == 0) {
        return error_set(g->err, ERROR_USAGE, "%s:%d: [grid] %s: an empty list of values",
                         s->path, line, key);
    }
    return 0;
}

void sweep_free(sweep *s)
{
    for (int k = 0; k < s->nkeys; k++) {
        for (int v = 0; v < s->keys[k].count; v++) {
            free(s->keys[k].values[v]);
        }
    }
    for (int r = 0; s->runs && r < s->nruns; r++) {
        for (int o = 0; o < s->runs[r].noverrides; o++) {
            free(s->runs[r].overrides[o]);
        }
    }
    free(s->runs);
    config_destroy(&s->c);
}

/* -1 naming [sweep] seeds when it is empty or lists a seed twice (two
 * folders of one run). */
static int s_check_seeds(const sweep *s, error *err)
{
    if (s->nseeds == 0) {
        return config_error(s->c, "sweep", "seeds", err, "an empty list of values");
    }
    for (int i = 1; i < s->nseeds; i++) {
        for (int j = 0; j < i; j++) {
            if (s->seeds[i] == s->seeds[j]) {
                return config_error(s->c, "sweep", "seeds", err, "seed %ld is listed twice",
                                    s->seeds[i]);
            }
        }
    }
    return 0;
}

static int s_read(sweep *s, error *err)
{
    s->c = config_load(s->path, err);
    if (!s->c) {
        return -1;
    }
    const char *base, *out;
    char default_name[256];
    const char *slash = strrchr(s->path, '/');
    const char *file = slash ? slash + 1 : s->path;
    snprintf(default_name, sizeof default_name, "%.*s",
             (int)(strrchr(file, '.') && strrchr(file, '.') != file ? strrchr(file, '.') - file
                                                                    : (long)strlen(file)), file);
    if (config_get_string(s->c, "sweep", "base", "", &base, err) < 0 ||
        config_get_string(s->c, "sweep", "name", default_name, &s->name, err) < 0 ||
        config_get_string(s->c, "sweep", "out", "runs", &out, err) < 0 ||
        config_get_int_list(s->c, "sweep", "seeds", "1,2,3", 0, 0x7fffffffL, s->seeds, 64,
                            &s->nseeds, err) < 0) {
        return -1;
    }
    if (!base[0]) {
        return error_set(err, ERROR_USAGE, "%s: [sweep] base: the base config is missing",
                         s->path);
    }
    if (!s->name[0] || strchr(s->name, '/') || strcmp(s->name, ".") == 0 ||
        strcmp(s->name, "..") == 0) {   /* the sweep's folder is out/name */
        return config_error(s->c, "sweep", "name", err, "\"%s\" must be a plain folder name",
                            s->name);
    }
    if (!out[0]) {
        return config_error(s->c, "sweep", "out", err, "must name a folder (\".\" for the "
                            "sweep file's)");
    }
    if (s_check_seeds(s, err) < 0) {
        return -1;
    }
    /* base and out are relative to the sweep file, made absolute: a run's
     * folder in results.csv does not depend on where the sweep started */
    const char *paths[2] = {base, out};
    char *dest[2] = {s->base, s->out};
    char cwd[2048];
    if (!getcwd(cwd, sizeof cwd)) {
        return error_set(err, ERROR_RUNTIME, "cannot tell the current folder");
    }
    for (int i = 0; i < 2; i++) {
        char rel[4200];
        if (paths[i][0] == '/' || !slash) {
            snprintf(rel, sizeof rel, "%s", paths[i]);
        } else {
            snprintf(rel, sizeof rel, "%.*s/%s", (int)(slash - s->path), s->path, paths[i]);
        }
        int n = snprintf(dest[i], sizeof s->base, "%s%s%s", rel[0] == '/' ? "" : cwd,
                         rel[0] == '/' ? "" : "/", rel);
        if (n < 0 || n >= (int)sizeof s->base) {
            return config_error(s->c, "sweep", i ? "out" : "base", err, "the path is too long");
        }
    }
    if (access(s->base, R_OK) != 0) {   /* said as the first run's, not as the key's */
        return config_error(s->c, "sweep", "base", err, "%s: %s", s->base, strerror(errno));
    }
    grid_ctx g = {.s = s, .err = err};
    if (config_each(s->c, "grid", s_grid_entry, &g) != 0) {
        return -1;
    }
    return config_check_unused(s->c, NULL, NULL, NULL, err);
}

/* A line "command line: KEY=VALUE: why" or "command line: KEY: why" of a
 * grid override, rewritten in place as the sweep file's line ("FILE:LINE:
 * [grid] KEY: why"); true when it was one. */
static bool s_blame_line(const sweep *s, char *line, size_t size)
{
    const char *prefix = "command line: ";
    if (strncmp(line, prefix, strlen(prefix)) != 0) {
        return false;
    }
    const char *arg = line + strlen(prefix);
    for (int k = 0; k < s->nkeys; k++) {
        size_t len = strlen(s->keys[k].key);
        if (strncmp(arg, s->keys[k].key, len) != 0 || (arg[len] != '=' && arg[len] != ':')) {
            continue;
        }
        const char *why = arg[len] == ':' ? arg + len : strstr(arg + len, ": ");
        char *msg = malloc(size);
        if (msg && snprintf(msg, size, "%s:%d: [grid] %s: %s", s->path, s->keys[k].line,
                            s->keys[k].key, why && why[1] ? why + 2 : "bad value") >= 0) {
            memcpy(line, msg, size);   /* cut to size, as the message was */
        }
        free(msg);
        return true;
    }
    return false;
}

/* out as the runs are given it: from the current folder, theirs too,
 * where it is under it (a line of config.ini holds 198 characters, and
 * a deep folder's whole path did not fit). */
static const char *s_from_here(const char *out)
{
    static char cwd[4096];
    if (!getcwd(cwd, sizeof cwd)) {
        return out;
    }
    size_t len = strlen(cwd);
    return strncmp(out, cwd, len) == 0 && out[len] == '/' && len > 1 ? out + len + 1 : out;
}

/* err from configuring or checking run: a grid value's as the sweep file's
 * line, the sweep's own overrides' as what sets them; else (a key of the
 * base config, or a check of several keys) said with the run it came
 * from. */
static int s_blame(const sweep *s, const sweep_run *run, error *err)
{
    const char *out = "command line: experiment.out", *id = "command line: experiment.run_id";
    if (strncmp(err->msg, out, strlen(out)) == 0) {
        const char *why = strstr(err->msg + strlen(out), ": ");
        error was = *err;
        bool long_line = strstr(was.msg, "too long for a line") != NULL;
        config_error(s->c, "sweep", "out", err, "%s (as %s, from the folder the sweep started "
                     "in)%s", why ? why + 2 : was.msg, s_from_here(s->out),
                     long_line ? ": start it nearer, or give a shorter out" : "");
        return -1;
    }
    if (strncmp(err->msg, id, strlen(id)) == 0) {
        return error_set(err, ERROR_USAGE, "%s: [grid]: the run folder's name %s is too long "
                         "for a line of its config.ini (198 characters with experiment.run_id "
                         "and '='): fewer keys or shorter values", s->path, run->id);
    }
    if (!s_blame_line(s, err->msg, sizeof err->msg)) {
        error was = *err;
        if (snprintf(err->msg, sizeof err->msg, "%s: the run %s: %s", s->path, run->id,
                     was.msg) >= (int)sizeof err->msg) {
            err->msg[sizeof err->msg - 1] = '\0';   /* cut, as any long message is */
        }
    }
    err->status = ERROR_USAGE;
    return -1;
}

bool sweep_complete(const char *dir)
{
    char path[5600];
    snprintf(path, sizeof path, "%s/summary.json", dir);
    cJSON *j = run_read_json(path);
    bool done = j && cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(j, "complete"));
    cJSON_Delete(j);
    return done;
}

/* Prints the lines of warnings not printed before (they repeat run after
 * run of a grid), a grid value's as the sweep file's line. */
static void s_warn_once(const sweep *s, char *printed, size_t n, const char *warnings)
{
    const char *line = warnings;
    while (*line) {
        size_t len = strcspn(line, "\n");
        char one[1200];
        snprintf(one, sizeof one, "%.*s", (int)len, line);
        size_t said = strncmp(one, "asgd: ", 6) == 0 ? 6 : 0;
        s_blame_line(s, one + said, sizeof one - said - 1);
        strcat(one, "\n");
        if (!strstr(printed, one)) {
            fputs(one, stderr);
            size_t used = strlen(printed);
            snprintf(printed + used, n - used, "%s", one);
        }
        line += len + (line[len] == '\n');
    }
}

/* A run's resolved config, hashed. */
typedef struct run_print {
    uint64_t fingerprint;
    int run;
    uint32_t read;            /* bit k: the run reads grid key k */
} run_print;

static int s_by_print(const void *a, const void *b)
{
    const run_print *x = a, *y = b;
    return x->fingerprint != y->fingerprint ? (x->fingerprint < y->fingerprint ? -1 : 1)
                                            : x->run - y->run;
}

/* -1 naming the grid line where two runs of prints (s->nruns) resolve to
 * one config through values both read: two spellings of one value
 * ("false, no", "0.05, 5e-2") ran one experiment under several labels,
 * counted as several. (Runs that differ in a key they do not read, an
 * mlp's hidden sizes over softmax, are the grid's product: they run.) */
static int s_check_same(const sweep *s, run_print *prints, error *err)
{
    qsort(prints, (size_t)s->nruns, sizeof *prints, s_by_print);
    for (int i = 1; i < s->nruns; i++) {
        if (prints[i].fingerprint != prints[i - 1].fingerprint) {
            continue;
        }
        const sweep_run *a = &s->runs[prints[i - 1].run], *b = &s->runs[prints[i].run];
        uint32_t differ = 0;
        for (int k = 0; k < s->nkeys; k++) {   /* overrides[k] is key k's value */
            differ |= (uint32_t)(strcmp(a->overrides[k], b->overrides[k]) != 0) << k;
        }
        if (differ & ~(prints[i - 1].read & prints[i].read)) {
            continue;
        }
        for (int k = 0; k < s->nkeys; k++) {
            if (differ & 1u << k) {
                return error_set(err, ERROR_USAGE, "%s:%d: [grid] %s: %s and %s are one value "
                                 "(the runs %s and %s resolve to the same config)", s->path,
                                 s->keys[k].line, s->keys[k].key,
                                 strchr(a->overrides[k], '=') + 1,
                                 strchr(b->overrides[k], '=') + 1, a->id, b->id);
            }
        }
    }
    return 0;
}

/* The base's [experiment] keys that a sweep sets in every run (seed,
 * name, out, run_id): said where the base gives them, with what replaces
 * them (a base's seed = 42 ran as seeds 1, 2 and 3 without a word). */
static void s_warn_base_replaced(const sweep *s)
{
    error err = {0};
    config *c = config_load(s->base, &err);
    if (!c) {
        return;   /* the runs' own configure says why */
    }
    char seeds[512] = "";
    for (int i = 0, n = 0; i < s->nseeds && n < (int)sizeof seeds - 24; i++) {
        n += snprintf(seeds + n, sizeof seeds - (size_t)n, "%s%ld", i ? ", " : "", s->seeds[i]);
    }
    const char *keys[] = {"seed", "name", "out", "run_id"};
    const char *by[] = {"[sweep] seeds", "[sweep] name", "[sweep] out", "its grid values"};
    const char *now[] = {seeds, s->name, s->out, NULL};
    for (int i = 0; i < 4; i++) {
        if (!config_value(c, "experiment", keys[i])) {
            continue;
        }
        error why;
        config_fail(c, "experiment", keys[i], &why, "not used by a sweep, which sets it in "
                    "every run from %s%s%s%s", by[i], now[i] ? " (" : "", now[i] ? now[i] : "",
                    now[i] ? ")" : "");
        fprintf(stderr, "asgd: %s\n", why.msg);
    }
    config_destroy(&c);
}

/* Each of s's runs made and checked, its fingerprint into prints. */
static int s_make_runs(sweep *s, run_print *prints, error *err)
{
    static char printed[8192];
    bool read[SWEEP_MAX_KEYS] = {false};   /* by some run */
    s_warn_base_replaced(s);
    for (int r = 0; r < s->nruns; r++) {
        sweep_run *run = &s->runs[r];
        int rest = r, len = 0;
        char arg[4400];
        /* seed varies fastest, then the last key, ..., the first key slowest */
        long seed = s->seeds[rest % s->nseeds];
        rest /= s->nseeds;
        int pick[SWEEP_MAX_KEYS];
        for (int k = s->nkeys - 1; k >= 0; k--) {
            pick[k] = rest % s->keys[k].count;
            rest /= s->keys[k].count;
        }
        for (int k = 0; k < s->nkeys; k++) {
            const char *v = s->keys[k].values[pick[k]];
            len += snprintf(run->id + len, sizeof run->id - (size_t)len, "%s=%s,",
                            s->keys[k].key, v);
            if (len >= (int)sizeof run->id - 32) {
                return error_set(err, ERROR_USAGE, "%s:%d: [grid] %s: the run folder's name "
                                 "grows past %zu characters", s->path, s->keys[k].line,
                                 s->keys[k].key, sizeof run->id - 32);
            }
            snprintf(arg, sizeof arg, "%s=%s", s->keys[k].key, v);
            run->overrides[run->noverrides++] = strdup(arg);
        }
        snprintf(run->id + len, sizeof run->id - (size_t)len, "seed=%ld", seed);
        const char *fixed[4] = {"experiment.seed", "experiment.name", "experiment.out",
                                "experiment.run_id"};
        char values[4][4200];
        snprintf(values[0], sizeof values[0], "%ld", seed);
        snprintf(values[1], sizeof values[1], "%s", s->name);
        snprintf(values[2], sizeof values[2], "%s", s_from_here(s->out));
        snprintf(values[3], sizeof values[3], "%s", run->id);
        for (int i = 0; i < 4; i++) {
            snprintf(arg, sizeof arg, "%s=%.4200s", fixed[i], values[i]);
            run->overrides[run->noverrides++] = strdup(arg);
        }
        snprintf(run->dir, sizeof run->dir, "%s/%s/%s", s->out, s->name, run->id);
        experiment e;
        if (experiment_configure(&e, s->base, run->noverrides, run->overrides, NULL, err) < 0) {
            return s_blame(s, run, err);
        }
        /* what asgd train checks before a run starts, checked before any
         * starts: the data's sizes, the model against them, a round's
         * epochs, a label-skew split (found after runs had run, exit 1) */
        if (backend_check(&e.backend, e.c, err) < 0 || experiment_check(&e, err) < 0 ||
            experiment_check_training(&e, err) < 0) {
            experiment_destroy(&e);
            return s_blame(s, run, err);
        }
        s_warn_once(s, printed, sizeof printed, e.warnings);
        prints[r] = (run_print){.fingerprint = config_fingerprint(e.c, "experiment", "run_id"),
                                .run = r};
        for (int k = 0; k < s->nkeys; k++) {
            char section[128];
            const char *dot = strchr(s->keys[k].key, '.');
            snprintf(section, sizeof section, "%.*s",
                     (int)(dot ? dot - s->keys[k].key : 0), s->keys[k].key);
            bool used = dot && config_used(e.c, section, dot + 1);
            read[k] = read[k] || used;
            prints[r].read |= (uint32_t)used << k;
            if (used && !s->keys[k].bars && s->keys[k].count > 1 &&
                config_read_as_list(e.c, section, dot + 1)) {   /* 64,32: two runs, or one? */
                char said[800];
                snprintf(said, sizeof said, "asgd: %s:%d: [grid] %s takes a list: its %d values "
                         "between commas are %d runs of one item each (to sweep lists, put "
                         "them between '|': 64,32 | 128,64)\n", s->path, s->keys[k].line,
                         s->keys[k].key, s->keys[k].count, s->keys[k].count);
                s_warn_once(s, printed, sizeof printed, said);
            }
        }
        run->weight = s_weight(&e);
        run->complete = sweep_complete(run->dir);
        if (run->complete && sweep_resolved_matches(run->dir, e.c, err) < 0) {
            experiment_destroy(&e);
            return -1;
        }
        experiment_destroy(&e);
    }
    for (int k = 0; k < s->nkeys; k++) {   /* its values would make copies of one run */
        if (!read[k] && s->keys[k].count > 1) {
            return error_set(err, ERROR_USAGE, "%s:%d: [grid] %s: no run of this grid reads "
                             "it (not used by this configuration), so its %d values would "
                             "run the same config %d times", s->path, s->keys[k].line,
                             s->keys[k].key, s->keys[k].count, s->keys[k].count);
        }
    }
    return 0;
}

/* The product of the grid times the seeds, each run checked. */
static int s_expand(sweep *s, error *err)
{
    long total = s->nseeds;
    for (int k = 0; k < s->nkeys && total <= SWEEP_MAX_RUNS; k++) {
        total *= s->keys[k].count;
    }
    if (total > SWEEP_MAX_RUNS) {
        return error_set(err, ERROR_USAGE, "%s: a grid of more than %d runs", s->path,
                         SWEEP_MAX_RUNS);
    }
    s->runs = calloc((size_t)total, sizeof *s->runs);
    run_print *prints = calloc((size_t)total, sizeof *prints);
    if (!s->runs || !prints) {
        free(prints);
        return error_set(err, ERROR_RUNTIME, "out of memory");
    }
    s->nruns = (int)total;
    int rc = s_make_runs(s, prints, err) < 0 || s_check_same(s, prints, err) < 0 ? -1 : 0;
    free(prints);
    return rc;
}

int sweep_read(sweep *s, const char *path, error *err)
{
    memset(s, 0, sizeof *s);
    s->path = path;
    return s_read(s, err) < 0 || s_expand(s, err) < 0 ? -1 : 0;
}
